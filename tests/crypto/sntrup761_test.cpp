#include "common/crypto/sntrup761.hpp"

#include "common/crypto/hash.hpp"

#include <doctest/doctest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

using namespace longhaul;
namespace sntrup = longhaul::sntrup761;

namespace {

// NIST's AES-256 CTR DRBG as the PQC known-answer generator (rng.c) has it:
// randombytes_init with a 48-byte entropy input and no personalisation, and
// randombytes that encrypts successive counter blocks, keeps the first xlen
// bytes and then updates key and counter, so how the bytes are asked for
// (4 at a time or 3044 at once) changes the stream.
class sntrup_nist_drbg {
public:
    explicit sntrup_nist_drbg(byte_span entropy) : ctx_(EVP_CIPHER_CTX_new())
    {
        REQUIRE(entropy.size() == 48);
        REQUIRE(ctx_);
        rekey();
        update(entropy.data());
    }

    bool generate(mutable_byte_span out)
    {
        std::size_t done = 0;
        while (done < out.size()) {
            std::array<std::uint8_t, 16> block;
            increment_v();
            encrypt(v_.data(), block.data());
            const std::size_t n = std::min<std::size_t>(16, out.size() - done);
            std::copy_n(block.begin(), n, out.begin() + static_cast<std::ptrdiff_t>(done));
            done += n;
        }
        update(nullptr);
        return true;
    }

private:
    struct ctx_free {
        void operator()(EVP_CIPHER_CTX* c) const noexcept { EVP_CIPHER_CTX_free(c); }
    };

    void increment_v()
    {
        for (int j = 15; j >= 0; --j)
            if (++v_[static_cast<std::size_t>(j)] != 0)
                break;
    }

    void rekey()
    {
        REQUIRE(EVP_EncryptInit_ex(ctx_.get(), EVP_aes_256_ecb(), nullptr, key_.data(), nullptr) == 1);
        REQUIRE(EVP_CIPHER_CTX_set_padding(ctx_.get(), 0) == 1);
    }

    void encrypt(const std::uint8_t* in, std::uint8_t* out)
    {
        int len = 0;
        if (EVP_EncryptUpdate(ctx_.get(), out, &len, in, 16) != 1 || len != 16)
            throw std::runtime_error("AES-256-ECB failed");
    }

    // AES256_CTR_DRBG_Update: three counter blocks, xored with the provided
    // 48 bytes when there are any, become the new key and counter.
    void update(const std::uint8_t* provided)
    {
        std::array<std::uint8_t, 48> temp;
        for (std::size_t i = 0; i < 3; ++i) {
            increment_v();
            encrypt(v_.data(), temp.data() + 16 * i);
        }
        if (provided != nullptr)
            for (std::size_t i = 0; i < 48; ++i)
                temp[i] ^= provided[i];
        std::copy_n(temp.begin(), 32, key_.begin());
        std::copy_n(temp.begin() + 32, 16, v_.begin());
        rekey();
    }

