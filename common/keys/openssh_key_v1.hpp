// OpenSSH's private key file format, "openssh-key-v1" (PROTOCOL.key):
//
//   "openssh-key-v1\0" string cipher, string kdf, string kdfoptions,
//   uint32 N (= 1), string public key blob, string encrypted section
//   [AEAD tag]
//
// The section, padded with 1, 2, 3... to the cipher's block size, holds
// two equal random check-ints (a wrong passphrase makes them differ), the
// private key fields and a comment. The key and IV come from bcrypt_pbkdf
// over the passphrase with kdfoptions = string salt, uint32 rounds.
#pragma once

#include "common/keys/private_key.hpp"
#include "common/random.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// The key derivation of openssh-key-v1 files: fills `out` from the
// passphrase, salt and rounds (bcrypt_pbkdf's signature).
using key_derivation_fn = result<void> (*)(byte_span passphrase, byte_span salt, std::uint32_t rounds,
                                           mutable_byte_span out);

struct key_parse_options {
    // bcrypt rounds a file may ask for. OpenSSH sets no cap, but each round
    // costs about 6 ms here (two bcrypt hashes for a 48-byte key and IV), so
    // a 32-bit count from a crafted file could pin a CPU for months; 2^16
    // rounds (several minutes) is far beyond what anyone configures
    // (ssh-keygen writes 16 by default; -a 100 is already slow) and keeps
    // the worst case bounded. Files over the cap give too_large.
    std::uint32_t max_kdf_rounds = 1u << 16;
    // Null: bcrypt_pbkdf. Fuzzers substitute a cheap function so that the
    // decryption paths after the KDF can be explored at speed; a different
    // KDF can only make decryption fail, never yield another key.
    key_derivation_fn kdf = nullptr;
};

inline constexpr std::string_view openssh_key_label = "OPENSSH PRIVATE KEY";
// The cipher and rounds ssh-keygen uses for new encrypted keys.
inline constexpr std::string_view openssh_default_cipher = "aes256-ctr";
// Whether `name` can protect an openssh-key-v1 file (OpenSSH's cipher
// names: ssh-keygen -Z takes exactly these).
bool openssh_key_cipher_known(std::string_view name) noexcept;
inline constexpr int openssh_default_kdf_rounds = 16;

// The file's public header, readable without the passphrase.
struct openssh_key_header {
    std::string cipher;
    std::string kdf;
    std::uint32_t kdf_rounds = 0; // 0 unless kdf is bcrypt
    public_key key;
    // As OpenSSH decides: by the KDF (cipher "none" under bcrypt, which
    // ssh-keygen -Z none writes, still asks for a passphrase).
    bool encrypted() const noexcept { return kdf != "none"; }
};

// Reads the armored file up to (not into) the private section.
// invalid_format when malformed, unsupported for unknown ciphers, KDFs and
// key types.
result<openssh_key_header> parse_openssh_key_header(std::string_view file_contents,
                                                    const key_parse_options& options = {});

// Parses and, when encrypted, decrypts. passphrase_required when encrypted
// and none is given; wrong_passphrase when the check-ints (or the AEAD tag)
// disagree, including for an empty passphrase. A FIDO security-key file
// (its header names an sk key) gives security_key_unsupported before any
// passphrase is asked for: Longhaul cannot sign with one yet. Its public
// key is available from parse_openssh_key_header, its record from
// parse_openssh_security_key.
result<private_key> parse_openssh_private_key(std::string_view file_contents,
                                              std::optional<std::string_view> passphrase,
                                              const key_parse_options& options = {});

// What a security-key private key file holds (PROTOCOL.u2f): no secret,
// only what an authenticator needs to sign, and the comment.
struct openssh_security_key {
    public_key key;          // sk_ed25519 or sk_ecdsa_p256, application included
    std::uint8_t flags = 0;  // the key's sk flags (0x01 touch, 0x04 verify, 0x20 resident)
    bytes key_handle;        // opaque authenticator data
    std::string comment;
};

// Parses (decrypting like parse_openssh_private_key) a file holding a
// security key: the record must match the header key. unsupported when the
// file holds another kind of key.
result<openssh_security_key> parse_openssh_security_key(std::string_view file_contents,
                                                        std::optional<std::string_view> passphrase,
                                                        const key_parse_options& options = {});

// The armored file, as ssh-keygen writes it: cipher "none" when the
// passphrase is empty, else `cipher` (default aes256-ctr) keyed by
// bcrypt_pbkdf with a 16-byte salt and `kdf_rounds` rounds (>= 1). The
// comment is the key's. The text is secret when unencrypted.
result<std::string> write_openssh_private_key(const private_key& key, std::string_view passphrase, int kdf_rounds,
                                              random_source& rng,
                                              std::string_view cipher = openssh_default_cipher);

// The same for a security key's record (ssh-keygen -t ed25519-sk/ecdsa-sk
// after enrolment, -p on such a file): the section holds the public key's
// fields, the flags, the key handle and an empty reserved string. The
// record's comment is written. invalid_argument for other key types.
result<std::string> write_openssh_security_key(const openssh_security_key& key, std::string_view passphrase,
                                               int kdf_rounds, random_source& rng,
                                               std::string_view cipher = openssh_default_cipher);

} // namespace longhaul
