// UMAC (RFC 4418) with 64- or 128-bit tags, as SSH uses it
// (umac-64@openssh.com, umac-128@openssh.com and their -etm forms): a
// 16-byte AES-128 key, and a nonce per message, which SSH makes the packet
// sequence number as 8 big-endian bytes.
//
// Tag = UHASH(message) xor PDF(nonce). UHASH (common/crypto/umac_hash.hpp)
// is our own arithmetic; AES-128, for the key derivation and the pad, comes
// from OpenSSL. Keys and subkeys are derived once, at construction, and
// wiped with the object.
//
// Like hmac (mac.hpp), a message is fed incrementally: begin, any number of
// updates, finish. The state is per instance; the packet ciphers give each
// crypto thread its own clone.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/evp_handles.hpp"
#include "common/crypto/umac_hash.hpp"

#include <cstddef>
#include <cstdint>

namespace longhaul {

class umac {
public:
    static constexpr std::size_t key_size = 16;
    static constexpr std::size_t max_nonce_size = 16;

    // tag_size is 8 (UMAC-64) or 16 (UMAC-128). Throws std::invalid_argument
    // on another tag size or a key that is not key_size bytes, and
    // std::runtime_error when OpenSSL cannot provide AES-128.
    umac(byte_span key, std::size_t tag_size);
    ~umac();
    umac(const umac&) = delete;
    umac& operator=(const umac&) = delete;

    std::size_t size() const noexcept { return tag_size_; }

    // Starts a message (finish() also leaves the object ready for the next).
    void begin() noexcept;
    void update(byte_span data) noexcept;
    // Writes size() bytes to out. The nonce is 1 to 16 bytes; false for
    // another length or when OpenSSL fails. Either way the next message may
    // begin.
    [[nodiscard]] bool finish(byte_span nonce, std::uint8_t* out) noexcept;
    // SSH's nonce: the sequence number as a 64-bit big-endian number.
    [[nodiscard]] bool finish(std::uint64_t nonce, std::uint8_t* out) noexcept;

private:
    void hash_chunk(const std::uint8_t* chunk) noexcept;
    [[nodiscard]] bool pad(byte_span nonce, std::uint8_t* out) noexcept;

    // Everything derived from the key, and the message bytes held back:
    // wiped in the destructor.
    struct secrets {
        std::uint32_t nh_key[detail::uhash::nh_key_words];
        detail::uhash::poly_key poly[detail::uhash::max_streams];
        detail::uhash::l3_key l3[detail::uhash::max_streams];
        detail::uhash::poly_hash l2[detail::uhash::max_streams];
        std::uint8_t buffer[detail::uhash::chunk_bytes];
        // The last AES block of the pad, and the nonce block it was made
        // from: UMAC-64 takes consecutive nonces' pads from one block.
        std::uint8_t pad_block[16];
        std::uint8_t pad_input[16];
    };

    detail::cipher_ptr aes_;
    detail::cipher_ctx_ptr pdf_ctx_; // AES-128 under the PDF's derived key
    std::size_t tag_size_;
    std::size_t streams_; // UHASH iterations: tag_size / 4
    secrets s_{};
    std::size_t buffered_ = 0;      // bytes in s_.buffer
    std::uint64_t chunks_hashed_ = 0; // whole chunks that went through L1
    bool pad_cached_ = false;
};

// One-shot UMAC, for tests and non-packet uses. Throws as the constructor
// does, and std::invalid_argument on a nonce of the wrong length.
bytes umac_digest(byte_span key, std::size_t tag_size, byte_span nonce, byte_span data);

} // namespace longhaul
