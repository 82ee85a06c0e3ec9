384 SHA256:sEuiivpy5cAtVhI3Zji21BXS4Neh78TIwl9zfnWE45M longhaul ecdsa384 plain (ECDSA)
384 MD5:bd:e5:81:d8:de:e3:f6:0d:ba:93:82:b9:d1:72:89:af longhaul ecdsa384 plain (ECDSA)
