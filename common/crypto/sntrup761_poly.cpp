// sntrup761's ring arithmetic and encodings ("NTRU Prime: round 3", sections
// on Streamlined NTRU Prime): R = Z[x]/(x^p - x - 1) modulo q and 3, the
// reciprocals by constant-time division steps, the sorting network behind
// Short_fromlist, and Encode/Decode for Rq, Rounded and Small. The KEM on top
// is sntrup761.cpp.
//
// Constant time: coefficients live in int32 arithmetic reduced by Barrett
// (freeze), never by a division instruction; the reciprocals run a fixed
// number of division steps whose swaps are masks; the sort is a fixed network
// of masked min/max. Only Decode divides, and it only sees public bytes.
#include "common/crypto/sntrup761.hpp"

#include <array>
#include <cstdint>
#include <vector>

// The constant-time loops have no data-dependent branches, so libFuzzer's
// coverage hooks in them (a traced comparison per iteration, most of a
// fuzzing run's time) can find nothing: the fuzzing build leaves them out.
#if defined(__clang__) && __clang_major__ >= 13
#define LONGHAUL_SNTRUP761_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define LONGHAUL_SNTRUP761_NO_COVERAGE
#endif

namespace longhaul::sntrup761::detail {

namespace {

// ---------------------------------------------------------------- masks and reduction

// -1 when x < 0, else 0 (C++20 shifts signed values arithmetically).
constexpr std::int32_t negative_mask(std::int32_t x) noexcept { return x >> 31; }

// x mod m, centered in [-(m-1)/2, (m-1)/2], for |x| <= 2^30 and odd m. A
// multiple of m above 2^30 (plus the half that centres the result) makes the
// value non-negative without changing its class; a Barrett quotient that is
// at most one short leaves [0, 2m), and one masked subtraction finishes.
template <std::int32_t m>
constexpr std::int32_t freeze(std::int32_t x) noexcept
{
    constexpr auto um = static_cast<std::uint32_t>(m);
    constexpr std::uint32_t half = (um - 1) / 2;
    constexpr std::uint32_t bias = um * ((std::uint32_t{1} << 30) / um + 1) + half;
    constexpr std::uint64_t barrett = (std::uint64_t{1} << 32) / um;
    const std::uint32_t y = static_cast<std::uint32_t>(x) + bias; // wraps to the true value
    const auto t = static_cast<std::uint32_t>((std::uint64_t{y} * barrett) >> 32);
    std::uint32_t r = y - t * um;
    r -= um;
    r += um & (0u - (r >> 31));
    return static_cast<std::int32_t>(r) - static_cast<std::int32_t>(half);
}

constexpr std::int32_t slow_freeze(std::int64_t x, std::int32_t m)
{
    std::int64_t r = ((x % m) + m) % m;
    return static_cast<std::int32_t>(r > (m - 1) / 2 ? r - m : r);
}

// Checked at compile time on a sparse sweep of the whole range and densely
// around 0 (small enough for clang's constexpr step limit).
template <std::int32_t m>
constexpr bool freeze_is_exact()
{
    for (std::int64_t x = -(std::int64_t{1} << 30); x <= (std::int64_t{1} << 30); x += 1000003)
        if (freeze<m>(static_cast<std::int32_t>(x)) != slow_freeze(x, m))
            return false;
    for (std::int32_t x = -m - 2; x <= m + 2; ++x)
        if (freeze<m>(x) != slow_freeze(x, m))
            return false;
    return freeze<m>(1 << 30) == slow_freeze(1 << 30, m) && freeze<m>(-(1 << 30)) == slow_freeze(-(1 << 30), m);
}
static_assert(freeze_is_exact<q>());
static_assert(freeze_is_exact<3>());

// a^e in Z_m by square and multiply; e is public (m - 2 for a reciprocal),
// so the branch on its bits reveals nothing.
template <std::int32_t m>
constexpr std::int32_t power(std::int32_t a, std::uint32_t e) noexcept
{
    std::int32_t result = 1;
    for (; e != 0; e >>= 1) {
        if (e & 1)
            result = freeze<m>(result * a);
        a = freeze<m>(a * a);
    }
    return result;
}

constexpr std::int32_t one_third = power<q>(3, q - 2);
static_assert(freeze<q>(3 * one_third) == 1);

// ---------------------------------------------------------------- ring arithmetic

// out = a * b in Z_m[x]/(x^p - x - 1). The product's term of degree p + k
// folds back onto degrees k and k + 1 (x^p = x + 1); each low coefficient
// receives at most two of them, so with |a_i| <= q12 and |b_j| <= 2 every
// sum stays below 3 * 2p * q12 < 2^24, well inside freeze's range.
template <std::int32_t m, class Out, class A, class B>
LONGHAUL_SNTRUP761_NO_COVERAGE void ring_mult(Out& out, const A& a, const B& b)
{
    // Raw pointers in the loops: the fuzzing build's checked operator[]
    // would cost a call per access.
    wiped<std::array<std::int32_t, 2 * p - 1>> acc_store;
    std::int32_t* acc = acc_store.data();
    const auto* bp = b.data();
    for (std::size_t i = 0; i < p; ++i) {
        const std::int32_t ai = a[i];
        for (std::size_t j = 0; j < p; ++j)
            acc[i + j] += ai * bp[j];
    }
    for (std::size_t k = 2 * p - 2; k >= p; --k) {
        acc[k - p] += acc[k];
        acc[k - p + 1] += acc[k];
    }
    for (std::size_t i = 0; i < p; ++i)
        out[i] = static_cast<typename Out::value_type>(freeze<m>(acc[i]));
}

// out = 1 / (s a) in Z_m[x]/(x^p - x - 1) for a small polynomial a, given
// s_inverse = 1/s in Z_m (m prime: 3 or q). Returns 0 when a is invertible,
// -1 when it is not (out is then meaningless).
//
// The extended gcd by division steps (Bernstein and Yang, "Fast constant-time
// gcd computation and modular inversion", the method the NTRU Prime
// submission describes): on the reversed polynomials f = x^p P(1/x) (P the
// modulus) and g = x^(p-1) a(1/x), each step swaps f and g when delta > 0 and
// g(0) != 0, replaces g by (f(0) g - g(0) f) / x and keeps multipliers with
// v a = x^(k-1) f and r a = x^k g modulo P's reversal after k steps. After
// 2p - 1 steps (the sum of the degrees) g is 0, f is the gcd, which is a
// constant exactly when delta is 0, and then reversing v and dividing by that
// constant gives the reciprocal. Every step touches every coefficient, and
// the swap is a mask: nothing depends on the values.
template <std::int32_t m, class Out>
LONGHAUL_SNTRUP761_NO_COVERAGE std::int32_t reciprocal(Out& out, const small_poly& a, std::int32_t s_inverse)
{
    wiped<std::array<std::int32_t, p + 1>> f_store, g_store, v_store, r_store;
    std::int32_t* f = f_store.data(); // raw pointers: see ring_mult
    std::int32_t* g = g_store.data();
    std::int32_t* v = v_store.data();
    std::int32_t* r = r_store.data();
    f[0] = 1;
    f[p - 1] = -1;
    f[p] = -1;
    for (std::size_t i = 0; i < p; ++i)
        g[p - 1 - i] = a[i];
    r[0] = freeze<m>(s_inverse);
    std::int32_t delta = 1;

    for (std::size_t step = 0; step < 2 * p - 1; ++step) {
        for (std::size_t i = p; i > 0; --i)
            v[i] = v[i - 1];
        v[0] = 0;

        const std::int32_t swap = value_barrier(negative_mask(-delta) & nonzero_mask(g[0]));
        delta ^= swap & (delta ^ -delta);
        delta += 1;
        for (std::size_t i = 0; i <= p; ++i) {
            const std::int32_t tf = swap & (f[i] ^ g[i]);
            f[i] ^= tf;
            g[i] ^= tf;
            const std::int32_t tv = swap & (v[i] ^ r[i]);
            v[i] ^= tv;
            r[i] ^= tv;
        }

        // g's constant term cancels; shifting down in the same pass divides
        // by x (g[i + 1] is read before it is overwritten).
        const std::int32_t f0 = f[0];
        const std::int32_t g0 = g[0];
        for (std::size_t i = 0; i < p; ++i)
            g[i] = freeze<m>(f0 * g[i + 1] - g0 * f[i + 1]);
        g[p] = 0;
        for (std::size_t i = 0; i <= p; ++i)
            r[i] = freeze<m>(f0 * r[i] - g0 * v[i]);
    }

    const std::int32_t scale = power<m>(f[0], static_cast<std::uint32_t>(m - 2));
    for (std::size_t i = 0; i < p; ++i)
        out[i] = static_cast<typename Out::value_type>(freeze<m>(scale * v[p - 1 - i]));
    return nonzero_mask(delta);
}

// ---------------------------------------------------------------- sorting network

// a, b = min, max without a branch: the borrow of b - a is the mask.
inline void sort_minmax(std::uint32_t& a, std::uint32_t& b) noexcept
{
    const std::uint64_t diff = std::uint64_t{b} - std::uint64_t{a};
    const auto mask = static_cast<std::uint32_t>(value_barrier(-static_cast<std::int32_t>(diff >> 63)));
    const std::uint32_t t = (a ^ b) & mask;
    a ^= t;
    b ^= t;
}

// Batcher's merge exchange for any length (Knuth, TAOCP vol. 3, 5.2.2,
// Algorithm M): which pairs are compared depends only on the length.
LONGHAUL_SNTRUP761_NO_COVERAGE void sort_network(std::array<std::uint32_t, p>& x) noexcept
{
    std::size_t top = 1;
    while (top < p)
        top <<= 1;
    for (std::size_t stride = top / 2; stride > 0; stride /= 2) {
        std::size_t group = top / 2;
        std::size_t offset = 0;
        std::size_t d = stride;
        for (;;) {
            for (std::size_t i = 0; i + d < p; ++i)
                if ((i & stride) == offset)
                    sort_minmax(x[i], x[i + d]);
            if (group == stride)
                break;
            d = group - stride;
            group /= 2;
            offset = stride;
        }
    }
}

// ---------------------------------------------------------------- encodings

constexpr std::uint32_t encode_limit = 16384;
constexpr std::uint32_t rounded_modulus = (q + 2) / 3; // 1531 values (c + q12) / 3

// Encode: values r[i] < m0 into bytes. Pairs merge into one value below the
// product of their moduli, whose low bytes go out while that product is at
// least 2^14; the merged values form the next, half as long, level, down to
// one value written byte by byte. How many bytes go out where depends only on
// the moduli; the values see products, sums and shifts, so the ciphertext
// re-encryption of decapsulation runs in constant time. Overwrites r.
void encode_values(std::array<std::uint32_t, p>& r, std::uint32_t m0, std::uint8_t* out)
{
    std::array<std::uint32_t, p> m;
    m.fill(m0);
    std::size_t len = p;
    while (len > 1) {
        // Level n + 1 goes in place: entry i / 2 is written after entries i
        // and i + 1 are read, and nothing later reads below i + 2.
        for (std::size_t i = 0; i + 1 < len; i += 2) {
            std::uint32_t mm = m[i] * m[i + 1];
            std::uint32_t value = r[i] + r[i + 1] * m[i];
            while (mm >= encode_limit) {
                *out++ = static_cast<std::uint8_t>(value);
                value >>= 8;
                mm = (mm + 255) >> 8;
            }
            r[i / 2] = value;
            m[i / 2] = mm;
        }
        if (len & 1) {
            r[len / 2] = r[len - 1];
            m[len / 2] = m[len - 1];
        }
        len = (len + 1) / 2;
    }
    std::uint32_t value = r[0];
    for (std::uint32_t mm = m[0]; mm > 1; mm = (mm + 255) >> 8) {
        *out++ = static_cast<std::uint8_t>(value);
        value >>= 8;
    }
}

// The number of bytes encode_values writes for p values below m0.
constexpr std::size_t encoded_length(std::uint32_t m0)
{
    std::array<std::uint32_t, p> m{};
    m.fill(m0);
    std::size_t n = 0;
    std::size_t len = p;
    while (len > 1) {
        for (std::size_t i = 0; i + 1 < len; i += 2) {
            std::uint32_t mm = m[i] * m[i + 1];
            for (; mm >= encode_limit; mm = (mm + 255) >> 8)
                ++n;
            m[i / 2] = mm;
        }
        if (len & 1)
            m[len / 2] = m[len - 1];
        len = (len + 1) / 2;
    }
    for (std::uint32_t mm = m[0]; mm > 1; mm = (mm + 255) >> 8)
        ++n;
    return n;
}
static_assert(encoded_length(q) == public_key_bytes);
static_assert(encoded_length(rounded_modulus) == rounded_bytes);

// Decode: the inverse of Encode on its image, and total elsewhere: every
// value comes out reduced modulo its modulus whatever the bytes, so no
// decoded value is ever out of range. It only sees public bytes (a peer's
// public key, a ciphertext), so its divisions may take data-dependent time.
// Reads exactly the bytes Encode writes for the moduli m.
void decode_values(std::uint32_t* r, const std::uint8_t* s, const std::vector<std::uint32_t>& m)
{
    const std::size_t len = m.size();
    if (len == 1) {
        std::uint32_t value = 0; // at most two bytes: m[0] < 2^14
        unsigned shift = 0;
        for (std::uint32_t mm = m[0]; mm > 1; mm = (mm + 255) >> 8, shift += 8)
            value |= std::uint32_t{*s++} << shift;
        r[0] = value % m[0];
        return;
    }
    const std::size_t pairs = len / 2;
    std::vector<std::uint32_t> m2((len + 1) / 2);
    std::vector<std::uint32_t> low(pairs);
    std::vector<std::uint32_t> scale(pairs);
    for (std::size_t i = 0; i < pairs; ++i) {
        std::uint32_t mm = m[2 * i] * m[2 * i + 1];
        std::uint32_t value = 0;
        std::uint32_t t = 1;
        for (; mm >= encode_limit; mm = (mm + 255) >> 8) {
            value += std::uint32_t{*s++} * t;
            t <<= 8;
        }
        low[i] = value;
        scale[i] = t;
        m2[i] = mm;
    }
    if (len & 1)
        m2.back() = m.back();
    std::vector<std::uint32_t> r2(m2.size());
    decode_values(r2.data(), s, m2);
    // low < 2^16 and r2 < 2^14: the merged value stays below 2^31.
    for (std::size_t i = 0; i < pairs; ++i) {
        const std::uint32_t value = low[i] + scale[i] * r2[i];
        r[2 * i] = value % m[2 * i];
        r[2 * i + 1] = (value / m[2 * i]) % m[2 * i + 1];
    }
    if (len & 1)
        r[len - 1] = r2.back();
}

// x / 3 for a multiple of 3 below q, as a multiply-and-shift: no division
// instruction on the secret-derived re-encryption.
constexpr std::uint32_t third(std::uint32_t x) noexcept { return (x * 10923) >> 15; }

constexpr bool third_is_exact()
{
    for (std::uint32_t x = 0; x < static_cast<std::uint32_t>(q); x += 3)
        if (third(x) != x / 3)
            return false;
    return true;
}
static_assert(third_is_exact());

} // namespace

void rq_mult_small(fq_poly& out, const fq_poly& a, const small_poly& b) { ring_mult<q>(out, a, b); }

void r3_mult(small_poly& out, const small_poly& a, const small_poly& b) { ring_mult<3>(out, a, b); }

std::int32_t r3_reciprocal(small_poly& out, const small_poly& a) { return reciprocal<3>(out, a, 1); }

std::int32_t rq_reciprocal3(fq_poly& out, const small_poly& a) { return reciprocal<q>(out, a, one_third); }

void rq_round(fq_poly& a)
{
    for (auto& x : a)
        x = static_cast<std::int16_t>(x - freeze<3>(x));
}

void r3_from_rq_times3(small_poly& out, const fq_poly& a)
{
    for (std::size_t i = 0; i < p; ++i)
        out[i] = static_cast<std::int8_t>(freeze<3>(freeze<q>(3 * a[i])));
}

// Short_fromlist: the first w values get low bits 00 or 10 (coefficient -1
// or 1), the rest 01 (0); sorting the 32-bit values shuffles them by their
// random high bits, and the low bits give the coefficients.
void short_from_list(small_poly& out, std::array<std::uint32_t, p>& list)
{
    for (std::size_t i = 0; i < w; ++i)
        list[i] &= ~std::uint32_t{1};
    for (std::size_t i = w; i < p; ++i)
        list[i] = (list[i] & ~std::uint32_t{2}) | 1;
    sort_network(list);
    for (std::size_t i = 0; i < p; ++i)
        out[i] = static_cast<std::int8_t>(static_cast<std::int32_t>(list[i] & 3) - 1);
}

// Rq: Encode of r + q12 with every modulus q.
void rq_encode(const fq_poly& h, std::uint8_t* out)
{
    std::array<std::uint32_t, p> r;
    for (std::size_t i = 0; i < p; ++i)
        r[i] = static_cast<std::uint32_t>(h[i] + q12);
    encode_values(r, q, out);
}

void rq_decode(const std::uint8_t* in, fq_poly& h)
{
    std::array<std::uint32_t, p> r;
    decode_values(r.data(), in, std::vector<std::uint32_t>(p, q));
    for (std::size_t i = 0; i < p; ++i)
        h[i] = static_cast<std::int16_t>(static_cast<std::int32_t>(r[i]) - q12);
}

// Rounded: Encode of (c + q12) / 3 with every modulus 1531.
void rounded_encode(const fq_poly& c, std::uint8_t* out)
{
    wiped<std::array<std::uint32_t, p>> r;
    for (std::size_t i = 0; i < p; ++i)
        r[i] = third(static_cast<std::uint32_t>(c[i] + q12));
    encode_values(r, rounded_modulus, out);
}

void rounded_decode(const std::uint8_t* in, fq_poly& c)
{
    std::array<std::uint32_t, p> r;
    decode_values(r.data(), in, std::vector<std::uint32_t>(p, rounded_modulus));
    for (std::size_t i = 0; i < p; ++i)
        c[i] = static_cast<std::int16_t>(3 * static_cast<std::int32_t>(r[i]) - q12);
}

// Small: coefficient + 1 in two bits, four to a byte, lowest first; the last
// byte holds the single coefficient 760.
void small_encode(const small_poly& f, std::uint8_t* out)
{
    for (std::size_t i = 0; i < small_bytes; ++i) {
        unsigned byte = 0;
        for (std::size_t j = 0; j < 4 && 4 * i + j < p; ++j)
            byte |= static_cast<unsigned>(f[4 * i + j] + 1) << (2 * j);
        out[i] = static_cast<std::uint8_t>(byte);
    }
}

// Bits 11 (never written) decode to 2: only our own secret key is decoded
// this way, and a corrupt one still gives bounded coefficients.
void small_decode(const std::uint8_t* in, small_poly& f)
{
    for (std::size_t i = 0; i < p; ++i)
        f[i] = static_cast<std::int8_t>(((in[i / 4] >> (2 * (i % 4))) & 3) - 1);
}

} // namespace longhaul::sntrup761::detail

#undef LONGHAUL_SNTRUP761_NO_COVERAGE
