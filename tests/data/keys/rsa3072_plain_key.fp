3072 SHA256:aCBTrF1wgvTpdMWQCOh7y1laZCYgtiPoecdA7cVcymo longhaul rsa3072 plain (RSA)
3072 MD5:bc:54:5f:c6:ca:a3:cb:d6:29:ad:4d:8f:6f:25:59:74 longhaul rsa3072 plain (RSA)
