// SSH public keys (RFC 4253 §6.6, RFC 5656, RFC 8709, RFC 8332): wire blobs,
// signature verification and fingerprints, on top of OpenSSL EVP_PKEY.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

typedef struct evp_pkey_st EVP_PKEY;

namespace longhaul {

// sk_ed25519 and sk_ecdsa_p256 are FIDO security-key ("sk") keys
// (PROTOCOL.u2f): the usual public fields plus an application string; the
// private half lives in the authenticator.
enum class key_type { ed25519, ecdsa_p256, ecdsa_p384, ecdsa_p521, rsa, sk_ed25519, sk_ecdsa_p256 };

// Whether keys of this type are FIDO security keys.
bool is_security_key(key_type t) noexcept;

// "ssh-ed25519", "ecdsa-sha2-nistp256", ..., "ssh-rsa",
// "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com".
std::string_view key_type_name(key_type t) noexcept;
result<key_type> key_type_from_name(std::string_view name) noexcept;
// Signature algorithms a key of this type can make, best first
// (rsa: rsa-sha2-512, rsa-sha2-256, ssh-rsa).
std::vector<std::string_view> signature_algorithms_for(key_type t);
// The key type behind a signature or host key algorithm name
// ("webauthn-sk-ecdsa-sha2-nistp256@openssh.com", a signature-only name,
// gives sk_ecdsa_p256).
result<key_type> key_type_for_signature_algorithm(std::string_view sig_alg) noexcept;
// What `ssh-keygen -l` prints in parentheses: "ED25519", "ECDSA", "RSA",
// "ED25519-SK", "ECDSA-SK" (certificates append "-CERT").
std::string_view key_type_short_name(key_type t) noexcept;

// Largest signature blob verify() looks at: string alg + string sig for a
// 16384-bit RSA key, with room to spare.
inline constexpr std::size_t max_signature_blob = 4096;

// The signature form WebAuthn clients produce with an sk-ecdsa key; it is
// verified by sk-ecdsa-sha2-nistp256@openssh.com keys (never a key name).
inline constexpr std::string_view webauthn_sk_ecdsa_signature = "webauthn-sk-ecdsa-sha2-nistp256@openssh.com";

// Longest security-key application string accepted ("ssh:" in practice;
// OpenSSH sets no bound, so leave generous room for odd-but-real ones).
inline constexpr std::size_t max_sk_application = 1024;

// Authenticator-data flag bits that a security-key signature carries.
inline constexpr std::uint8_t sk_flag_user_presence = 0x01;     // the user touched the device
inline constexpr std::uint8_t sk_flag_user_verification = 0x04; // PIN or biometric checked

// What a security-key signature reports besides its validity: the signed
// flags and counter, for the caller's touch/verify policy.
struct sk_signature_details {
    std::uint8_t flags = 0;
    std::uint32_t counter = 0;
};

class public_key {
public:
    // An empty key (no blob, verifies nothing), so that structs holding a
    // key can be built field by field.
    public_key() = default;
    bool empty() const noexcept { return blob_.empty(); }

    // Parses an SSH public key blob (string type, then type-specific fields);
    // rejects trailing bytes, RSA moduli under 1024 or over 16384 bits, even
    // or tiny RSA exponents, curve identifiers that disagree with the type,
    // and EC points that are not valid points of the curve. Security keys:
    // the application must be text of at most max_sk_application bytes
    // without NUL (its contents are not interpreted).
    // errc::unsupported for an unknown key type, invalid_format otherwise.
    //
    // blob() is the canonical re-encoding (mpints without redundant zero
    // bytes), which fingerprints are computed over, as OpenSSH does; an
    // exchange hash must use the bytes as received instead.
    static result<public_key> from_blob(byte_span blob);

    // The public half of an EVP_PKEY (Ed25519, EC on P-256/384/521, RSA),
    // which may also hold a private key: only public components are kept.
    static result<public_key> from_evp(EVP_PKEY* pkey);

    key_type type() const noexcept { return type_; }
    std::string_view type_name() const noexcept { return key_type_name(type_); }
    const bytes& blob() const noexcept { return blob_; }
    // As ssh-keygen -l prints it: 256 for Ed25519, the curve size for ECDSA,
    // the modulus size for RSA.
    int bits() const noexcept;
    // A security key's application ("ssh:"); empty for other types.
    const std::string& application() const noexcept { return application_; }
    EVP_PKEY* evp() const noexcept { return pkey_.get(); }

    // Verifies an SSH signature blob (string algorithm, string signature)
    // made with `sig_alg` over `data`. The blob's algorithm must equal
    // sig_alg (so a downgrade to ssh-rsa is caught) and belong to this key's
    // type; any mismatch, malformed blob or bad signature gives
    // errc::signature_invalid.
    //
    // Security keys: sig_alg is the key's own name; the blob is string alg,
    // string sig, byte flags, uint32 counter (plus origin, clientData and
    // extensions for the webauthn form an sk-ecdsa key also accepts), and the
    // signature covers H(application) || flags || counter || H(data).
    // `sk`, when given, receives the signed flags and counter. Without it an
    // sk signature is checked only cryptographically: whether the flags meet
    // a touch/verify requirement is the caller's policy (sshd applies it).
    result<void> verify(std::string_view sig_alg, byte_span data, byte_span signature_blob,
                        sk_signature_details* sk = nullptr) const;

    // "SHA256:" + unpadded base64 of SHA-256(blob), as ssh-keygen -l prints.
    std::string fingerprint_sha256() const;
    // "MD5:" + colon-separated lowercase hex (ssh-keygen -l -E md5).
    std::string fingerprint_md5() const;

    bool operator==(const public_key& o) const noexcept { return blob_ == o.blob_; }

private:
    public_key(key_type t, bytes blob, std::shared_ptr<EVP_PKEY> pkey, std::string application = {})
        : type_(t), blob_(std::move(blob)), pkey_(std::move(pkey)), application_(std::move(application)) {}
    friend class private_key;
    result<void> verify_sk(std::string_view sig_alg, byte_span data, byte_span signature_blob,
                           sk_signature_details* sk) const;

    key_type type_ = key_type::ed25519;
    bytes blob_;
    std::shared_ptr<EVP_PKEY> pkey_;
    std::string application_;
};

// OpenSSH's sshkey_check_rsa_length (RequiredRSASize, in ssh and sshd):
// false for an RSA key shorter than 1024 bits or than required_bits; other
// key types are not affected.
bool rsa_size_allowed(const public_key& key, int required_bits) noexcept;

} // namespace longhaul
