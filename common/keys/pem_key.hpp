// Private keys in OpenSSL's PEM formats, as ssh-keygen -m PEM / -m PKCS8
// reads and writes them: traditional "BEGIN RSA PRIVATE KEY" / "BEGIN EC
// PRIVATE KEY" (encrypted with Proc-Type and DEK-Info headers), and PKCS#8
// "BEGIN PRIVATE KEY" / "BEGIN ENCRYPTED PRIVATE KEY". Decoding and
// encoding are OpenSSL's (OSSL_DECODER / OSSL_ENCODER).
#pragma once

#include "common/keys/private_key.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

enum class pem_format {
    traditional, // PKCS#1 RSAPrivateKey / SEC1 ECPrivateKey (no Ed25519)
    pkcs8,
};

// True when the text (after leading whitespace) starts with one of the
// private key PEM labels this module reads.
bool is_pem_private_key(std::string_view contents) noexcept;
// Whether the PEM key is encrypted (PKCS#8 "ENCRYPTED PRIVATE KEY", or a
// traditional key with "Proc-Type: 4,ENCRYPTED"); invalid_format when not
// a PEM private key.
result<bool> pem_private_key_is_encrypted(std::string_view contents);

// passphrase_required when encrypted and no passphrase is given;
// wrong_passphrase when decryption fails (OpenSSL cannot tell a wrong
// passphrase from a corrupted ciphertext, nor can OpenSSH); unsupported
// for DSA and other key types; invalid_format otherwise.
result<private_key> parse_pem_private_key(std::string_view contents, std::optional<std::string_view> passphrase);

// Encrypted with AES-256-CBC when the passphrase is not empty (PKCS#8:
// PBES2 with PBKDF2 under OpenSSL's defaults). The text is secret when
// unencrypted.
result<std::string> write_pem_private_key(const private_key& key, std::string_view passphrase, pem_format format);

} // namespace longhaul
