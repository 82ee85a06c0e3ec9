256 SHA256:d+4w8a6pjUcMyhJi8YZf1cuW5MgxEaN1w//lEHfBES4 cipher aes192-ctr (ED25519)
256 MD5:7c:e0:7b:07:96:ce:9e:2e:94:77:08:8c:9e:8d:2d:bf cipher aes192-ctr (ED25519)
