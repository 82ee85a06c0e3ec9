521 SHA256:V7c8D6uGBH995qhxPksIy2ovR1LEyQ1wuHycmnsTiEQ longhaul ecdsa521 plain (ECDSA)
521 MD5:24:40:30:22:2d:81:ca:95:d2:11:f3:44:f8:57:87:e5 longhaul ecdsa521 plain (ECDSA)
