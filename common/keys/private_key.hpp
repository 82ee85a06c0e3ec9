// SSH private keys: generation, signing, and OpenSSH's private key field
// encoding. The file formats (openssh-key-v1, PEM, PKCS#8) are in
// key_file.hpp.
#pragma once

#include "common/keys/public_key.hpp"

#include <optional>

namespace longhaul {

class wire_reader;
class wire_writer;

class private_key {
public:
    // A fresh key. bits: ignored for Ed25519; for ECDSA 0 or the curve's
    // size (256, 384, 521); for RSA 0 (3072) or 1024..16384.
    static result<private_key> generate(key_type t, int bits = 0);

    // A private key from an EVP_PKEY holding one (Ed25519, EC on a
    // supported curve, two-prime RSA). The components are re-read and
    // checked for consistency, so the result does not share `pkey`.
    static result<private_key> from_evp(EVP_PKEY* pkey, std::string comment = {});

    // OpenSSH's encoding of a private key (PROTOCOL.key's private section,
    // also ssh-agent's add-identity): string type, then for Ed25519
    // string pk, string sk (seed || pk); for ECDSA string curve, string Q,
    // mpint d; for RSA mpint n, e, d, iqmp, p, q. The comment is not part
    // of it. Fails with invalid_format (unsupported for an unknown type).
    static result<private_key> deserialize(wire_reader& r);
    // Appends that encoding. The output holds secrets: the caller wipes it.
    result<void> serialize(wire_writer& w) const;

    key_type type() const noexcept { return public_.type(); }
    const public_key& public_part() const noexcept { return public_; }
    const std::string& comment() const noexcept { return comment_; }
    void set_comment(std::string c) { comment_ = std::move(c); }
    EVP_PKEY* evp() const noexcept { return pkey_.get(); }

    // An SSH signature blob (string sig_alg, string signature) over data.
    // sig_alg must suit the key (key_type_mismatch otherwise): ssh-ed25519,
    // ecdsa-sha2-<curve>, or for RSA rsa-sha2-512, rsa-sha2-256, ssh-rsa.
    result<bytes> sign(std::string_view sig_alg, byte_span data) const;

private:
    private_key(public_key pub, std::shared_ptr<EVP_PKEY> pkey, std::string comment)
        : public_(std::move(pub)), pkey_(std::move(pkey)), comment_(std::move(comment)) {}
    static result<private_key> from_parts(std::shared_ptr<EVP_PKEY> pkey, std::string comment);

    public_key public_;
    std::shared_ptr<EVP_PKEY> pkey_;
    std::string comment_;
};

} // namespace longhaul
