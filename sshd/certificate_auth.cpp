#include "sshd/certificate_auth.hpp"

#include "common/auth/auth_common.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/keys/key_lines.hpp"
#include "common/name_list.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <utility>

namespace longhaul {

namespace {

void cert_note(std::vector<log_message>& log, syslog_level level, std::string text)
{
    log.push_back({level, std::move(text)});
}

// A critical option's value: exactly one string, as OpenSSH reads it.
std::optional<std::string> option_string(const certificate_option& o, std::vector<log_message>& log)
{
    wire_reader r(o.data);
    const std::string_view value = r.text(o.data.size());
    if (!r.ok()) {
        cert_note(log, syslog_level::error, "Unable to parse \"" + o.name + "\" section: invalid format");
        return std::nullopt;
    }
    if (!r.finish()) {
        cert_note(log, syslog_level::error, "Certificate option \"" + o.name + "\" corrupt (extra data)");
        return std::nullopt;
    }
    return std::string(value);
}

// Names the key a CA line or certificate log line shows ("ED25519 SHA256:...").
std::string ca_description(const public_key& key, fingerprint_hash hash)
{
    return std::string(key_type_short_name(key.type())) + " " + key_fingerprint(key, hash);
}

// OpenSSH's match_list(principal, principals=): any comma-separated name of
// the one in the other, compared exactly.
bool principal_in_list(std::string_view principal, std::string_view list)
{
    for (auto name : split_name_list(principal))
        for (auto allowed : split_name_list(list))
            if (!name.empty() && name == allowed)
                return true;
    return false;
}

std::string certificate_id(const certificate& cert)
{
    // (Built up in place: GCC 12 warns, wrongly, of "literal" + temporary.)
    std::string id = "\"";
    id += sanitize_peer_text(cert.key_id(), false);
    id += "\" (serial " + std::to_string(cert.serial()) + ")";
    return id;
}

} // namespace

std::optional<authorized_key_options> certificate_options(const certificate& cert, std::vector<log_message>& log)
{
    // Nothing is allowed but what the certificate grants.
    authorized_key_options o;
    o.permit_port_forwarding = o.permit_agent_forwarding = o.permit_x11_forwarding = false;
    o.permit_pty = o.permit_user_rc = false;
    if (auto unknown = unknown_critical_option(cert)) {
        cert_note(log, syslog_level::error,
            "Certificate critical option \"" + sanitize_peer_text(*unknown, false) + "\" is not supported");
        return std::nullopt;
    }
    bool have_command = false, have_source = false;
    for (const auto& opt : cert.fields().critical_options) {
        // PIN or biometric verification of a security key's signature
        // (sk_policy); no data, as OpenSSH requires of a flag option.
        if (opt.name == "verify-required") {
            if (!opt.data.empty()) {
                cert_note(log, syslog_level::error, "Certificate option \"verify-required\" corrupt (extra data)");
                return std::nullopt;
            }
            o.verify_required = true;
            continue;
        }
        auto value = option_string(opt, log);
        if (!value)
            return std::nullopt;
        // A CA may write an option twice (ssh-keygen -s -O force-command=a
        // -O critical:force-command=b); which one holds would be a guess.
        if (opt.name == "force-command") {
            if (std::exchange(have_command, true)) {
                cert_note(log, syslog_level::error, "Certificate has multiple force-command options");
                return std::nullopt;
            }
            o.force_command = std::move(*value);
        } else if (opt.name == "source-address") {
            if (std::exchange(have_source, true)) {
                cert_note(log, syslog_level::error, "Certificate has multiple source-address options");
                return std::nullopt;
            }
            if (match_cidr_list("", *value) < 0) {
                cert_note(log, syslog_level::error, "Certificate source-address contents invalid");
                return std::nullopt;
            }
            o.required_from_cert = std::move(*value);
        }
    }
    for (const auto& ext : cert.fields().extensions) {
        const std::string& n = ext.name;
        if (n == "permit-X11-forwarding")
            o.permit_x11_forwarding = true;
        else if (n == "permit-agent-forwarding")
            o.permit_agent_forwarding = true;
        else if (n == "permit-port-forwarding")
            o.permit_port_forwarding = true;
        else if (n == "permit-pty")
            o.permit_pty = true;
        else if (n == "permit-user-rc")
            o.permit_user_rc = true;
        else if (n == "no-touch-required")
            o.no_touch_required = true;
        else // an extension only grants: one not understood grants nothing
            cert_note(log, syslog_level::info,
                      "Certificate extension \"" + sanitize_peer_text(n, false) + "\" is not supported");
    }
    return o;
}

std::optional<authorized_key_match> check_certificate_authority_line(const certificate& cert,
                                                                     const authorized_key_options& line_options,
                                                                     const std::string& loc,
                                                                     const authorized_keys_context& ctx,
                                                                     std::vector<log_message>& log)
{
    const std::string ca = ca_description(cert.signature_key(), fingerprint_hash::sha256);
    cert_note(log, syslog_level::debug1, loc + ": matching CA found: " + ca);
    auto refuse = [&](std::string reason) -> std::optional<authorized_key_match> {
        cert_note(log, syslog_level::error, std::move(reason));
        return std::nullopt;
    };
    if (!authorise_key_options(line_options, true, loc, ctx, log))
        return refuse("Refused by key options");
    auto cert_options = certificate_options(cert, log);
    if (!cert_options)
        return refuse("Invalid certificate options");
    if (!authorise_key_options(*cert_options, false, loc, ctx, log))
        return refuse("Refused by certificate options");
    authorized_key_match line;
    line.location = loc;
    line.options = line_options;
    line.environment = permitted_user_environment(line_options.environment, ctx.permit_user_environment,
                                                  ctx.permit_user_environment_patterns);
    authorized_key_match from_cert;
    from_cert.location = loc;
    from_cert.options = *cert_options;
    std::string error;
    auto merged = merge_key_options(line, from_cert, error);
    if (!merged)
        return refuse(error);
    // principals="..." replaces the user's name as what must be certified.
    if (line_options.principals &&
        std::none_of(cert.principals().begin(), cert.principals().end(),
                     [&](const std::string& p) { return principal_in_list(p, *line_options.principals); }))
        return refuse("Certificate does not contain an authorized principal");
    const auto now = static_cast<std::uint64_t>(ctx.now);
    if (auto reason = check_authority(cert, false, false, now, line_options.principals ? "" : ctx.user))
        return refuse(*reason);
    cert_note(log, syslog_level::verbose,
        "Accepted certificate ID " + certificate_id(cert) + " signed by CA " + ca + " found at " + loc);
    merged->location = loc;
    return merged;
}

std::optional<principals_match> check_authorized_principals(std::string_view contents, std::string_view source,
                                                            const certificate& cert, std::vector<log_message>& log)
{
    std::optional<principals_match> found;
    std::size_t line_number = 0;
    while (!contents.empty()) {
        const auto nl = contents.find('\n');
        std::string_view line = contents.substr(0, nl);
        contents = nl == std::string_view::npos ? std::string_view{} : contents.substr(nl + 1);
        ++line_number;
        if (found) // every line is read, the first match counts
            continue;
        // A '#' anywhere starts a comment; blanks around are not part of it.
        line = line.substr(0, line.find('#'));
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string_view::npos)
            continue;
        line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
        const std::string loc = std::string(source.substr(0, 200)) + ":" + std::to_string(line_number);
        // Internal whitespace: options, then the principal after the last blank.
        std::string_view options;
        std::string_view principal = line;
        if (const auto blank = line.find_last_of(" \t"); blank != std::string_view::npos) {
            principal = line.substr(blank + 1);
            options = line.substr(0, line.find_last_not_of(" \t", blank) + 1);
        }
        std::string reason;
        auto opts = parse_authorized_key_options(options, reason);
        if (!opts) {
            cert_note(log, syslog_level::debug1, loc + ": bad principals options: " + reason);
            continue;
        }
        for (const auto& p : cert.principals()) {
            if (p != principal)
                continue;
            cert_note(log, syslog_level::debug3,
                      loc + ": matched principal \"" + sanitize_peer_text(p.substr(0, 100), false) + "\"");
            found = principals_match{loc, std::move(*opts)};
            break;
        }
    }
    return found;
}

