256 SHA256:5PbtBiqFkQd/3yNUf0fJmMApnx5eXvbBBziuLa3wA8w longhaul ed25519 plain (ED25519)
256 MD5:3c:03:f2:df:42:36:d8:64:c0:5c:a8:84:45:72:30:69 longhaul ed25519 plain (ED25519)
