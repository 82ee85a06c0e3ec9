// sshd's RevokedKeys check (OpenSSH's auth_key_is_revoked): made before
// every publickey decision, the query without a signature and the
// signature alike, with the file read afresh each time.
#pragma once

#include "common/keys/certificate.hpp"
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

// The same for a user certificate (sshkey_check_revoked on a certificate):
// a KRL revokes it by serial or key ID in a section of its CA (or of any
// CA), or by its certified key; a key list by its certified key or its CA's
// key. Logged with the certificate's name, "Authentication key
// ED25519-CERT SHA256:<certified key> revoked by file PATH". The caller
// checks the CA's key on its own as well (check_revoked_key), as OpenSSH.
revoked_key_result check_revoked_certificate(const std::string& path, const certificate& cert, fingerprint_hash hash);

} // namespace longhaul
