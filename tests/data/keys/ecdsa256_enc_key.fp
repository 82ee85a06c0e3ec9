256 SHA256:mwgXNGdwD9fY4iSoIlT71TfhZdEbAYZKTrkdrEpD7EY longhaul ecdsa256 encrypted (ECDSA)
256 MD5:df:db:b7:f4:51:0f:5c:5b:1d:b2:a4:1e:67:b6:08:b6 longhaul ecdsa256 encrypted (ECDSA)