bool ca_key_listed(std::string_view contents, const public_key& ca)
{
    while (!contents.empty()) {
        const auto nl = contents.find('\n');
        const std::string_view line = contents.substr(0, nl);
        contents = nl == std::string_view::npos ? std::string_view{} : contents.substr(nl + 1);
        if (is_blank_or_comment(line))
            continue;
        std::string_view trimmed = line.substr(line.find_first_not_of(" \t"));
        auto parsed = parse_public_key_line(trimmed);
        if (parsed && parsed->key == ca)
            return true;
    }
    return false;
}

authorized_keys_result check_trusted_user_ca(const certificate& cert, std::string_view ca_keys_path,
                                             bool use_principals, const std::optional<principals_match>& principal,
                                             const authorized_keys_context& ctx)
{
    authorized_keys_result r;
    auto refuse = [&](std::string reason) {
        cert_note(r.log, syslog_level::error, std::move(reason));
        return r;
    };
    if (use_principals && !principal)
        return refuse("Certificate does not contain an authorized principal");
    const auto now = static_cast<std::uint64_t>(ctx.now);
    if (auto reason = check_authority(cert, false, true, now, use_principals ? "" : ctx.user))
        return refuse(*reason);
    auto cert_options = certificate_options(cert, r.log);
    if (!cert_options)
        return refuse("Invalid certificate options");
    if (!authorise_key_options(*cert_options, false, "cert", ctx, r.log))
        return refuse("Refused by certificate options");
    authorized_key_match from_cert;
    from_cert.location = std::string(ca_keys_path);
    from_cert.options = std::move(*cert_options);
    authorized_key_match result = from_cert;
    if (principal) {
        if (!authorise_key_options(principal->options, false, "principals", ctx, r.log))
            return refuse("Refused by certificate principals options");
        authorized_key_match line;
        line.location = principal->location;
        line.options = principal->options;
        line.environment = permitted_user_environment(principal->options.environment, ctx.permit_user_environment,
                                                      ctx.permit_user_environment_patterns);
        std::string error;
        auto merged = merge_key_options(line, from_cert, error);
        if (!merged)
            return refuse(error);
        result = std::move(*merged);
    }
    cert_note(r.log, syslog_level::verbose,
        "Accepted certificate ID " + certificate_id(cert) + " signed by " +
            std::string(key_type_short_name(cert.signature_key().type())) + " CA " +
            key_fingerprint(cert.signature_key(), ctx.fingerprint) + " via " + std::string(ca_keys_path));
    result.location = std::string(ca_keys_path);
    r.match = std::move(result);
    return r;
}

presented_key parse_presented_key(byte_span blob)
{
    presented_key p;
    auto cert = certificate::from_blob(blob);
    if (cert) {
        p.key = cert->key();
        p.cert = std::move(*cert);
    } else if (cert.error() == errc::unsupported) { // not a certificate type
        if (auto key = public_key::from_blob(blob))
            p.key = std::move(*key);
    }
    return p;
}

bool key_type_accepted(std::string_view accepted, key_type type, bool cert)
{
    for (std::string_view alg : split_name_list(accepted)) {
        if (is_certificate_algorithm(alg) != cert)
            continue;
        const auto plain = cert ? certificate_signature_algorithm(alg) : std::optional(alg);
        if (auto t = plain ? key_type_for_signature_algorithm(*plain) : result<key_type>(errc::unsupported);
            t && *t == type)
            return true;
    }
    return false;
}

} // namespace longhaul
