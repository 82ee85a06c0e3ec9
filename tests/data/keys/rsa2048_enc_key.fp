2048 SHA256:PSvqi8AzY51tZLXsMSpbu3Pg1B8Cz2fePTj9KIQLFMQ longhaul rsa2048 encrypted (RSA)
2048 MD5:0e:79:66:8f:a3:63:bc:21:e1:bd:9b:0b:49:8a:7d:49 longhaul rsa2048 encrypted (RSA)
