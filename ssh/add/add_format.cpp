#include "ssh/add/add_format.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/wire.hpp"

namespace longhaul::add {

std::optional<shown_key> identity_key(const agent::identity& id)
{
    if (id.key)
        return shown_key{*id.key, std::nullopt};
    auto cert = certificate::from_blob(id.key_blob);
    if (!cert)
        return std::nullopt;
    public_key plain = cert->key();
    return shown_key{std::move(plain), std::move(*cert)};
}

std::string key_type_label(const shown_key& k)
{
    std::string label(key_type_short_name(k.key.type()));
    if (k.cert)
        label += "-CERT";
    return label;
}

std::string fingerprint_line(const shown_key& k, const std::string& comment, fingerprint_hash h)
{
    return std::to_string(k.key.bits()) + " " + key_fingerprint(k.key, h) + " " + comment + " (" +
           key_type_label(k) + ")";
}

std::string public_line(const shown_key& k, const std::string& comment)
{
    if (!k.cert)
        return format_public_key(k.key) + " " + comment;
    return std::string(k.cert->type_name()) + " " + base64_encode(k.cert->blob()) + " " + comment;
}

namespace {

struct foreign_key {
    std::string type_name; // "ssh-dss", ...
    std::string label;     // sshkey_type(): "DSA", "ECDSA-SK", "ED25519-SK"
    int bits = 0;
};

std::optional<foreign_key> parse_foreign(byte_span blob)
{
    wire_reader r(blob);
    foreign_key k;
    k.type_name = std::string(r.text());
    if (!r.ok())
        return std::nullopt;
    if (k.type_name == "ssh-dss") {
        // sshkey_size(): the bits of the prime p.
        const byte_span p = strip_leading_zeros(r.string());
        if (!r.ok() || p.empty())
            return std::nullopt;
        int top = 0;
        for (unsigned v = p[0]; v != 0; v >>= 1)
            ++top;
        k.label = "DSA";
        k.bits = static_cast<int>((p.size() - 1) * 8) + top;
        return k;
    }
    if (k.type_name == "sk-ecdsa-sha2-nistp256@openssh.com") {
        k.label = "ECDSA-SK";
        k.bits = 256;
        return k;
    }
    if (k.type_name == "sk-ssh-ed25519@openssh.com") {
        k.label = "ED25519-SK";
        k.bits = 256;
        return k;
    }
    return std::nullopt;
}

} // namespace

std::optional<std::string> foreign_fingerprint_line(const agent::identity& id, fingerprint_hash h)
{
    auto k = parse_foreign(id.key_blob);
    if (!k)
        return std::nullopt;
    return std::to_string(k->bits) + " " + blob_fingerprint(id.key_blob, h) + " " + id.comment + " (" + k->label + ")";
}

std::optional<std::string> foreign_public_line(const agent::identity& id)
{
    auto k = parse_foreign(id.key_blob);
    if (!k)
        return std::nullopt;
    return k->type_name + " " + base64_encode(id.key_blob) + " " + id.comment;
}

std::string agent_error_text(errc e)
{
    switch (e) {
    case errc::unsupported: return "agent refused operation";
    case errc::too_large: return "string is too large";
    case errc::invalid_argument:
    case errc::key_type_mismatch: return "invalid argument";
    default: return "communication with agent failed";
    }
}

} // namespace longhaul::add
