#include "ssh/host_key_check_cert.hpp"

#include "common/match.hpp" // match_pattern_list: CASignatureAlgorithms
#include "common/text.hpp"
#include "common/keys/revocation_file.hpp"
#include "ssh/known_hosts.hpp"

namespace longhaul {

std::string certificate_type_label(const certificate& cert)
{
    return std::string(key_type_short_name(cert.key().type())) + "-CERT";
}

std::string certificate_validity_text(const certificate& cert)
{
    const auto after = cert.fields().valid_after;
    const auto before = cert.fields().valid_before;
    if (after == 0 && before == UINT64_MAX)
        return "forever";
    if (after == 0)
        return "before " + certificate_time(before, false);
    if (before == UINT64_MAX)
        return "after " + certificate_time(after, true);
    return "from " + certificate_time(after, true) + " to " + certificate_time(before, false);
}

std::string server_host_certificate_line(const certificate& cert, key_fingerprint_hash hash)
{
    return "Server host certificate: " + std::string(cert.type_name()) + " " + key_fingerprint_text(cert.key(), hash) +
           ", serial " + std::to_string(cert.serial()) + " ID \"" + printable(cert.key_id()) + "\" CA " +
           std::string(cert.signature_key().type_name()) + " " + key_fingerprint_text(cert.signature_key(), hash) +
           " valid " + certificate_validity_text(cert);
}

std::optional<host_certificate_problem> check_host_certificate(const certificate& cert, std::string_view host,
                                                               std::string_view ca_signature_algorithms,
                                                               std::uint64_t now)
{
    // Principals compare exactly: OpenSSH 9.2's ssh takes no wildcard in a
    // host certificate ("127.0.0.*" does not name 127.0.0.1; checked
    // against Debian's ssh).
    if (auto why = check_authority(cert, true, false, now, host))
        return host_certificate_problem{log_level::error, *why};
    if (!cert.fields().critical_options.empty())
        return host_certificate_problem{log_level::error, "Certificate for " + std::string(host) +
                                                              " contains unsupported critical options(s)"};
    if (match_pattern_list(cert.signature_algorithm(), ca_signature_algorithms, false) != list_match::positive)
        return host_certificate_problem{log_level::error, "Certificate signed with disallowed algorithm"};
    return std::nullopt;
}

revocation_check check_certificate_revocation(const std::string& path, const certificate& cert)
{
    // The certificate (its key, its serial or key ID under its CA), then
    // its CA's key, whichever format the file has.
    auto r = check_revocation_file(path, cert);
    if (r.result != revocation_check::status::not_revoked)
        return r;
    return check_revocation_file(path, cert.signature_key());
}

} // namespace longhaul
