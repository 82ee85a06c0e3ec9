256 SHA256:KTMDrpm6ImmIHuhhhcCe5MjcPfRvVts8EeCDOKXP/78 cipher aes256-gcm@openssh.com (ED25519)
256 MD5:68:b6:79:4c:1e:b4:4d:48:48:27:31:5a:f7:19:3c:ca cipher aes256-gcm@openssh.com (ED25519)
