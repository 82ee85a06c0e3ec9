#include "common/keys/certificate.hpp"

#include "common/keys/private_key.hpp"
#include "common/random.hpp"
#include "common/text_parse.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <ctime>

namespace longhaul {

namespace {

struct cert_name {
    std::string_view name;
    key_type type;
};
constexpr cert_name cert_names[] = {
    {"ssh-ed25519-cert-v01@openssh.com", key_type::ed25519},
    {"ecdsa-sha2-nistp256-cert-v01@openssh.com", key_type::ecdsa_p256},
    {"ecdsa-sha2-nistp384-cert-v01@openssh.com", key_type::ecdsa_p384},
    {"ecdsa-sha2-nistp521-cert-v01@openssh.com", key_type::ecdsa_p521},
    {"ssh-rsa-cert-v01@openssh.com", key_type::rsa},
    {"sk-ssh-ed25519-cert-v01@openssh.com", key_type::sk_ed25519},
    {"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", key_type::sk_ecdsa_p256},
};

// Certificate algorithm <-> the plain signature algorithm it signs with.
constexpr std::pair<std::string_view, std::string_view> cert_algorithms[] = {
    {"ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519"},
    {"ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp256"},
    {"ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp384"},
    {"ecdsa-sha2-nistp521-cert-v01@openssh.com", "ecdsa-sha2-nistp521"},
    {"rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-512"},
    {"rsa-sha2-256-cert-v01@openssh.com", "rsa-sha2-256"},
    {"ssh-rsa-cert-v01@openssh.com", "ssh-rsa"},
    {"sk-ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519@openssh.com"},
    {"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com"},
};

// Largest key ID, principal and option name accepted (OpenSSH bounds them
// only by the blob; these leave room for any real one).
constexpr std::size_t max_cert_text = 4096;

result<std::vector<certificate_option>> read_options(byte_span packed)
{
    std::vector<certificate_option> out;
    wire_reader r(packed);
    while (r.ok() && r.remaining() > 0) {
        const auto name = r.text(max_cert_text);
        const auto data = r.string();
        if (!r.ok())
            return errc::invalid_format;
        // Neither order nor uniqueness is checked: OpenSSH's ssh-keygen
        // writes a name twice when told to (-O extension:permit-pty beside
        // the default set), and its sshd accepts the certificate. Whoever
        // reads an option decides what a repeated one means (sshd refuses
        // a second force-command or source-address, as OpenSSH does).
        out.push_back({std::string(name), bytes(data.begin(), data.end())});
    }
    if (!r.ok())
        return errc::invalid_format;
    return out;
}

void write_options(wire_writer& w, std::vector<certificate_option> options)
{
    std::stable_sort(options.begin(), options.end(),
              [](const certificate_option& a, const certificate_option& b) { return a.name < b.name; });
    bytes packed;
    wire_writer p(packed);
    for (const auto& o : options)
        p.string(o.name).string(o.data);
    w.string(packed);
}

// The key's fields after its name: what a certificate carries after the nonce.
byte_span key_fields(const public_key& key)
{
    wire_reader r(key.blob());
    (void)r.text();
    return r.rest();
}

std::string_view default_signature_algorithm(key_type t)
{
    return t == key_type::rsa ? std::string_view("rsa-sha2-512") : key_type_name(t);
}

} // namespace

std::string_view certificate_type_name(key_type t) noexcept
{
    for (const auto& c : cert_names)
        if (c.type == t)
            return c.name;
    return {};
}

std::optional<key_type> certificate_key_type(std::string_view name) noexcept
{
    for (const auto& c : cert_names)
        if (c.name == name)
            return c.type;
    return std::nullopt;
}

bool is_certificate_algorithm(std::string_view name) noexcept
{
    return certificate_signature_algorithm(name).has_value();
}

std::optional<std::string_view> certificate_signature_algorithm(std::string_view cert_alg) noexcept
{
    for (const auto& [cert, plain] : cert_algorithms)
        if (cert == cert_alg)
            return plain;
    return std::nullopt;
}

std::optional<std::string_view> certificate_algorithm_for(std::string_view sig_alg) noexcept
{
    for (const auto& [cert, plain] : cert_algorithms)
        if (plain == sig_alg)
            return cert;
    return std::nullopt;
}

std::vector<certificate_option> default_user_extensions()
{
    return {{"permit-X11-forwarding", {}},
            {"permit-agent-forwarding", {}},
            {"permit-port-forwarding", {}},
            {"permit-pty", {}},
            {"permit-user-rc", {}}};
}

result<certificate> certificate::from_blob(byte_span blob)
{
    if (blob.size() > max_certificate_blob)
        return errc::invalid_format;
    wire_reader r(blob);
    const auto name = r.text(64);
    if (!r.ok())
        return errc::invalid_format;
    const auto type = certificate_key_type(name);
    if (!type)
        return errc::unsupported;
    certificate c;
    const auto nonce = r.string(max_cert_text);
    c.fields_.nonce.assign(nonce.begin(), nonce.end());

    // The certified key: its fields, re-framed as a plain key blob.
    const std::size_t key_start = r.position();
    switch (*type) {
    case key_type::ed25519: (void)r.string(); break;
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521:
        (void)r.string();
        (void)r.string();
        break;
    case key_type::rsa:
        (void)r.mpint();
        (void)r.mpint();
        break;
    // Security keys: the application follows the key's own fields.
    case key_type::sk_ed25519:
        (void)r.string();
        (void)r.string();
        break;
    case key_type::sk_ecdsa_p256:
        (void)r.string();
        (void)r.string();
        (void)r.string();
        break;
    }
    if (!r.ok())
        return errc::invalid_format;
    bytes plain;
    wire_writer(plain).string(key_type_name(*type)).raw(blob.subspan(key_start, r.position() - key_start));
    auto key = public_key::from_blob(plain);
    if (!key)
        return errc::invalid_format;
    c.key_ = std::move(*key);

    c.fields_.serial = r.u64();
    const std::uint32_t kind = r.u32();
    c.fields_.key_id = std::string(r.text(max_cert_text));
    const auto principals = r.string();
    c.fields_.valid_after = r.u64();
    c.fields_.valid_before = r.u64();
    const auto critical = r.string();
    const auto extensions = r.string();
    (void)r.string(); // reserved
    const auto ca_blob = r.string();
    c.signed_size_ = r.position();
    const auto signature = r.string(max_signature_blob);
    if (!r.finish())
        return errc::invalid_format;
    if (kind != static_cast<std::uint32_t>(cert_kind::user) && kind != static_cast<std::uint32_t>(cert_kind::host))
        return errc::invalid_format;
    c.fields_.kind = static_cast<cert_kind>(kind);

    wire_reader pr(principals);
    while (pr.ok() && pr.remaining() > 0) {
        if (c.fields_.principals.size() >= max_certificate_principals)
            return errc::invalid_format;
        c.fields_.principals.emplace_back(pr.text(max_cert_text));
    }
    if (!pr.ok())
        return errc::invalid_format;

    auto crit = read_options(critical);
    auto ext = read_options(extensions);
    if (!crit || !ext)
        return errc::invalid_format;
    c.fields_.critical_options = std::move(*crit);
    c.fields_.extensions = std::move(*ext);

    // The CA key: a plain key (OpenSSH refuses a certificate as CA).
    auto ca = public_key::from_blob(ca_blob);
    if (!ca)
        return errc::invalid_format;
    c.ca_ = std::move(*ca);

    wire_reader sr(signature);
    c.sig_alg_ = std::string(sr.text(64));
    (void)sr.string();
    // A security-key CA's signature carries flags and a counter after the
    // signature proper; verify_signature() checks its whole framing.
    if (!sr.ok() || (!is_security_key(c.ca_.type()) && !sr.finish()))
        return errc::invalid_format;
    c.blob_.assign(blob.begin(), blob.end());
    return c;
}

result<certificate> certificate::sign(const certificate_fields& fields, const public_key& key, const private_key& ca,
                                      random_source& rng, std::string_view sig_alg)
{
    return sign(fields, key, ca.public_part(),
                [&ca](std::string_view alg, byte_span data) { return ca.sign(alg, data); }, rng, sig_alg);
}

result<certificate> certificate::sign(const certificate_fields& fields, const public_key& key, const public_key& ca,
                                      const signer& sign_with_ca, random_source& rng, std::string_view sig_alg)
{
    if (key.empty() || fields.principals.size() > max_certificate_principals)
        return errc::invalid_argument;
    if (sig_alg.empty())
        sig_alg = default_signature_algorithm(ca.type());
    bytes nonce = fields.nonce;
    if (nonce.empty()) {
        nonce.resize(32);
        rng.fill(nonce);
    }
    bytes blob;
    wire_writer w(blob);
    w.string(certificate_type_name(key.type())).string(nonce).raw(key_fields(key));
    w.u64(fields.serial).u32(static_cast<std::uint32_t>(fields.kind)).string(fields.key_id);
    bytes principals;
    wire_writer pw(principals);
    for (const auto& p : fields.principals)
        pw.string(p);
    w.string(principals).u64(fields.valid_after).u64(fields.valid_before);
    write_options(w, fields.critical_options);
    write_options(w, fields.extensions);
    w.string(std::string_view{}).string(ca.blob());
    auto signature = sign_with_ca(sig_alg, blob);
    if (!signature)
        return signature.error();
    w.string(*signature);
    auto cert = from_blob(blob);
    if (!cert)
        return cert.error();
    // A signer we do not hold (an agent) may have used another key or
    // algorithm (OpenSSH's sshkey_check_sigtype).
    if (!cert->verify_signature({std::string(sig_alg)}))
        return errc::signature_invalid;
    return cert;
}

std::optional<std::string> certificate::critical_option(std::string_view name) const
{
    for (const auto& o : fields_.critical_options)
        if (o.name == name) {
            wire_reader r(o.data);
            const auto value = r.text(max_cert_text);
            if (!r.finish())
                return std::nullopt;
            return std::string(value);
        }
    return std::nullopt;
}

bool certificate::has_extension(std::string_view name) const noexcept
{
    return std::any_of(fields_.extensions.begin(), fields_.extensions.end(),
                       [&](const certificate_option& o) { return o.name == name; });
}

const std::vector<std::string>& certificate::any_signature_algorithm()
{
    // A security key may be a CA too (OpenSSH's default
    // CASignatureAlgorithms lists both sk names).
    static const std::vector<std::string> all = {"ssh-ed25519",
                                                 "ecdsa-sha2-nistp256",
                                                 "ecdsa-sha2-nistp384",
                                                 "ecdsa-sha2-nistp521",
                                                 "sk-ssh-ed25519@openssh.com",
                                                 "sk-ecdsa-sha2-nistp256@openssh.com",
                                                 "rsa-sha2-512",
                                                 "rsa-sha2-256",
                                                 "ssh-rsa"};
    return all;
}

result<void> certificate::verify_signature(const std::vector<std::string>& allowed) const
{
    const bool permitted = allowed.empty()
                               ? sig_alg_ != "ssh-rsa"
                               : std::find(allowed.begin(), allowed.end(), sig_alg_) != allowed.end();
    if (!permitted || blob_.empty())
        return errc::signature_invalid;
    wire_reader r(byte_span(blob_).subspan(signed_size_));
    const auto signature = r.string(max_signature_blob);
    if (!r.finish())
        return errc::signature_invalid;
    return ca_.verify(sig_alg_, byte_span(blob_).first(signed_size_), signature);
}

std::optional<std::string> check_authority(const certificate& cert, bool want_host, bool require_principal,
                                           std::uint64_t now, std::string_view name)
{
    if (want_host && cert.kind() != cert_kind::host)
        return "Certificate invalid: not a host certificate";
    if (!want_host && cert.kind() != cert_kind::user)
        return "Certificate invalid: not a user certificate";
    if (now < cert.fields().valid_after)
        return "Certificate invalid: not yet valid";
    if (now >= cert.fields().valid_before)
        return "Certificate invalid: expired";
    if (cert.principals().empty()) {
        if (require_principal)
            return "Certificate lacks principal list";
    } else if (!name.empty()) {
        if (std::find(cert.principals().begin(), cert.principals().end(), name) == cert.principals().end())
            return "Certificate invalid: name is not a listed principal";
    }
    return std::nullopt;
}

std::optional<std::string> unknown_critical_option(const certificate& cert)
{
    for (const auto& o : cert.fields().critical_options)
        if (o.name != "force-command" && o.name != "source-address" && o.name != "verify-required")
            return o.name;
    return std::nullopt;
}

std::string certificate_time(std::uint64_t t, bool is_after)
{
    if (is_after && t == 0)
        return "always";
    if (!is_after && t == UINT64_MAX)
        return "forever";
    // Beyond what time_t and the calendar hold: print the number.
    if (t > static_cast<std::uint64_t>(INT64_MAX) / 2)
        return std::to_string(t);
    return format_absolute_time(t);
}

} // namespace longhaul
