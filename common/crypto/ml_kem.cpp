// ML-KEM-768 from FIPS 203 (final, August 2024), algorithm by algorithm.
//
// Arithmetic: polynomial coefficients are kept fully reduced in [0, q) as
// uint16_t; products go through a Barrett reduction and sums through a
// masked conditional subtraction, so no branch, table index or division
// instruction ever depends on a secret coefficient. Matrix sampling (from the
// public rho) is the only data-dependent control flow.
//
// Hashes: H = SHA3-256, G = SHA3-512, J and PRF = SHAKE256, XOF = SHAKE128,
// all through OpenSSL EVP with explicitly fetched algorithms (the implicit
// fetch per call would cost more than the Keccak work for these short inputs).
#include "common/crypto/ml_kem.hpp"

#include "common/crypto/evp_handles.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>

namespace longhaul::ml_kem768 {

namespace {

using poly = std::array<std::uint16_t, 256>;

constexpr std::size_t n = 256;
constexpr std::uint32_t q = 3329;
constexpr std::size_t k = 3;      // ML-KEM-768: a 3 x 3 module
constexpr unsigned du = 10;       // (eta1 = eta2 = 2: sample_cbd2)
constexpr unsigned dv = 4;
constexpr std::size_t poly_bytes = 384;              // ByteEncode12 of one polynomial
constexpr std::size_t pke_key_bytes = k * poly_bytes; // t-hat in ek, s-hat in dk
constexpr std::size_t u_bytes = k * 32 * du;          // c1
constexpr std::size_t v_bytes = 32 * dv;              // c2

using poly_vec = std::array<poly, k>;
using poly_matrix = std::array<poly_vec, k>;
using block32 = std::array<std::uint8_t, 32>;

static_assert(encapsulation_key_bytes == pke_key_bytes + 32);
static_assert(decapsulation_key_bytes == 2 * pke_key_bytes + 3 * 32);
static_assert(ciphertext_bytes == u_bytes + v_bytes);

// ---------------------------------------------------------------- field arithmetic

// r mod q for r < 2q: subtract q, add it back where that went negative (the
// borrow becomes an all-ones mask).
constexpr std::uint16_t reduce_once(std::uint32_t r) noexcept
{
    r -= q;
    r += q & (0u - (r >> 31));
    return static_cast<std::uint16_t>(r);
}

// a mod q for any 32-bit a (Barrett): m = floor(2^32 / q) makes the quotient
// estimate t at most one short, so a - t*q lies in [0, 2q).
constexpr std::uint32_t barrett_m = static_cast<std::uint32_t>((std::uint64_t{1} << 32) / q);

constexpr std::uint16_t reduce(std::uint32_t a) noexcept
{
    const auto t = static_cast<std::uint32_t>((std::uint64_t{a} * barrett_m) >> 32);
    return reduce_once(a - t * q);
}

constexpr std::uint16_t add(std::uint16_t a, std::uint16_t b) noexcept { return reduce_once(std::uint32_t{a} + b); }
constexpr std::uint16_t sub(std::uint16_t a, std::uint16_t b) noexcept { return reduce_once(std::uint32_t{a} + q - b); }
constexpr std::uint16_t mul(std::uint16_t a, std::uint16_t b) noexcept { return reduce(std::uint32_t{a} * b); }

static_assert(reduce(0xffffffffu) == 0xffffffffu % q && reduce(q * q) == 0 && reduce(2 * q - 1) == q - 1);

// Compress_d (section 4.2.1): round(2^d * x / q) mod 2^d, written as
// floor((2^(d+1) x + q) / 2q) (q is odd, so there are no ties) with the
// division by 2q done as a multiplication by ceil(2^40 / 2q) and a shift.
constexpr unsigned compress_shift = 40;
constexpr std::uint64_t compress_m = ((std::uint64_t{1} << compress_shift) + 2 * q - 1) / (2 * q);

template <unsigned d>
constexpr std::uint16_t compress(std::uint16_t x) noexcept
{
    const std::uint64_t num = (std::uint64_t{x} << (d + 1)) + q;
    return static_cast<std::uint16_t>(((num * compress_m) >> compress_shift) & ((1u << d) - 1));
}

// Decompress_d: round(q * y / 2^d), halves rounded up as the standard's round().
template <unsigned d>
constexpr std::uint16_t decompress(std::uint16_t y) noexcept
{
    return static_cast<std::uint16_t>((q * y + (1u << (d - 1))) >> d);
}

// The multiply-and-shift is the exact division for every input it gets.
template <unsigned d>
constexpr bool compress_is_exact()
{
    for (std::uint32_t x = 0; x < q; ++x)
        if (compress<d>(static_cast<std::uint16_t>(x)) != ((((x << (d + 1)) + q) / (2 * q)) & ((1u << d) - 1)))
            return false;
    return true;
}
static_assert(compress_is_exact<1>() && compress_is_exact<dv>() && compress_is_exact<du>());
static_assert(decompress<1>(1) == 1665 && compress<1>(1665) == 1 && compress<1>(832) == 0 && compress<1>(833) == 1);

// ---------------------------------------------------------------- NTT tables

constexpr std::uint32_t pow_mod(std::uint32_t base, unsigned e)
{
    std::uint32_t r = 1;
    for (; e != 0; --e)
        r = r * base % q;
    return r;
}

constexpr unsigned bit_rev7(unsigned i)
{
    unsigned r = 0;
    for (int b = 0; b < 7; ++b)
        r |= ((i >> b) & 1u) << (6 - b);
    return r;
}

// zeta^BitRev7(i) (Algorithms 9, 10) and zeta^(2 BitRev7(i) + 1) (Algorithm
// 11), zeta = 17; the values of the standard's Appendix A.
constexpr auto zetas = [] {
    std::array<std::uint16_t, 128> z{};
    for (unsigned i = 0; i < 128; ++i)
        z[i] = static_cast<std::uint16_t>(pow_mod(17, bit_rev7(i)));
    return z;
}();

constexpr auto gammas = [] {
    std::array<std::uint16_t, 128> g{};
    for (unsigned i = 0; i < 128; ++i)
        g[i] = static_cast<std::uint16_t>(pow_mod(17, 2 * bit_rev7(i) + 1));
    return g;
}();

static_assert(zetas[0] == 1 && zetas[1] == 1729 && zetas[2] == 2580 && zetas[7] == 848);
static_assert(gammas[0] == 17 && gammas[1] == q - 17 && gammas[2] == 2761 && gammas[3] == q - 2761);

constexpr std::uint16_t inverse_128 = 3303; // 128^-1 mod q
static_assert(128 * inverse_128 % q == 1);

// Algorithm 9.
void ntt(poly& f) noexcept
{
    std::size_t i = 1;
    for (std::size_t len = 128; len >= 2; len /= 2) {
        for (std::size_t start = 0; start < n; start += 2 * len) {
            const std::uint16_t zeta = zetas[i++];
            for (std::size_t j = start; j < start + len; ++j) {
                const std::uint16_t t = mul(zeta, f[j + len]);
                f[j + len] = sub(f[j], t);
                f[j] = add(f[j], t);
            }
        }
    }
}

// Algorithm 10.
void inverse_ntt(poly& f) noexcept
{
    std::size_t i = 127;
    for (std::size_t len = 2; len <= 128; len *= 2) {
        for (std::size_t start = 0; start < n; start += 2 * len) {
            const std::uint16_t zeta = zetas[i--];
            for (std::size_t j = start; j < start + len; ++j) {
                const std::uint16_t t = f[j];
                f[j] = add(t, f[j + len]);
                f[j + len] = mul(zeta, sub(f[j + len], t));
            }
        }
    }
    for (auto& c : f)
        c = mul(c, inverse_128);
}

// acc += f (x) g: Algorithm 11 (MultiplyNTTs), with Algorithm 12
// (BaseCaseMultiply) on each pair, added into an accumulator as the
// matrix-vector products want. Each sum stays below 2q^2 < 2^32.
void multiply_ntts_add(poly& acc, const poly& f, const poly& g) noexcept
{
    for (std::size_t i = 0; i < 128; ++i) {
        const std::uint32_t a0 = f[2 * i], a1 = f[2 * i + 1];
        const std::uint32_t b0 = g[2 * i], b1 = g[2 * i + 1];
        const std::uint16_t c0 = reduce(a0 * b0 + std::uint32_t{reduce(a1 * b1)} * gammas[i]);
        const std::uint16_t c1 = reduce(a0 * b1 + a1 * b0);
        acc[2 * i] = add(acc[2 * i], c0);
        acc[2 * i + 1] = add(acc[2 * i + 1], c1);
    }
}

void add_to(poly& f, const poly& g) noexcept
{
    for (std::size_t i = 0; i < n; ++i)
        f[i] = add(f[i], g[i]);
}

// ---------------------------------------------------------------- encodings

// Algorithm 5 (ByteEncode_d): coefficient i fills bits d*i .. d*i+d-1 of the
// little-endian bit string (Algorithms 3 and 4 packed into one pass).
template <unsigned d>
void byte_encode(const poly& f, std::uint8_t* out) noexcept
{
    std::uint32_t acc = 0;
    unsigned bits = 0;
    for (const auto c : f) {
        acc |= std::uint32_t{c} << bits;
        bits += d;
        for (; bits >= 8; bits -= 8, acc >>= 8)
            *out++ = static_cast<std::uint8_t>(acc);
    }
    cleanse(&acc, sizeof acc);
}

// Algorithm 6 (ByteDecode_d) without the final reduction: the raw d-bit
// fields, which the ek check needs to see.
template <unsigned d>
void byte_decode_raw(const std::uint8_t* in, poly& f) noexcept
{
    std::uint32_t acc = 0;
    unsigned bits = 0;
    for (auto& c : f) {
        for (; bits < d; bits += 8)
            acc |= std::uint32_t{*in++} << bits;
        c = static_cast<std::uint16_t>(acc & ((1u << d) - 1));
        acc >>= d;
        bits -= d;
    }
    cleanse(&acc, sizeof acc);
}

// ByteDecode_12 proper: each field reduced mod q (a field is below 2^12 < 2q).
void byte_decode12(const std::uint8_t* in, poly& f) noexcept
{
    byte_decode_raw<12>(in, f);
    for (auto& c : f)
        c = reduce_once(c);
}

// ---------------------------------------------------------------- hashing

enum class keccak_fn { sha3_256, sha3_512, shake128, shake256 };

const EVP_MD* keccak_md(keccak_fn fn) noexcept
{
    // Fetched once; a null (SHA-3 unavailable) makes every use fail cleanly.
    struct fetched {
        detail::md_ptr sha3_256{EVP_MD_fetch(nullptr, "SHA3-256", nullptr)};
        detail::md_ptr sha3_512{EVP_MD_fetch(nullptr, "SHA3-512", nullptr)};
        detail::md_ptr shake128{EVP_MD_fetch(nullptr, "SHAKE128", nullptr)};
        detail::md_ptr shake256{EVP_MD_fetch(nullptr, "SHAKE256", nullptr)};
    };
    static const fetched mds;
    switch (fn) {
    case keccak_fn::sha3_256: return mds.sha3_256.get();
    case keccak_fn::sha3_512: return mds.sha3_512.get();
    case keccak_fn::shake128: return mds.shake128.get();
    case keccak_fn::shake256: return mds.shake256.get();
    }
    return nullptr;
}

// One EVP context reused for every hash of an operation. A failure is
// remembered rather than returned at each call (OpenSSL does not fail here in
// practice); the operation checks ok() once before it returns anything. A
// failed call leaves zeros in its output, so no loop waits on its bytes.
class keccak {
public:
    keccak() : ctx_(EVP_MD_CTX_new()), ok_(ctx_ != nullptr) {}

