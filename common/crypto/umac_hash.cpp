// UHASH's layers, written from RFC 4418 §5. See umac_hash.hpp.
#include "common/crypto/umac_hash.hpp"

#include "common/bytes.hpp"
#include "common/wire.hpp"

#include <bit>
#include <cstring>

namespace longhaul::detail::uhash {

namespace {

using wide = unsigned __int128;

inline std::uint32_t load_le32(const std::uint8_t* p) noexcept
{
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::big)
        v = __builtin_bswap32(v);
    return v;
}

// All ones when `bit` is 1, zero when it is 0; the barrier keeps the
// compiler from turning the selects below back into branches.
inline std::uint64_t mask_of(std::uint64_t bit) noexcept { return value_barrier(std::uint64_t(0) - bit); }

inline std::uint64_t select(std::uint64_t mask, std::uint64_t if_set, std::uint64_t if_clear) noexcept
{
    return (if_set & mask) | (if_clear & ~mask);
}

// --- NH -------------------------------------------------------------------

template <std::size_t Streams>
void nh_streams(const std::uint32_t* key, const std::uint8_t* msg, std::size_t len, std::uint64_t* out) noexcept
{
    std::uint64_t acc[Streams] = {};
    for (std::size_t off = 0; off < len; off += 32, key += 8) {
        std::uint32_t m[8];
        for (std::size_t j = 0; j < 8; ++j)
            m[j] = load_le32(msg + off + 4 * j);
        for (std::size_t s = 0; s < Streams; ++s) {
            const std::uint32_t* k = key + 4 * s;
            // Sums of words are mod 2^32, products and their sum mod 2^64.
            acc[s] += std::uint64_t(std::uint32_t(m[0] + k[0])) * std::uint32_t(m[4] + k[4]) +
                      std::uint64_t(std::uint32_t(m[1] + k[1])) * std::uint32_t(m[5] + k[5]) +
                      std::uint64_t(std::uint32_t(m[2] + k[2])) * std::uint32_t(m[6] + k[6]) +
                      std::uint64_t(std::uint32_t(m[3] + k[3])) * std::uint32_t(m[7] + k[7]);
        }
    }
    for (std::size_t s = 0; s < Streams; ++s)
        out[s] = acc[s];
}

// --- POLY over 64-bit words, p = 2^64 - 59 -----------------------------------

constexpr std::uint64_t p64 = 0xFFFFFFFFFFFFFFC5ull;
constexpr std::uint64_t offset64 = 59; // 2^64 - p64
constexpr std::uint64_t key_mask = 0x01FFFFFF01FFFFFFull;

// (k * y + m) mod p64, fully reduced, for k < 2^57 and any 64-bit y and m.
std::uint64_t mul_add_64(std::uint64_t y, std::uint64_t k, std::uint64_t m) noexcept
{
    const wide t = wide(y) * k + m; // < 2^122
    // 2^64 = 59 (mod p): fold the high half down twice, then subtract p once.
    const wide s = wide(std::uint64_t(t >> 64)) * offset64 + std::uint64_t(t); // < 2^65
    const std::uint64_t carry = std::uint64_t(s >> 64);
    // With a carry the low half is below 2^63, so adding 59 cannot wrap.
    const std::uint64_t r = std::uint64_t(s) + carry * offset64;
    // r >= p exactly when r + 59 carries out of 64 bits; r - p is then r + 59.
    const wide d = wide(r) + offset64;
    return select(mask_of(std::uint64_t(d >> 64)), std::uint64_t(d), r);
}

// One POLY step (RFC 4418 §5.3.1): a word in the top 2^32 of the range is
// sent as the marker p - 1 followed by the word minus the offset. Both
// paths are computed and the result picked by mask.
std::uint64_t poly64_step(std::uint64_t y, std::uint64_t k, std::uint64_t m) noexcept
{
    // m >= 2^64 - 2^32 exactly when its top 32 bits are all ones.
    const std::uint64_t top_clear = ~m >> 32; // zero when they are
    const std::uint64_t big = mask_of((top_clear - 1) >> 63);
    const std::uint64_t marked = mul_add_64(y, k, p64 - 1);
    return mul_add_64(select(big, marked, y), k, select(big, m - offset64, m));
}

// --- POLY over 128-bit words, p = 2^128 - 159 --------------------------------

constexpr std::uint64_t offset128 = 159; // 2^128 - p128

// (k * y + m) mod p128, fully reduced, for k < 2^121 (each 64-bit half of
// the masked key is below 2^57) and any 128-bit y and m.
u128 mul_add_128(u128 y, u128 k, u128 m) noexcept
{
    // The 256-bit product in four 64-bit limbs; carries travel by shifts.
    wide acc = wide(y.lo) * k.lo;
    const std::uint64_t r0 = std::uint64_t(acc);
    acc >>= 64;
    acc += wide(y.lo) * k.hi;
    acc += wide(y.hi) * k.lo;
    const std::uint64_t r1 = std::uint64_t(acc);
    acc >>= 64;
    acc += wide(y.hi) * k.hi;
    const std::uint64_t r2 = std::uint64_t(acc);
    const std::uint64_t r3 = std::uint64_t(acc >> 64); // < 2^57

    // 2^128 = 159 (mod p): low + high * 159 + m, below 2^130.
    acc = wide(r0) + wide(r2) * offset128 + m.lo;
    std::uint64_t t0 = std::uint64_t(acc);
    acc >>= 64;
    acc += wide(r1) + wide(r3) * offset128 + m.hi;
    std::uint64_t t1 = std::uint64_t(acc);
    const std::uint64_t t2 = std::uint64_t(acc >> 64); // at most 3

    // Fold the bits above 2^128 once more; if that carries again, what is
    // left is below 3 * 159, so the last fold cannot carry.
    acc = wide(t0) + wide(t2) * offset128;
    t0 = std::uint64_t(acc);
    acc = (acc >> 64) + t1;
    t1 = std::uint64_t(acc);
    const std::uint64_t c = std::uint64_t(acc >> 64);
    acc = wide(t0) + c * offset128;
    t0 = std::uint64_t(acc);
    t1 += std::uint64_t(acc >> 64);

    // Subtract p once when t >= p, i.e. when t + 159 carries out of 128 bits.
    acc = wide(t0) + offset128;
    const std::uint64_t u0 = std::uint64_t(acc);
    acc = (acc >> 64) + t1;
    const std::uint64_t u1 = std::uint64_t(acc);
    const std::uint64_t over = mask_of(std::uint64_t(acc >> 64));
    return {select(over, u1, t1), select(over, u0, t0)};
}

u128 poly128_step(u128 y, u128 k, u128 m) noexcept
{
    // m >= 2^128 - 2^96 exactly when its top 32 bits are all ones.
    const std::uint64_t top_clear = ~m.hi >> 32;
    const std::uint64_t big = mask_of((top_clear - 1) >> 63);
    // marker = p - 1 = 2^128 - 160; word - offset never borrows across the
    // halves for a big word (its low half may, so the borrow is carried).
    const u128 marked = mul_add_128(y, k, {~std::uint64_t(0), ~std::uint64_t(0) - offset128});
    const wide lo_minus = wide(m.lo) - offset128;
    const std::uint64_t borrow = std::uint64_t(lo_minus >> 64) & 1; // all ones above when it wrapped
    const u128 y_in{select(big, marked.hi, y.hi), select(big, marked.lo, y.lo)};
    const u128 m_in{select(big, m.hi - borrow, m.hi), select(big, std::uint64_t(lo_minus), m.lo)};
    return mul_add_128(y_in, k, m_in);
}

// --- L3 -----------------------------------------------------------------------

constexpr std::uint64_t p36 = 0xFFFFFFFFBull; // 2^36 - 5
constexpr std::uint64_t low36 = (std::uint64_t(1) << 36) - 1;

// x mod p36 for x below 2^64, without a division (whose time may depend on
// its operands): fold 2^36 = 5 twice, then subtract p once if needed.
std::uint64_t mod_p36(std::uint64_t x) noexcept
{
    x = (x >> 36) * 5 + (x & low36); // < 2^36 + 2^31
    x = (x >> 36) * 5 + (x & low36); // < 2^36 + 5, below 2p
    const std::uint64_t d = x - p36;
    // d wraps (top bit set) exactly when x < p.
    return select(mask_of(d >> 63), x, d);
}

} // namespace

