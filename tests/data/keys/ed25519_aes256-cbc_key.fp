256 SHA256:gD+E+zxLx5RrWzIupgJDYlYubUlgTxTWI7DmpZ7DtCk cipher aes256-cbc (ED25519)
256 MD5:5c:e8:c8:66:4b:83:76:66:d6:1d:01:34:63:f1:72:6c cipher aes256-cbc (ED25519)
