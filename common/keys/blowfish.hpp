// Blowfish (Schneier, 1993), with the "expensive key schedule" steps that
// bcrypt and bcrypt_pbkdf need and OpenSSL's BF_* API does not expose. Only
// bcrypt_pbkdf uses it; it is not offered as a packet cipher.
#pragma once

#include "common/bytes.hpp"

#include <array>
#include <cstdint>

namespace longhaul {

class blowfish {
public:
    // The initial state: the hexadecimal digits of pi (blowfish_pi.inc).
    blowfish() noexcept;
    // Classic Blowfish: initial state, then the key schedule with `key`
    // (1..72 bytes are meaningful; longer keys wrap as in the reference).
    explicit blowfish(byte_span key) noexcept;
    ~blowfish();
    blowfish(const blowfish&) = delete;
    blowfish& operator=(const blowfish&) = delete;

    // EksBlowfish ExpandKey(state, salt, key): P ^= key (cyclic), then
    // re-derive P and every S-box by chained encryptions whose inputs are
    // xored with the salt (cyclic).
    void expand_state(byte_span salt, byte_span key) noexcept;
    // ExpandKey(state, 0, key): the same without a salt.
    void expand0_state(byte_span key) noexcept;

    void encrypt(std::uint32_t& left, std::uint32_t& right) const noexcept;
    void decrypt(std::uint32_t& left, std::uint32_t& right) const noexcept;
    // One 8-byte block, big-endian words as in the reference vectors.
    void encrypt_block(const std::uint8_t in[8], std::uint8_t out[8]) const noexcept;
    void decrypt_block(const std::uint8_t in[8], std::uint8_t out[8]) const noexcept;

private:
    std::uint32_t f(std::uint32_t x) const noexcept
    {
        return ((s_[0][x >> 24] + s_[1][(x >> 16) & 0xff]) ^ s_[2][(x >> 8) & 0xff]) + s_[3][x & 0xff];
    }
    void xor_key_into_p(byte_span key) noexcept;

    std::array<std::uint32_t, 18> p_;
    std::array<std::array<std::uint32_t, 256>, 4> s_;
};

// The next 32-bit big-endian word of `data`, cycling back to its start:
// how Blowfish's key schedule consumes keys and salts of any length.
std::uint32_t blowfish_stream_word(byte_span data, std::size_t& pos) noexcept;

} // namespace longhaul
