384 SHA256:ru2OKtRYCvGqvMeNzgYIIVf/MbU9g4fj3IWsNaaaf28 no comment (ECDSA)
384 MD5:08:52:41:f1:7a:cf:5f:3a:94:c7:3b:6c:73:29:09:47 no comment (ECDSA)
