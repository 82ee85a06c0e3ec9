// Key type and signature algorithm names (RFC 4253, 5656, 8332, 8709).
#include "common/keys/public_key.hpp"

namespace longhaul {

bool is_security_key(key_type t) noexcept
{
    return t == key_type::sk_ed25519 || t == key_type::sk_ecdsa_p256;
}

std::string_view key_type_name(key_type t) noexcept
{
    switch (t) {
    case key_type::ed25519: return "ssh-ed25519";
    case key_type::ecdsa_p256: return "ecdsa-sha2-nistp256";
    case key_type::ecdsa_p384: return "ecdsa-sha2-nistp384";
    case key_type::ecdsa_p521: return "ecdsa-sha2-nistp521";
    case key_type::rsa: return "ssh-rsa";
    case key_type::sk_ed25519: return "sk-ssh-ed25519@openssh.com";
    case key_type::sk_ecdsa_p256: return "sk-ecdsa-sha2-nistp256@openssh.com";
    }
    return "unknown";
}

result<key_type> key_type_from_name(std::string_view name) noexcept
{
    for (auto t : {key_type::ed25519, key_type::ecdsa_p256, key_type::ecdsa_p384, key_type::ecdsa_p521, key_type::rsa,
                   key_type::sk_ed25519, key_type::sk_ecdsa_p256})
        if (key_type_name(t) == name)
            return t;
    return errc::unsupported;
}

std::vector<std::string_view> signature_algorithms_for(key_type t)
{
    if (t == key_type::rsa)
        return {"rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"};
    return {key_type_name(t)};
}

std::string_view key_type_short_name(key_type t) noexcept
{
    switch (t) {
    case key_type::ed25519: return "ED25519";
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: return "ECDSA";
    case key_type::rsa: return "RSA";
    case key_type::sk_ed25519: return "ED25519-SK";
    case key_type::sk_ecdsa_p256: return "ECDSA-SK";
    }
    return "UNKNOWN";
}

result<key_type> key_type_for_signature_algorithm(std::string_view sig_alg) noexcept
{
    if (sig_alg == "rsa-sha2-512" || sig_alg == "rsa-sha2-256")
        return key_type::rsa;
    if (sig_alg == webauthn_sk_ecdsa_signature)
        return key_type::sk_ecdsa_p256;
    return key_type_from_name(sig_alg);
}

} // namespace longhaul