    void run(keccak_fn fn, std::initializer_list<byte_span> parts, mutable_byte_span out) noexcept
    {
        bool good = ok_ && EVP_DigestInit_ex2(ctx_.get(), keccak_md(fn), nullptr) == 1;
        for (const auto part : parts)
            good = good && EVP_DigestUpdate(ctx_.get(), part.data(), part.size()) == 1;
        if (fn == keccak_fn::shake128 || fn == keccak_fn::shake256) {
            good = good && EVP_DigestFinalXOF(ctx_.get(), out.data(), out.size()) == 1;
        } else {
            unsigned int len = 0;
            good = good && static_cast<std::size_t>(EVP_MD_CTX_get_size(ctx_.get())) == out.size() &&
                   EVP_DigestFinal_ex(ctx_.get(), out.data(), &len) == 1;
        }
        if (!good) {
            std::fill(out.begin(), out.end(), std::uint8_t{0});
            ok_ = false;
        }
    }

    bool ok() const noexcept { return ok_; }

private:
    detail::md_ctx_ptr ctx_;
    bool ok_;
};

constexpr std::size_t shake128_rate = 168;
// Enough for all 256 coefficients in about 99% of matrix entries (336
// candidates, each kept with probability 3329/4096); the rest re-run the XOF.
constexpr std::size_t xof_first_read = 3 * shake128_rate;

// Algorithm 7 (SampleNTT) on rho || x || y. The standard squeezes the XOF
// three bytes at a time until 256 coefficients are accepted; OpenSSL 3.0
// cannot squeeze incrementally, so the stream is read as one output of a
// fixed length, and when rejections use it up the XOF runs again for twice
// the length (SHAKE's shorter output is a prefix of the longer) and sampling
// continues where it stopped. rho is public, so the branches are too.
void sample_ntt(keccak& h, byte_span rho, std::uint8_t x, std::uint8_t y, poly& a)
{
    const std::array<std::uint8_t, 2> index{x, y};
    std::array<std::uint8_t, xof_first_read> first;
    bytes longer;
    mutable_byte_span stream = first;
    h.run(keccak_fn::shake128, {rho, index}, stream);
    std::size_t j = 0;
    std::size_t pos = 0;
    for (;;) {
        for (; j < n && pos + 3 <= stream.size(); pos += 3) {
            const std::uint16_t d1 = static_cast<std::uint16_t>(stream[pos] | ((stream[pos + 1] & 0x0f) << 8));
            const std::uint16_t d2 = static_cast<std::uint16_t>((stream[pos + 1] >> 4) | (stream[pos + 2] << 4));
            if (d1 < q)
                a[j++] = d1;
            if (d2 < q && j < n)
                a[j++] = d2;
        }
        if (j == n)
            return;
        if (!h.ok()) { // the caller reports it; only stop here
            std::fill(a.begin() + static_cast<std::ptrdiff_t>(j), a.end(), std::uint16_t{0});
            return;
        }
        longer.resize(stream.size() * 2);
        stream = longer;
        h.run(keccak_fn::shake128, {rho, index}, stream);
    }
}

// A-hat (Algorithms 13 and 14): entry [i][j] is SampleNTT(rho || j || i);
// the transpose, which encryption uses, swaps the two index bytes.
void generate_matrix(keccak& h, byte_span rho, bool transposed, poly_matrix& a)
{
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < k; ++j)
            sample_ntt(h, rho, static_cast<std::uint8_t>(transposed ? i : j),
                       static_cast<std::uint8_t>(transposed ? j : i), a[i][j]);
}

// Algorithm 8 (SamplePolyCBD_2) on PRF_2(seed, nonce) = SHAKE256(seed ||
// nonce, 128 bytes). Coefficient c takes bits 4c .. 4c+3 of the output:
// (b0 + b1) - (b2 + b3) mod q, one nibble of one byte.
void sample_cbd2(keccak& h, byte_span seed, std::uint8_t nonce, poly& f)
{
    wiped<std::array<std::uint8_t, 128>> prf;
    h.run(keccak_fn::shake256, {seed, {&nonce, 1}}, prf);
    for (std::size_t i = 0; i < prf.size(); ++i) {
        for (unsigned half = 0; half < 2; ++half) {
            const unsigned bits = prf[i] >> (4 * half);
            const unsigned x = (bits & 1) + ((bits >> 1) & 1);
            const unsigned y = ((bits >> 2) & 1) + ((bits >> 3) & 1);
            f[2 * i + half] = reduce_once(x + q - y);
        }
    }
}

// ---------------------------------------------------------------- K-PKE

// Algorithm 13 (K-PKE.KeyGen): ek_PKE (1184 bytes) and dk_PKE (1152 bytes).
void pke_key_gen(keccak& h, byte_span d, std::uint8_t* ek, std::uint8_t* dk)
{
    // (rho, sigma) = G(d || k): the final standard's domain separation.
    const std::uint8_t k_byte = k;
    wiped<std::array<std::uint8_t, 64>> g;
    h.run(keccak_fn::sha3_512, {d, {&k_byte, 1}}, g);
    const byte_span rho(g.data(), 32);
    const byte_span sigma(g.data() + 32, 32);

    poly_matrix a;
    generate_matrix(h, rho, false, a);
    wiped<poly_vec> s;
    wiped<poly_vec> e;
    std::uint8_t nonce = 0;
    for (auto& p : s)
        sample_cbd2(h, sigma, nonce++, p);
    for (auto& p : e)
        sample_cbd2(h, sigma, nonce++, p);
    for (std::size_t i = 0; i < k; ++i) {
        ntt(s[i]);
        ntt(e[i]);
    }
    // t-hat = A-hat s-hat + e-hat (t is public: it is the key)
    for (std::size_t i = 0; i < k; ++i) {
        poly t = e[i];
        for (std::size_t j = 0; j < k; ++j)
            multiply_ntts_add(t, a[i][j], s[j]);
        byte_encode<12>(t, ek + i * poly_bytes);
        byte_encode<12>(s[i], dk + i * poly_bytes);
    }
    std::copy(rho.begin(), rho.end(), ek + pke_key_bytes);
}

// Algorithm 14 (K-PKE.Encrypt) of the 32-byte message m with randomness r
// under ek_PKE (already checked or taken from a checked dk), into c.
void pke_encrypt(keccak& h, byte_span ek, byte_span m, byte_span r, std::uint8_t* c)
{
    poly_vec t_hat;
    for (std::size_t i = 0; i < k; ++i)
        byte_decode12(ek.data() + i * poly_bytes, t_hat[i]);
    poly_matrix a_t;
    generate_matrix(h, ek.subspan(pke_key_bytes, 32), true, a_t);

    wiped<poly_vec> y;
    wiped<poly_vec> e1;
    wiped<poly> e2;
    std::uint8_t nonce = 0;
    for (auto& p : y)
        sample_cbd2(h, r, nonce++, p);
    for (auto& p : e1)
        sample_cbd2(h, r, nonce++, p);
    sample_cbd2(h, r, nonce, e2);
    for (auto& p : y)
        ntt(p);

    // u = NTT^-1(A-hat^T y-hat) + e1, then c1 = ByteEncode_du(Compress_du(u))
    wiped<poly> u;
    for (std::size_t i = 0; i < k; ++i) {
        u.fill(0);
        for (std::size_t j = 0; j < k; ++j)
            multiply_ntts_add(u, a_t[i][j], y[j]);
        inverse_ntt(u);
        add_to(u, e1[i]);
        for (auto& coeff : u)
            coeff = compress<du>(coeff);
        byte_encode<du>(u, c + i * 32 * du);
    }

    // v = NTT^-1(t-hat^T y-hat) + e2 + mu, mu = Decompress_1(ByteDecode_1(m))
    wiped<poly> v;
    for (std::size_t j = 0; j < k; ++j)
        multiply_ntts_add(v, t_hat[j], y[j]);
    inverse_ntt(v);
    add_to(v, e2);
    wiped<poly> mu;
    byte_decode_raw<1>(m.data(), mu);
    for (auto& coeff : mu)
        coeff = decompress<1>(coeff);
    add_to(v, mu);
    for (auto& coeff : v)
        coeff = compress<dv>(coeff);
    byte_encode<dv>(v, c + u_bytes);
}

// Algorithm 15 (K-PKE.Decrypt) of c under dk_PKE, into the 32-byte m.
void pke_decrypt(byte_span dk, byte_span c, std::uint8_t* m)
{
    poly_vec u;
    for (std::size_t i = 0; i < k; ++i) {
        byte_decode_raw<du>(c.data() + i * 32 * du, u[i]);
        for (auto& coeff : u[i])
            coeff = decompress<du>(coeff);
        ntt(u[i]);
    }
    wiped<poly_vec> s_hat;
    for (std::size_t i = 0; i < k; ++i)
        byte_decode12(dk.data() + i * poly_bytes, s_hat[i]);
    // w = v' - NTT^-1(s-hat^T NTT(u')), then m = ByteEncode_1(Compress_1(w))
    wiped<poly> su;
    for (std::size_t j = 0; j < k; ++j)
        multiply_ntts_add(su, s_hat[j], u[j]);
    inverse_ntt(su);
    wiped<poly> w;
    byte_decode_raw<dv>(c.data() + u_bytes, w);
    for (std::size_t i = 0; i < n; ++i)
        w[i] = compress<1>(sub(decompress<dv>(w[i]), su[i]));
    byte_encode<1>(w, m);
}

} // namespace