    std::array<std::uint8_t, 32> key_{};
    std::array<std::uint8_t, 16> v_{};
    std::unique_ptr<EVP_CIPHER_CTX, ctx_free> ctx_;
};

sntrup::random_fn sntrup_rng(sntrup_nist_drbg& drbg)
{
    return [&drbg](mutable_byte_span out) { return drbg.generate(out); };
}

sntrup_nist_drbg sntrup_seeded(std::uint8_t fill)
{
    const bytes entropy(48, fill);
    return sntrup_nist_drbg(entropy);
}

// fprintBstr of the KAT generator: the label, then uppercase hex.
std::string sntrup_kat_line(const char* label, byte_span b)
{
    static const char digits[] = "0123456789ABCDEF";
    std::string s = label;
    for (const auto x : b) {
        s += digits[x >> 4];
        s += digits[x & 15];
    }
    return s + "\n";
}

bool sntrup_same(byte_span a, byte_span b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

// Hash_prefix(b, x || y): SHA-512 through the library's hasher, truncated.
bytes sntrup_hash_prefix(std::uint8_t b, byte_span x, byte_span y = {})
{
    hasher h(hash_alg::sha512);
    const std::uint8_t prefix[1] = {b};
    h.update(byte_span(prefix, 1)).update(x).update(y);
    bytes out = h.finish();
    out.resize(32);
    return out;
}

// The rejection key of the specification's Decap: HashSession(0, rho, c) =
// Hash_prefix(0, Hash_prefix(3, rho) || c), rho at bytes 1540..1730 of sk.
bytes sntrup_rejection_key(const secret_bytes& sk, byte_span c)
{
    return sntrup_hash_prefix(0, sntrup_hash_prefix(3, sk.span().subspan(1540, 191)), c);
}

} // namespace

TEST_CASE("sntrup761: NIST known-answer test (100 counts, hashes as liboqs and PQClean publish them)")
{
    // The KAT generator's flow: a master DRBG seeded with 0, 1, ..., 47 draws
    // one 48-byte seed per count; each count reseeds the DRBG with its seed
    // and runs keypair, enc and dec. liboqs's kats.json holds the SHA-256 of
    // the first count ("single", also PQClean's META.yml nistkat-sha256) and
    // of all 100 ("all"), printed as NIST's .rsp without its "# sntrup761"
    // header and final blank line: counts separated by one blank line.
    const auto start = std::chrono::steady_clock::now();
    std::array<std::uint8_t, 48> entropy;
    for (std::size_t i = 0; i < entropy.size(); ++i)
        entropy[i] = static_cast<std::uint8_t>(i);
    sntrup_nist_drbg master(entropy);
    std::string single;
    std::string all;
    for (int count = 0; count < 100; ++count) {
        std::array<std::uint8_t, 48> seed;
        master.generate(seed);
        sntrup_nist_drbg drbg(seed);
        const auto rng = sntrup_rng(drbg);
        const auto keys = sntrup::key_gen(rng);
        REQUIRE(keys.has_value());
        const auto enc = sntrup::encaps(keys->public_key, rng);
        REQUIRE(enc.has_value());
        const auto k = sntrup::decaps(keys->secret_key, enc->ciphertext);
        REQUIRE(k.has_value());
        CHECK(sntrup_same(*k, enc->shared_secret));

        std::string entry = "count = " + std::to_string(count) + "\n";
        entry += sntrup_kat_line("seed = ", seed);
        entry += sntrup_kat_line("pk = ", keys->public_key);
        entry += sntrup_kat_line("sk = ", keys->secret_key);
        entry += sntrup_kat_line("ct = ", enc->ciphertext);
        entry += sntrup_kat_line("ss = ", enc->shared_secret);
        if (count == 0)
            single = entry;
        all += entry;
        if (count != 99)
            all += "\n";
    }
    CHECK(to_hex(digest(hash_alg::sha256, as_bytes(single))) ==
          "afc42c3a5b10f4ef69654250097ebda9b9564570f4086744b24a6daf2bd1f89a");
    CHECK(to_hex(digest(hash_alg::sha256, as_bytes(all))) ==
          "36e1e53d4e6e295e8fb804449958ad9a3719aa350e91933c65791b9117382d57");
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("sntrup761 KAT: 100 counts in " << ms << " ms");
}

TEST_CASE("sntrup761: key generation is deterministic in its randomness, and the sizes")
{
    auto d1 = sntrup_seeded(0x5a);
    auto d2 = sntrup_seeded(0x5a);
    const auto a = sntrup::key_gen(sntrup_rng(d1));
    const auto b = sntrup::key_gen(sntrup_rng(d2));
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(a->public_key.size() == sntrup::public_key_bytes);
    CHECK(a->secret_key.size() == sntrup::secret_key_bytes);
    CHECK(a->public_key == b->public_key);
    CHECK(sntrup_same(a->secret_key, b->secret_key));
    // The secret key carries pk and Hash_prefix(4, pk).
    const byte_span sk = a->secret_key.span();
    CHECK(sntrup_same(sk.subspan(382, 1158), a->public_key));
    CHECK(sntrup_same(sk.last(32), sntrup_hash_prefix(4, a->public_key)));

    const auto e1 = sntrup::encaps(a->public_key, sntrup_rng(d1));
    const auto e2 = sntrup::encaps(a->public_key, sntrup_rng(d2));
    REQUIRE(e1.has_value());
    REQUIRE(e2.has_value());
    CHECK(e1->ciphertext.size() == sntrup::ciphertext_bytes);
    CHECK(e1->shared_secret.size() == sntrup::shared_secret_bytes);
    CHECK(e1->ciphertext == e2->ciphertext);
    CHECK(sntrup_same(e1->shared_secret, e2->shared_secret));
}

TEST_CASE("sntrup761: randomised key generation and encapsulation round trip")
{
    for (int i = 0; i < 3; ++i) {
        const auto keys = sntrup::key_gen();
        REQUIRE(keys.has_value());
        const auto enc = sntrup::encaps(keys->public_key);
        REQUIRE(enc.has_value());
        const auto k = sntrup::decaps(keys->secret_key, enc->ciphertext);
        REQUIRE(k.has_value());
        CHECK(sntrup_same(*k, enc->shared_secret));
        // A second encapsulation gives a different secret.
        const auto enc2 = sntrup::encaps(keys->public_key);
        REQUIRE(enc2.has_value());
        CHECK_FALSE(sntrup_same(enc2->shared_secret, enc->shared_secret));
        const auto k2 = sntrup::decaps(keys->secret_key, enc2->ciphertext);
        REQUIRE(k2.has_value());
        CHECK(sntrup_same(*k2, enc2->shared_secret));
    }
}

TEST_CASE("sntrup761: implicit rejection of altered ciphertexts")
{
    auto drbg = sntrup_seeded(0x33);
    const auto rng = sntrup_rng(drbg);
    const auto keys = sntrup::key_gen(rng);
    REQUIRE(keys.has_value());
    const auto enc = sntrup::encaps(keys->public_key, rng);
    REQUIRE(enc.has_value());

    // Bits in the Rounded part (first, middle, last byte) and in the
    // confirmation hash (first and last byte).
    for (const std::size_t at : {std::size_t{0}, std::size_t{500}, std::size_t{1006}, std::size_t{1007},
                                 std::size_t{1038}}) {
        CAPTURE(at);
        bytes c = enc->ciphertext;
        c[at] ^= 0x01;
        const auto k = sntrup::decaps(keys->secret_key, c);
        REQUIRE(k.has_value());
        CHECK_FALSE(sntrup_same(*k, enc->shared_secret));
        CHECK(sntrup_same(*k, sntrup_rejection_key(keys->secret_key, c)));
    }
    // Bytes that are no valid ciphertext at all, and a ciphertext for
    // another key pair.
    for (const std::uint8_t fill : {std::uint8_t{0}, std::uint8_t{0xff}}) {
        const bytes c(sntrup::ciphertext_bytes, fill);
        const auto k = sntrup::decaps(keys->secret_key, c);
        REQUIRE(k.has_value());
        CHECK(sntrup_same(*k, sntrup_rejection_key(keys->secret_key, c)));
    }
    const auto other = sntrup::key_gen(rng);
    REQUIRE(other.has_value());
    const auto k = sntrup::decaps(other->secret_key, enc->ciphertext);
    REQUIRE(k.has_value());
    CHECK(sntrup_same(*k, sntrup_rejection_key(other->secret_key, enc->ciphertext)));
    // The unaltered ciphertext still decapsulates.
    const auto good = sntrup::decaps(keys->secret_key, enc->ciphertext);
    REQUIRE(good.has_value());
    CHECK(sntrup_same(*good, enc->shared_secret));
    // The accepted key is HashSession(1, r, c); its prefix differs from the
    // rejection's, so even rho == r could not make them collide.
    CHECK_FALSE(sntrup_same(*good, sntrup_rejection_key(keys->secret_key, enc->ciphertext)));
}

TEST_CASE("sntrup761: wrong lengths are refused, any public key content is accepted")
{
    auto drbg = sntrup_seeded(0x44);
    const auto rng = sntrup_rng(drbg);
    const auto keys = sntrup::key_gen(rng);
    REQUIRE(keys.has_value());
    const auto enc = sntrup::encaps(keys->public_key, rng);
    REQUIRE(enc.has_value());

    for (const std::size_t n : {std::size_t{0}, std::size_t{1157}, std::size_t{1159}, std::size_t{1184}}) {
        const auto r = sntrup::encaps(bytes(n, 0x01), rng);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == errc::invalid_argument);
        const auto r2 = sntrup::encaps(bytes(n, 0x01));
        REQUIRE_FALSE(r2.has_value());
        CHECK(r2.error() == errc::invalid_argument);
    }
    for (const std::size_t n : {std::size_t{0}, std::size_t{1038}, std::size_t{1040}}) {
        const auto r = sntrup::decaps(keys->secret_key, bytes(n, 0x01));
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == errc::invalid_argument);
    }
    for (const std::size_t n : {std::size_t{0}, std::size_t{1762}, std::size_t{1764}}) {
        const auto r = sntrup::decaps(secret_bytes(n), enc->ciphertext);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error() == errc::invalid_argument);
    }
    // Decode is total: every 1158-byte string is a public key.
    for (const std::uint8_t fill : {std::uint8_t{0}, std::uint8_t{0x80}, std::uint8_t{0xff}}) {
        const auto r = sntrup::encaps(bytes(sntrup::public_key_bytes, fill), rng);
        REQUIRE(r.has_value());
        CHECK(r->ciphertext.size() == sntrup::ciphertext_bytes);
    }
}