void nh(const std::uint32_t* key, const std::uint8_t* msg, std::size_t len, std::size_t streams,
        std::uint64_t* out) noexcept
{
    // One loop per stream count, so the inner loop is fully unrolled.
    if (streams == 2)
        nh_streams<2>(key, msg, len, out);
    else
        nh_streams<4>(key, msg, len, out);
}

poly_key make_poly_key(const std::uint8_t* key24) noexcept
{
    poly_key k;
    k.k64 = load_u64(key24) & key_mask;
    k.k128 = {load_u64(key24 + 8) & key_mask, load_u64(key24 + 16) & key_mask};
    return k;
}

// L2 runs POLY-64 over this many L1 outputs (2^17 bytes) before it switches.
constexpr std::uint64_t poly64_words = std::uint64_t(1) << 14;
// The byte 0x80 that ends the POLY-128 input, at the start of a word half.
constexpr std::uint64_t end_marker = std::uint64_t(0x80) << 56;

void poly_hash::reset() noexcept
{
    y64_ = 1;
    y128_ = {};
    words_ = 0;
    half_ = 0;
}

void poly_hash::absorb(const poly_key& key, std::uint64_t word) noexcept
{
    // Branches here depend on the message length only.
    if (words_ < poly64_words) {
        y64_ = poly64_step(y64_, key.k64, word);
    } else {
        if (words_ == poly64_words)
            y128_ = poly128_step({0, 1}, key.k128, {0, y64_}); // POLY-128 starts from y = 1 and the POLY-64 result
        if ((words_ - poly64_words) % 2 == 0)
            half_ = word;
        else
            y128_ = poly128_step(y128_, key.k128, {half_, word});
    }
    ++words_;
}

u128 poly_hash::finish(const poly_key& key) noexcept
{
    if (words_ <= poly64_words)
        return {0, y64_};
    // The rest of the input gets the byte 0x80 and zeros to a whole word.
    if ((words_ - poly64_words) % 2 == 1)
        return poly128_step(y128_, key.k128, {half_, end_marker});
    return poly128_step(y128_, key.k128, {end_marker, 0});
}

l3_key make_l3_key(const std::uint8_t* key64, const std::uint8_t* key4) noexcept
{
    l3_key k;
    for (std::size_t i = 0; i < 8; ++i)
        k.k[i] = mod_p36(load_u64(key64 + 8 * i));
    k.mask = load_u32(key4);
    return k;
}

std::uint32_t l3(const l3_key& key, u128 m) noexcept
{
    // Eight 16-bit big-endian words times keys below 2^36: the sum is below 2^55.
    std::uint64_t y = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        y += ((m.hi >> (48 - 16 * i)) & 0xFFFF) * key.k[i];
        y += ((m.lo >> (48 - 16 * i)) & 0xFFFF) * key.k[4 + i];
    }
    return std::uint32_t(mod_p36(y)) ^ key.mask;
}

} // namespace longhaul::detail::uhash
