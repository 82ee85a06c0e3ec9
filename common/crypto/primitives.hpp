// Thin, allocation-free wrappers over the OpenSSL EVP primitives the packet
// ciphers are built from: ChaCha20, Poly1305, AES-CTR and AES-GCM.
//
// Each object owns its EVP context with the key schedule set up once; every
// message then only re-seeds the IV. The packet ciphers and the known-answer
// tests go through these same calls, so the RFC and NIST vectors exercise the
// exact EVP sequence used on the wire.
//
// Per-message calls return false when OpenSSL reports a failure (which, once
// the key is set, does not happen in practice); they never throw.
// Constructors throw std::invalid_argument on a wrong key size and
// std::runtime_error when OpenSSL cannot set up the algorithm.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/evp_handles.hpp"

#include <cstddef>
#include <cstdint>

namespace longhaul {

// ChaCha20 keystream (RFC 8439 §2.4). OpenSSL takes a 16-byte IV: a 32-bit
// little-endian block counter followed by the 96-bit nonce. DJB's original
// 64-bit counter / 64-bit nonce layout maps onto the same 16 bytes (the
// counter's high word takes the place of the nonce's first word).
class chacha20 {
public:
    static constexpr std::size_t key_size = 32;
    static constexpr std::size_t iv_size = 16;
    static constexpr std::size_t block_size = 64;

    explicit chacha20(byte_span key);

    // Positions the keystream at the start of the block the IV names.
    [[nodiscard]] bool set_iv(const std::uint8_t* iv16) noexcept;
    // XORs the keystream into `in` and writes to `out` (may equal in.data()),
    // continuing where the previous call stopped.
    [[nodiscard]] bool apply(byte_span in, std::uint8_t* out) noexcept;

    // IV builders for both layouts.
    static void ietf_iv(std::uint8_t* iv16, std::uint32_t counter, byte_span nonce12) noexcept;
    static void djb_iv(std::uint8_t* iv16, std::uint64_t counter, std::uint64_t nonce_be) noexcept;

private:
    detail::cipher_ptr cipher_;
    detail::cipher_ctx_ptr ctx_;
};

// One-time authenticator (RFC 8439 §2.5) through EVP_MAC "POLY1305". The key
// must be fresh for every message, so init() takes it each time.
class poly1305 {
public:
    static constexpr std::size_t key_size = 32;
    static constexpr std::size_t tag_size = 16;

    poly1305();

    [[nodiscard]] bool init(const std::uint8_t* key32) noexcept;
    [[nodiscard]] bool update(byte_span data) noexcept;
    [[nodiscard]] bool finish(std::uint8_t* tag16) noexcept;

private:
    detail::mac_ptr mac_;
    detail::mac_ctx_ptr ctx_;
};

// AES in counter mode with a full 128-bit big-endian counter (NIST SP
// 800-38A, RFC 4344). Keys of 16, 24 or 32 bytes.
class aes_ctr {
public:
    static constexpr std::size_t iv_size = 16;

    explicit aes_ctr(byte_span key);

    [[nodiscard]] bool set_iv(const std::uint8_t* iv16) noexcept;
    [[nodiscard]] bool apply(byte_span in, std::uint8_t* out) noexcept;

    // counter := iv + blocks (mod 2^128), the counter block `blocks` blocks
    // into the stream that starts at iv.
    static void advance_iv(std::uint8_t* out16, const std::uint8_t* iv16, std::uint64_t blocks) noexcept;

private:
    detail::cipher_ptr cipher_;
    detail::cipher_ctx_ptr ctx_;
};

// AES-GCM (NIST SP 800-38D) with a 96-bit IV and a 128-bit tag. Keys of 16,
// 24 or 32 bytes. One object both seals and opens.
class aes_gcm {
public:
    static constexpr std::size_t iv_size = 12;
    static constexpr std::size_t tag_size = 16;

    explicit aes_gcm(byte_span key);

    // Encrypts `data` in place and writes the tag.
    [[nodiscard]] bool seal(const std::uint8_t* iv12, byte_span aad, mutable_byte_span data,
                            std::uint8_t* tag16) noexcept;
    // Decrypts `data` in place; false when the tag does not verify (the data
    // is then unspecified) or OpenSSL fails.
    [[nodiscard]] bool open(const std::uint8_t* iv12, byte_span aad, mutable_byte_span data,
                            const std::uint8_t* tag16) noexcept;

private:
    [[nodiscard]] bool begin(const std::uint8_t* iv12, byte_span aad, int enc) noexcept;

    detail::cipher_ptr cipher_;
    detail::cipher_ctx_ptr ctx_;
};

} // namespace longhaul
