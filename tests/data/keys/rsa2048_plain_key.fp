2048 SHA256:h5ajFq3ywFT051UWUUcOGc/xgXG637PSCL9aLOd/A88 longhaul rsa2048 plain (RSA)
2048 MD5:b1:04:2e:0f:c6:70:d5:2e:b9:8a:75:e3:f0:7e:b3:a2 longhaul rsa2048 plain (RSA)
