521 SHA256:ORjVy3hPoJEPVZcRtVIFHC/gA6ohl2CGKNYu7f4NI5E no comment (ECDSA)
521 MD5:b1:6a:86:36:8d:9d:d2:ea:0a:5c:81:c9:cf:b4:9d:2f no comment (ECDSA)
