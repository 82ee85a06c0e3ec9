// Internal to common/crypto: the three hash layers of UHASH (RFC 4418 §5),
// one UHASH iteration at a time except NH, which runs every iteration over
// a chunk in one pass so the message is read once. common/crypto/umac.hpp
// is the MAC built on them.
//
// All arithmetic on message words and key material is branch-free and
// table-free: the modular reductions and POLY's "marker" case for large
// words select their results with masks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace longhaul::detail::uhash {

// L1 splits the message into chunks of one NH key's length.
inline constexpr std::size_t chunk_bytes = 1024;
// UMAC-128 runs four iterations, UMAC-64 two.
inline constexpr std::size_t max_streams = 4;
// Iteration i uses the NH key starting 16 bytes after iteration i-1's.
inline constexpr std::size_t nh_key_words = chunk_bytes / 4 + 4 * (max_streams - 1);

struct u128 {
    std::uint64_t hi = 0;
    std::uint64_t lo = 0;
};

// NH (RFC 4418 §5.2.2) of `len` bytes (a multiple of 32, at most
// chunk_bytes; L1 pads the last chunk) for iterations 0..streams-1. Message
// words are read little-endian (L1's ENDIAN-SWAP); key words are already
// numbers (read big-endian at key set-up). Writes streams results to out.
void nh(const std::uint32_t* key, const std::uint8_t* msg, std::size_t len, std::size_t streams,
        std::uint64_t* out) noexcept;

// One iteration's L2-HASH key (RFC 4418 §5.3), already masked.
struct poly_key {
    std::uint64_t k64 = 0;
    u128 k128;
};
poly_key make_poly_key(const std::uint8_t* key24) noexcept;

// L2-HASH for one iteration, fed one L1 output (8 bytes, as a number) at a
// time: POLY over 64-bit words for the first 2^17 bytes of L1 output, then
// POLY over 128-bit words seeded with that result (messages over 16 MiB).
class poly_hash {
public:
    void reset() noexcept;
    void absorb(const poly_key& key, std::uint64_t word) noexcept;
    // The 16-byte L2 output. Only for a message of more than one chunk (UHASH
    // skips L2 otherwise); leaves the state to be reset.
    u128 finish(const poly_key& key) noexcept;

private:
    std::uint64_t y64_ = 1;
    u128 y128_;
    std::uint64_t words_ = 0; // L1 outputs absorbed: a length, not a secret
    std::uint64_t half_ = 0;  // the first half of a 128-bit word still waiting for its second
};

// One iteration's L3-HASH key (RFC 4418 §5.4): eight words reduced mod
// 2^36 - 5, and the 32-bit mask.
struct l3_key {
    std::uint64_t k[8] = {};
    std::uint32_t mask = 0;
};
l3_key make_l3_key(const std::uint8_t* key64, const std::uint8_t* key4) noexcept;
std::uint32_t l3(const l3_key& key, u128 m) noexcept;

} // namespace longhaul::detail::uhash
