// SSH public keys (RFC 4253 §6.6, RFC 5656, RFC 8709, RFC 8332): wire blobs,
// signature verification and fingerprints, on top of OpenSSL EVP_PKEY.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

typedef struct evp_pkey_st EVP_PKEY;

namespace longhaul {

enum class key_type { ed25519, ecdsa_p256, ecdsa_p384, ecdsa_p521, rsa };

// "ssh-ed25519", "ecdsa-sha2-nistp256", ..., "ssh-rsa".
std::string_view key_type_name(key_type t) noexcept;
result<key_type> key_type_from_name(std::string_view name) noexcept;
// Signature algorithms a key of this type can make, best first
// (rsa: rsa-sha2-512, rsa-sha2-256, ssh-rsa).
std::vector<std::string_view> signature_algorithms_for(key_type t);
// The key type behind a signature or host key algorithm name.
result<key_type> key_type_for_signature_algorithm(std::string_view sig_alg) noexcept;

class public_key {
public:
    // Parses an SSH public key blob (string type, then type-specific fields);
    // rejects trailing bytes, RSA moduli under 1024 bits and invalid points.
    static result<public_key> from_blob(byte_span blob);

    key_type type() const noexcept { return type_; }
    std::string_view type_name() const noexcept { return key_type_name(type_); }
    const bytes& blob() const noexcept { return blob_; }
    int bits() const noexcept;
    EVP_PKEY* evp() const noexcept { return pkey_.get(); }

    // Verifies an SSH signature blob (string algorithm, string signature)
    // made with `sig_alg` over `data`. The blob's algorithm must equal
    // sig_alg (so a downgrade to ssh-rsa is caught).
    result<void> verify(std::string_view sig_alg, byte_span data, byte_span signature_blob) const;

    // "SHA256:" + unpadded base64 of SHA-256(blob), as ssh-keygen -l prints.
    std::string fingerprint_sha256() const;
    // "MD5:" + colon-separated hex.
    std::string fingerprint_md5() const;

    bool operator==(const public_key& o) const noexcept { return blob_ == o.blob_; }

private:
    public_key(key_type t, bytes blob, std::shared_ptr<EVP_PKEY> pkey)
        : type_(t), blob_(std::move(blob)), pkey_(std::move(pkey)) {}
    friend class private_key;

    key_type type_ = key_type::ed25519;
    bytes blob_;
    std::shared_ptr<EVP_PKEY> pkey_;
};

} // namespace longhaul
