256 SHA256:kLuQ+szwj6FJt3G3GC8bartzNZMpuINpvf9nTWSIN8A no comment (ECDSA)
256 MD5:32:06:86:3b:94:0e:ae:88:cb:b0:bf:94:c2:3c:a6:9d no comment (ECDSA)
