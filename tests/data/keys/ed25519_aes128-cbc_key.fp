256 SHA256:GNdLQ+6lIC+QPkhgZTNeXcqLyVxN/1cmv4oXJXazwyQ cipher aes128-cbc (ED25519)
256 MD5:18:93:39:69:c9:72:b2:04:c7:50:48:3e:90:9c:3a:46 cipher aes128-cbc (ED25519)
