256 SHA256:ntwNWR5WzR7AjlIEkq2PVG1KjEgfRyG5efSZB05bY8E no comment (ECDSA)
256 MD5:4e:f5:8d:e6:56:de:14:52:a6:2f:5c:45:7e:bd:00:27 no comment (ECDSA)
