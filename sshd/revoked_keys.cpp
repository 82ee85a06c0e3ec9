#include "sshd/revoked_keys.hpp"

#include "common/keys/fingerprint.hpp"
#include "common/keys/revocation_file.hpp"

namespace longhaul {

namespace {

revoked_key_result revocation_report(const revocation_check& check, const std::string& path, const std::string& what)
{
    revoked_key_result out;
    if (check.result == revocation_check::status::not_revoked)
        return out;
    out.refused = true;
    if (check.result == revocation_check::status::revoked)
        out.log.push_back({syslog_level::error, "Authentication key " + what + " revoked by file " + path});
    else
        out.log.push_back({syslog_level::error, "Error checking authentication key " + what +
                                                    " in revoked keys file " + path + ": " + check.reason});
    return out;
}

} // namespace

revoked_key_result check_revoked_certificate(const std::string& path, const certificate& cert, fingerprint_hash hash)
{
    return revocation_report(check_revocation_file(path, cert), path,
                             std::string(key_type_short_name(cert.key().type())) + "-CERT " +
                                 key_fingerprint(cert.key(), hash));
}

revoked_key_result check_revoked_key(const std::string& path, const public_key& key, fingerprint_hash hash)
{
    // sshkey_type(): the short name ("ED25519", "ECDSA", "RSA").
    return revocation_report(check_revocation_file(path, key), path,
                             std::string(key_type_short_name(key.type())) + " " + key_fingerprint(key, hash));
}

} // namespace longhaul
