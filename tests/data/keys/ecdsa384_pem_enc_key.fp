384 SHA256:TrwO8Xdr6j6Dm4wS3BL043SlbjoLVvK5AFzFE3DAMc4 no comment (ECDSA)
384 MD5:90:13:e1:a8:8c:e9:0b:b6:86:a3:ee:79:e3:a0:66:f0 no comment (ECDSA)
