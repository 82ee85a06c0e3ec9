3072 SHA256:kZNzNaHmF/wTCq6crv5VxJ8j+rBD37YRYpxpidrWJBM longhaul rsa3072 encrypted (RSA)
3072 MD5:ea:db:94:61:a2:3a:db:3a:8f:35:e3:04:34:8b:af:bc longhaul rsa3072 encrypted (RSA)
