256 SHA256:+eWpjxtgTwPxis3GpltsJfVocaG5DTAlwUFXloG6LE0 longhaul ecdsa256 plain (ECDSA)
256 MD5:26:9e:ca:fc:48:96:13:f8:9d:86:67:19:12:5c:fe:42 longhaul ecdsa256 plain (ECDSA)
