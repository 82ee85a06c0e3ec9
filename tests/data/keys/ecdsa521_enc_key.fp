521 SHA256:K5RMpTOP+HiWjb5PFm9DPeROuJSuHngCI+Oa0Te8sBQ longhaul ecdsa521 encrypted (ECDSA)
521 MD5:c6:fc:33:d2:64:1d:0a:ca:53:f3:2a:1a:b3:9d:f3:1b longhaul ecdsa521 encrypted (ECDSA)
