// bcrypt_pbkdf: the key derivation function of OpenBSD, used by OpenSSH's
// openssh-key-v1 format ("kdfname bcrypt") to turn a passphrase into the
// key and IV of the cipher protecting private keys.
//
// Each output block is the xor of `rounds` chained bcrypt hashes (an
// EksBlowfish cost-64 expansion of SHA-512(password) and SHA-512(salt ||
// counter), then 64 encryptions of "OxychromaticBlowfishSwatDynamite").
// Output bytes of the blocks are interleaved (byte i of block k lands at
// i * blocks + k), so a caller cannot get a prefix of the key cheaper than
// the whole.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstdint>

namespace longhaul {

inline constexpr std::size_t bcrypt_hash_size = 32;
// The derived length limit of the reference (32 blocks of 32 bytes).
inline constexpr std::size_t bcrypt_pbkdf_max_output = 32 * bcrypt_hash_size;

// Fills `out` (1..1024 bytes). Fails with invalid_argument on an empty
// password, empty salt, salt over 1 MiB, zero rounds or a bad output size,
// as the reference does.
result<void> bcrypt_pbkdf(byte_span password, byte_span salt, std::uint32_t rounds, mutable_byte_span out);

// One bcrypt hash of pre-hashed inputs (exposed for tests).
void bcrypt_hash(const std::uint8_t sha2_password[64], const std::uint8_t sha2_salt[64],
                 std::uint8_t out[bcrypt_hash_size]) noexcept;

} // namespace longhaul