TEST_CASE("sntrup761: a failing random source is an error, not an exception")
{
    const sntrup::random_fn never = [](mutable_byte_span) { return false; };
    const auto a = sntrup::key_gen(never);
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error() == errc::crypto_error);

    const sntrup::random_fn throws = [](mutable_byte_span) -> bool { throw std::runtime_error("no entropy"); };
    const auto b = sntrup::key_gen(throws);
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error() == errc::crypto_error);

    const auto c = sntrup::key_gen(sntrup::random_fn{});
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error() == errc::crypto_error);

    // Failing only at rho, the last request of key generation (a 191-byte
    // one; the others are 4p = 3044 bytes).
    auto drbg = sntrup_seeded(0x55);
    const sntrup::random_fn late = [&drbg](mutable_byte_span out) {
        return out.size() == 3044 && drbg.generate(out);
    };
    const auto d = sntrup::key_gen(late);
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error() == errc::crypto_error);

    const auto keys = sntrup::key_gen();
    REQUIRE(keys.has_value());
    const auto e = sntrup::encaps(keys->public_key, never);
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error() == errc::crypto_error);

    // A source stuck on zero bytes draws the same g every time: key
    // generation either succeeds with it or gives up, with crypto_error,
    // after its bounded number of attempts; it never loops forever.
    const sntrup::random_fn zeros = [](mutable_byte_span out) {
        std::fill(out.begin(), out.end(), 0);
        return true;
    };
    const auto z = sntrup::key_gen(zeros);
    if (!z.has_value())
        CHECK(z.error() == errc::crypto_error);
}

