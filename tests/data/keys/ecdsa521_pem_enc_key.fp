521 SHA256:yCnlOQ+7Zc5SAx61/a6/DNNyUgaFDy3U8V5GDlvGis4 no comment (ECDSA)
521 MD5:8f:34:c6:cc:bf:74:ab:04:de:0f:0d:c1:46:44:b0:c5 no comment (ECDSA)
