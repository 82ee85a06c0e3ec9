384 SHA256:Op2wmuphLR5TdQOqwTp/GKvnQPpNEG1ESUVaqV8Xuj0 longhaul ecdsa384 encrypted (ECDSA)
384 MD5:83:05:aa:cd:e8:67:d6:c5:ef:dd:18:eb:e7:21:ce:39 longhaul ecdsa384 encrypted (ECDSA)