key_pair key_gen_internal(byte_span d, byte_span z)
{
    if (d.size() != seed_bytes || z.size() != seed_bytes)
        throw std::invalid_argument("ml_kem768::key_gen_internal: seeds are 32 bytes");
    keccak h;
    key_pair kp{bytes(encapsulation_key_bytes), secret_bytes(decapsulation_key_bytes)};
    // dk = dk_PKE || ek || H(ek) || z (Algorithm 16)
    std::uint8_t* dk = kp.decapsulation_key.data();
    pke_key_gen(h, d, kp.encapsulation_key.data(), dk);
    std::copy(kp.encapsulation_key.begin(), kp.encapsulation_key.end(), dk + pke_key_bytes);
    h.run(keccak_fn::sha3_256, {kp.encapsulation_key}, {dk + pke_key_bytes + encapsulation_key_bytes, 32});
    std::copy(z.begin(), z.end(), dk + decapsulation_key_bytes - seed_bytes);
    if (!h.ok())
        detail::throw_openssl_error("ml_kem768 SHA-3");
    return kp;
}

result<encapsulation> encaps_internal(byte_span encapsulation_key, byte_span m)
{
    // Section 7.2: the type check (length) and the modulus check (every
    // 12-bit field below q, which is what decode-then-encode preserves).
    if (encapsulation_key.size() != encapsulation_key_bytes || m.size() != seed_bytes)
        return errc::invalid_argument;
    std::uint16_t out_of_range = 0;
    for (std::size_t i = 0; i < k; ++i) {
        poly f;
        byte_decode_raw<12>(encapsulation_key.data() + i * poly_bytes, f);
        for (const auto c : f)
            out_of_range |= static_cast<std::uint16_t>(c >= q);
    }
    if (out_of_range != 0)
        return errc::invalid_argument;

    keccak h;
    // (K, r) = G(m || H(ek))
    block32 ek_hash;
    h.run(keccak_fn::sha3_256, {encapsulation_key}, ek_hash);
    wiped<std::array<std::uint8_t, 64>> g;
    h.run(keccak_fn::sha3_512, {m, ek_hash}, g);
    encapsulation out{bytes(ciphertext_bytes), secret_bytes(byte_span(g.data(), 32))};
    pke_encrypt(h, encapsulation_key, m, byte_span(g.data() + 32, 32), out.ciphertext.data());
    if (!h.ok())
        return errc::crypto_error;
    return out;
}

