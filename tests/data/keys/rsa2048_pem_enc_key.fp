2048 SHA256:v3wjy5rW8LnXjL1sZLd566aAmh5pTE5iuA038DIOBTw no comment (RSA)
2048 MD5:db:8b:0e:f1:c6:7b:76:7f:81:f9:39:07:e6:0e:ae:2f no comment (RSA)
