384 SHA256:tXui8Fd4MEv8IAWxfCQ6AXwaS3ebt/DO+Pd01H7G29c no comment (ECDSA)
384 MD5:5a:8b:cf:02:05:0b:a0:08:92:4d:57:47:9e:1f:fb:7c no comment (ECDSA)
