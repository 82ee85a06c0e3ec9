256 SHA256:/r4Cvic6Ob2aoqTXjP5Sl241unL/8qWedv9JiOTFqjA cipher aes128-gcm@openssh.com (ED25519)
256 MD5:7f:86:47:f1:5c:7c:73:d7:15:9c:30:50:a2:25:ce:9f cipher aes128-gcm@openssh.com (ED25519)
