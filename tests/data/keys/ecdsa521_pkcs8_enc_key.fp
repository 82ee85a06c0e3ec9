521 SHA256:U+7m/JhENAJl7WPzxUqVCKEWr41rd1uJOH1A9/vjjqQ no comment (ECDSA)
521 MD5:3a:72:75:fe:f9:d0:07:0e:68:07:8e:fe:66:0f:f2:c2 no comment (ECDSA)
