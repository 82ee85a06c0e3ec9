384 SHA256:0I+anGPwiMyo2F3enYIoYbzgdZa+8PA8dkn8Xp4vz14 no comment (ECDSA)
384 MD5:46:4a:e0:2a:56:35:dd:ae:4d:d1:c9:67:ae:fe:bf:8e no comment (ECDSA)
