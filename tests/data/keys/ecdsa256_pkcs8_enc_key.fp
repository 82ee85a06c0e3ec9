256 SHA256:Il8tp1PrKOqRHUV6/mN8D6j3aYev5LK4FTrg3tbJyPQ no comment (ECDSA)
256 MD5:79:ec:17:1f:6c:49:29:fd:4c:d3:8a:22:29:a1:a3:bc no comment (ECDSA)
