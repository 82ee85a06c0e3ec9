// Checking a key against a revoked keys file on disk, as sshd does for
// RevokedKeys and ssh for RevokedHostKeys (OpenSSH's sshkey_check_revoked):
// the file is read whole on every check, so edits take effect at once, and
// a file that cannot be read or parsed revokes every key (fails closed).
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"

#include <cstddef>
#include <string>

namespace longhaul {

// OpenSSH's largest buffer (SSHBUF_SIZE_MAX); a larger file is refused.
inline constexpr std::size_t max_revocation_file_size = 128u << 20;

struct revocation_check {
    enum class status { not_revoked, revoked, error };
    status result = status::error;
    // For error: why, in OpenSSH's words (strerror() for a file that cannot
    // be read, ssh_err() otherwise).
    std::string reason;
};

revocation_check check_revocation_file(const std::string& path, const public_key& key);
// The same for a certificate (revocation_list::revoked(const certificate&)).
revocation_check check_revocation_file(const std::string& path, const certificate& cert);

} // namespace longhaul
