#include "common/keys/revocation.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <optional>

namespace longhaul {

namespace {

// isspace() in the C locale: what b64_pton skips inside the base64 text.
bool is_c_space(char c) noexcept { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string_view take_token(std::string_view& s) noexcept
{
    std::size_t n = 0;
    while (n < s.size() && !is_blank(s[n]))
        ++n;
    const auto token = s.substr(0, n);
    s.remove_prefix(n);
    return token;
}

void skip_blanks(std::string_view& s) noexcept
{
    while (!s.empty() && is_blank(s.front()))
        s.remove_prefix(1);
}

// How a key line's type name is read.
enum class line_kind { plain, certificate, skipped, unknown };
struct line_type {
    line_kind kind = line_kind::unknown;
    key_type type = key_type::ed25519; // plain: the key; certificate: the certified key
};

line_type classify(std::string_view name)
{
    if (auto t = key_type_from_name(name))
        return {line_kind::plain, *t};
    // Full names only: OpenSSH 9.2 refuses short ones ("ED25519") in these
    // files as "invalid format", and so do we.
    static constexpr std::pair<std::string_view, key_type> certificates[] = {
        {"ssh-ed25519-cert-v01@openssh.com", key_type::ed25519},
        {"ecdsa-sha2-nistp256-cert-v01@openssh.com", key_type::ecdsa_p256},
        {"ecdsa-sha2-nistp384-cert-v01@openssh.com", key_type::ecdsa_p384},
        {"ecdsa-sha2-nistp521-cert-v01@openssh.com", key_type::ecdsa_p521},
        {"ssh-rsa-cert-v01@openssh.com", key_type::rsa},
        {"sk-ssh-ed25519-cert-v01@openssh.com", key_type::sk_ed25519},
        {"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", key_type::sk_ecdsa_p256},
    };
    for (const auto& [cert_name, type] : certificates)
        if (name == cert_name)
            return {line_kind::certificate, type};
    if (openssh_only_key_type(name))
        return {line_kind::skipped, {}};
    return {};
}

// The public key a certificate certifies (PROTOCOL.certkeys: string type,
// string nonce, then the fields of the plain key's blob), as the blob of
// the plain key.
result<public_key> certified_key(byte_span cert, std::string_view cert_name, key_type type)
{
    wire_reader r(cert);
    const auto name = r.text(64);
    (void)r.string(); // nonce
    bytes plain;
    wire_writer w(plain);
    w.string(key_type_name(type));
    switch (type) {
    case key_type::ed25519: w.string(r.string()); break;
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        const auto curve = r.string();
        const auto q = r.string();
        w.string(curve).string(q);
        break;
    }
    case key_type::rsa: {
        const auto e = r.mpint();
        const auto n = r.mpint();
        w.mpint(e).mpint(n);
        break;
    }
    case key_type::sk_ed25519: {
        const auto pk = r.string();
        const auto application = r.string();
        w.string(pk).string(application);
        break;
    }
    case key_type::sk_ecdsa_p256: {
        const auto curve = r.string();
        const auto q = r.string();
        const auto application = r.string();
        w.string(curve).string(q).string(application);
        break;
    }
    }
    if (!r.ok())
        return errc::invalid_format;
    if (name != cert_name)
        return errc::key_type_mismatch;
    return public_key::from_blob(plain);
}

// An ssh-rsa blob whose modulus is under 1024 bits: sshkey_read fails such
// keys with SSH_ERR_KEY_LENGTH, which sshkey_in_file skips.
bool short_rsa_key(byte_span blob)
{
    wire_reader r(blob);
    const auto name = r.text(64);
    (void)r.mpint(); // e
    const auto n = r.mpint();
    if (!r.finish() || name != key_type_name(key_type::rsa))
        return false;
    std::size_t bits = 8 * n.size();
    if (!n.empty())
        for (std::uint8_t top = n[0]; (top & 0x80) == 0 && bits > 0; top <<= 1)
            --bits;
    return bits < 1024;
}

// One line that is not blank or a comment: the key's blob, nullopt for a
// line to skip, or why the file is refused.
result<std::optional<bytes>> read_line_key(std::string_view line)
{
    const auto name = take_token(line);
    if (line.empty())
        return errc::invalid_format; // a type with nothing after it
    skip_blanks(line);
    std::string encoded(take_token(line));
    std::erase_if(encoded, is_c_space);
    if (encoded.empty())
        return errc::invalid_format;

    const line_type t = classify(name);
    if (t.kind == line_kind::unknown)
        return errc::invalid_format;
    if (t.kind == line_kind::skipped)
        return std::optional<bytes>();
    auto blob = base64_decode(encoded);
    if (!blob)
        return errc::invalid_format;
    if (t.kind == line_kind::certificate) {
        auto key = certified_key(*blob, name, t.type);
        if (!key)
            return key.error() == errc::key_type_mismatch ? errc::key_type_mismatch : errc::invalid_format;
        return std::optional<bytes>(key->blob());
    }
    auto key = public_key::from_blob(*blob);
    if (!key) {
        if (short_rsa_key(*blob))
            return std::optional<bytes>();
        wire_reader r(*blob);
        const auto blob_name = r.text(64);
        // A blob of another type than the line names.
        if (r.ok() && blob_name != key_type_name(t.type) &&
            (key_type_from_name(blob_name) || openssh_only_key_type(blob_name)))
            return errc::key_type_mismatch;
        return errc::invalid_format;
    }
    if (key->type() != t.type)
        return errc::key_type_mismatch;
    return std::optional<bytes>(key->blob());
}

} // namespace

result<std::vector<bytes>> parse_revoked_key_list(std::string_view text)
{
    std::vector<bytes> keys;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        // getline() keeps the whole line, but the C string ends at a NUL.
        line = line.substr(0, line.find('\0'));
        skip_blanks(line);
        if (line.empty() || line.front() == '#')
            continue;
        auto key = read_line_key(line);
        if (!key)
            return key.error();
        if (*key)
            keys.push_back(std::move(**key));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
}

result<revocation_list> parse_revocation_list(byte_span file)
{
    revocation_list out;
    if (starts_with_krl_magic(file)) {
        auto k = parse_krl(file);
        if (!k)
            return k.error();
        out.kind_ = revocation_list::format::krl;
        out.contents_ = std::move(*k);
        return out;
    }
    auto keys = parse_revoked_key_list(as_string_view(file));
    if (!keys)
        return keys.error();
    out.kind_ = revocation_list::format::key_list;
    out.contents_.keys = std::move(*keys);
    return out;
}

std::string_view revocation_error_reason(errc e) noexcept
{
    switch (e) {
    case errc::incomplete: return "incomplete message";
    case errc::invalid_argument: return "invalid argument";
    case errc::unsupported: return "feature not supported";
    case errc::too_large: return "bignum is too large";
    case errc::malformed: return "bignum is negative";
    case errc::key_type_mismatch: return "key type does not match";
    default: return "invalid format";
    }
}

bool revocation_list::revoked(const certificate& cert) const
{
    if (revoked(cert.key()))
        return true;
    if (kind_ == format::key_list)
        return revoked(cert.signature_key());
    return contents_.revokes_serial_or_id(cert);
}

} // namespace longhaul
