256 SHA256:2Ddspj4Tf6qdT9JJB624q6aoYclxwjpbtIGnLZX5EUc cipher aes128-ctr (ED25519)
256 MD5:14:1e:55:86:f8:ac:ab:b7:5f:dd:07:94:79:64:23:1a cipher aes128-ctr (ED25519)
