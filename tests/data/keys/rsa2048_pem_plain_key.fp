2048 SHA256:KKCVu7eBVPbchqZZ6Mwu4ElxBRmwMBiUk7Z0Atec7Jw no comment (RSA)
2048 MD5:dc:e1:6f:1d:40:d7:20:e6:48:92:85:b4:8f:b5:15:91 no comment (RSA)
