2048 SHA256:QNO6KE35L/YJzKYQ4qY6SQohoumSSzN3TcsnGTr+X80 no comment (RSA)
2048 MD5:d7:f1:b5:2b:50:71:9e:2d:ee:45:85:ae:8d:70:95:64 no comment (RSA)
