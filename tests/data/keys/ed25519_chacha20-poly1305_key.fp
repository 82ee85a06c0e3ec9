256 SHA256:Q2DWS7k36X2nasoDruCECi3V7Oqm8aLks3UxI88eVQA cipher chacha20-poly1305@openssh.com (ED25519)
256 MD5:c8:91:33:29:68:50:19:ee:93:2b:dd:ca:88:ce:31:ad cipher chacha20-poly1305@openssh.com (ED25519)
