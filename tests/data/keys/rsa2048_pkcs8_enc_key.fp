2048 SHA256:WLr94trb4nlbuY3hqEuChHtuWchXgqzBy2K2AQPCTgI no comment (RSA)
2048 MD5:2d:50:f8:79:6e:fd:22:5f:69:ed:82:75:cc:4a:c9:2f no comment (RSA)
