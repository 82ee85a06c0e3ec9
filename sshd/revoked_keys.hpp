// sshd's RevokedKeys check (OpenSSH's auth_key_is_revoked): made before
// every publickey decision, the query without a signature and the
// signature alike, with the file read afresh each time.
#pragma once

#include "common/keys/public_key.hpp"
#include "sshd/sshd_config.hpp"

#include <string>
#include <vector>

namespace longhaul {

struct revoked_key_result {
    bool refused = false; // revoked, or the file could not be read or parsed
    std::vector<log_message> log;
};

// Checks `key` against the RevokedKeys file `path` (not "none", not
// empty). Logs at error level, as OpenSSH does:
//   "Authentication key ED25519 SHA256:... revoked by file PATH"
//   "Error checking authentication key ED25519 SHA256:... in revoked keys
//    file PATH: REASON" (then every key is refused: sshd fails closed)
revoked_key_result check_revoked_key(const std::string& path, const public_key& key, fingerprint_hash hash);

} // namespace longhaul
