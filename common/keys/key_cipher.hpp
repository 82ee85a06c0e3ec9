// Internal to common/keys: the ciphers that protect private keys in
// openssh-key-v1 files (OpenSSH's cipher.c names), applied to a whole
// private section at once with the key and IV derived by bcrypt_pbkdf.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <string_view>

namespace longhaul::detail {

struct key_cipher {
    std::string_view name;
    std::size_t key_len;
    std::size_t iv_len;
    std::size_t block_size; // the private section is padded to this
    std::size_t tag_len;    // AEAD tag stored after the encrypted section
};

// nullptr for names this implementation does not know.
const key_cipher* find_key_cipher(std::string_view name) noexcept;

// Encrypts `data` in place (its length is a multiple of block_size) and
// writes the tag (tag_len bytes, none for non-AEAD ciphers).
result<void> key_cipher_encrypt(const key_cipher& c, byte_span key, byte_span iv, mutable_byte_span data,
                                mutable_byte_span tag);
// Decrypts in place; for AEAD ciphers the tag is checked first and a
// mismatch is mac_mismatch.
result<void> key_cipher_decrypt(const key_cipher& c, byte_span key, byte_span iv, mutable_byte_span data,
                                byte_span tag);

} // namespace longhaul::detail