TEST_CASE("sntrup761: ring reciprocals")
{
    namespace d = sntrup::detail;
    auto drbg = sntrup_seeded(0x66);
    int invertible = 0;
    for (int trial = 0; trial < 4; ++trial) {
        // A small g from the DRBG (3 L / 2^30 - 1 like Small_random).
        d::small_poly g;
        for (auto& c : g) {
            std::array<std::uint8_t, 4> b;
            drbg.generate(b);
            const std::uint32_t l = b[0] | b[1] << 8 | b[2] << 16 | std::uint32_t{b[3]} << 24;
            c = static_cast<std::int8_t>((((l & 0x3fffffffu) * 3) >> 30) - 1);
        }
        d::small_poly ginv;
        if (d::r3_reciprocal(ginv, g) != 0)
            continue;
        ++invertible;
        d::small_poly one;
        d::r3_mult(one, g, ginv);
        CHECK(one[0] == 1);
        CHECK(std::all_of(one.begin() + 1, one.end(), [](std::int8_t c) { return c == 0; }));

        // 1/(3g) in Rq, times g, is 1/3 = -1530 (3 * -1530 = -4590 = 1 mod q).
        d::fq_poly inv3;
        CHECK(d::rq_reciprocal3(inv3, g) == 0);
        d::fq_poly third;
        d::rq_mult_small(third, inv3, g);
        CHECK(third[0] == -1530);
        CHECK(std::all_of(third.begin() + 1, third.end(), [](std::int16_t c) { return c == 0; }));
    }
    CHECK(invertible > 0);

    d::small_poly zero{};
    d::small_poly out;
    CHECK(d::r3_reciprocal(out, zero) == -1);
    // 0 has no reciprocal in R3 or in Rq.
    d::fq_poly out_q;
    CHECK(d::rq_reciprocal3(out_q, zero) == -1);
}

