#include "sshd/revoked_keys.hpp"

#include "common/keys/fingerprint.hpp"
#include "common/keys/revocation_file.hpp"

namespace longhaul {

revoked_key_result check_revoked_key(const std::string& path, const public_key& key, fingerprint_hash hash)
{
    revoked_key_result out;
    const auto check = check_revocation_file(path, key);
    if (check.result == revocation_check::status::not_revoked)
        return out;
    out.refused = true;
    // sshkey_type(): the short name ("ED25519", "ECDSA", "RSA").
    const std::string what = std::string(key_type_short_name(key.type())) + " " + key_fingerprint(key, hash);
    if (check.result == revocation_check::status::revoked)
        out.log.push_back({syslog_level::error, "Authentication key " + what + " revoked by file " + path});
    else
        out.log.push_back({syslog_level::error, "Error checking authentication key " + what +
                                                    " in revoked keys file " + path + ": " + check.reason});
    return out;
}

} // namespace longhaul
