521 SHA256:Hslfl8eZ+U8hmTp/OBW29HvBQwSFcDvfR/V7XStaxrM no comment (ECDSA)
521 MD5:47:84:f8:76:05:d6:57:12:61:fe:74:e6:ad:37:90:e0 no comment (ECDSA)