result<secret_bytes> decaps(const secret_bytes& decapsulation_key, byte_span ciphertext)
{
    if (decapsulation_key.size() != decapsulation_key_bytes || ciphertext.size() != ciphertext_bytes)
        return errc::invalid_argument;
    const byte_span dk = decapsulation_key.span();
    const byte_span dk_pke = dk.first(pke_key_bytes);
    const byte_span ek = dk.subspan(pke_key_bytes, encapsulation_key_bytes);
    const byte_span ek_hash = dk.subspan(pke_key_bytes + encapsulation_key_bytes, 32);
    const byte_span z = dk.last(seed_bytes);

    keccak h;
    // Section 7.3's hash check: H(ek) and ek are both public, so the
    // comparison may stop early.
    block32 check;
    h.run(keccak_fn::sha3_256, {ek}, check);
    if (!h.ok())
        return errc::crypto_error;
    if (!std::equal(check.begin(), check.end(), ek_hash.begin()))
        return errc::invalid_argument;

    // m' = Decrypt(c); (K', r') = G(m' || h); K-bar = J(z || c); c' = Encrypt(m', r')
    wiped<block32> m;
    pke_decrypt(dk_pke, ciphertext, m.data());
    wiped<std::array<std::uint8_t, 64>> g;
    h.run(keccak_fn::sha3_512, {m, ek_hash}, g);
    wiped<block32> k_bar;
    h.run(keccak_fn::shake256, {z, ciphertext}, k_bar);
    wiped<std::array<std::uint8_t, ciphertext_bytes>> c_prime;
    pke_encrypt(h, ek, m, byte_span(g.data() + 32, 32), c_prime.data());
    if (!h.ok())
        return errc::crypto_error;

    // Implicit rejection without a branch: OR every byte difference together
    // (no early exit, and no strcmp-style stop at a zero byte), turn "no
    // difference" into an all-ones mask, and blend K' and K-bar with it.
    std::uint8_t diff = 0;
    for (std::size_t i = 0; i < ciphertext_bytes; ++i)
        diff |= static_cast<std::uint8_t>(ciphertext[i] ^ c_prime[i]);
    diff = value_barrier(diff);
    const auto equal_mask = value_barrier(static_cast<std::uint8_t>((std::uint32_t{diff} - 1) >> 8));
    secret_bytes key(shared_secret_bytes);
    for (std::size_t i = 0; i < shared_secret_bytes; ++i)
        key.data()[i] = static_cast<std::uint8_t>((g[i] & equal_mask) | (k_bar[i] & ~equal_mask));
    return key;
}

result<key_pair> key_gen()
{
    wiped<std::array<std::uint8_t, 2 * seed_bytes>> seeds;
    if (RAND_priv_bytes(seeds.data(), static_cast<int>(seeds.size())) != 1)
        return errc::crypto_error;
    try {
        return key_gen_internal(byte_span(seeds.data(), seed_bytes), byte_span(seeds.data() + seed_bytes, seed_bytes));
    } catch (const std::runtime_error&) {
        return errc::crypto_error;
    }
}

result<encapsulation> encaps(byte_span encapsulation_key)
{
    wiped<block32> m;
    if (RAND_priv_bytes(m.data(), static_cast<int>(m.size())) != 1)
        return errc::crypto_error;
    return encaps_internal(encapsulation_key, m);
}

} // namespace longhaul::ml_kem768