TEST_CASE("sntrup761: short vectors have weight w, encodings round-trip and decode totally")
{
    namespace d = sntrup::detail;
    auto drbg = sntrup_seeded(0x77);
    for (int trial = 0; trial < 3; ++trial) {
        std::array<std::uint32_t, d::p> list;
        for (auto& l : list) {
            std::array<std::uint8_t, 4> b;
            drbg.generate(b);
            l = b[0] | b[1] << 8 | b[2] << 16 | std::uint32_t{b[3]} << 24;
        }
        if (trial == 2)
            list.fill(0); // ties everywhere: still exactly w non-zero coefficients
        d::small_poly s;
        d::short_from_list(s, list);
        std::size_t weight = 0;
        for (const auto c : s) {
            CHECK((c == -1 || c == 0 || c == 1));
            weight += c != 0;
        }
        CHECK(weight == d::w);

        std::array<std::uint8_t, d::small_bytes> enc;
        d::small_encode(s, enc.data());
        d::small_poly back;
        d::small_decode(enc.data(), back);
        CHECK(back == s);
    }

    // Rq and Rounded: encode(decode(bytes)) of arbitrary bytes gives
    // in-range values, and decode(encode(x)) == x.
    for (const std::uint8_t fill : {std::uint8_t{0}, std::uint8_t{0x5a}, std::uint8_t{0xff}}) {
        bytes pk(sntrup::public_key_bytes, fill);
        d::fq_poly h;
        d::rq_decode(pk.data(), h);
        CHECK(std::all_of(h.begin(), h.end(), [](std::int16_t c) { return c >= -d::q12 && c <= d::q12; }));
        bytes again(sntrup::public_key_bytes);
        d::rq_encode(h, again.data());
        d::fq_poly h2;
        d::rq_decode(again.data(), h2);
        CHECK(h2 == h);

        bytes ct(d::rounded_bytes, fill);
        d::fq_poly c;
        d::rounded_decode(ct.data(), c);
        CHECK(std::all_of(c.begin(), c.end(),
                          [](std::int16_t x) { return x >= -d::q12 && x <= d::q12 && (x + d::q12) % 3 == 0; }));
        bytes ct2(d::rounded_bytes);
        d::rounded_encode(c, ct2.data());
        d::fq_poly c2;
        d::rounded_decode(ct2.data(), c2);
        CHECK(c2 == c);
    }
    // The extremes of the ranges survive a round trip.
    d::fq_poly h;
    for (std::size_t i = 0; i < d::p; ++i)
        h[i] = static_cast<std::int16_t>(i % 2 ? d::q12 : -d::q12);
    bytes pk(sntrup::public_key_bytes);
    d::rq_encode(h, pk.data());
    d::fq_poly h2;
    d::rq_decode(pk.data(), h2);
    CHECK(h2 == h);
    d::rounded_encode(h, pk.data());
    d::rounded_decode(pk.data(), h2);
    CHECK(h2 == h);
}
