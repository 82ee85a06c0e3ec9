256 SHA256:h7t6D7rjlXc5i79G2JRUHYcsSU2v9KO8tfR+pCGmK3M longhaul ed25519 encrypted (ED25519)
256 MD5:9d:91:96:71:d9:aa:93:f9:7a:db:e4:d7:d2:2e:41:6a longhaul ed25519 encrypted (ED25519)
