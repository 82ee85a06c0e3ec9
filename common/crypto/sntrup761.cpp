// Streamlined NTRU Prime sntrup761 from "NTRU Prime: round 3" (7 October
// 2020): p = 761, q = 4591, w = 286, the rings R = Z[x]/(x^p - x - 1), R3
// and Rq, the encodings of section 3 (Encode/Decode, Small, Rounded), and the
// KEM with its hashes: Hash_prefix(b, s) = first 32 bytes of SHA-512(b || s),
// HashConfirm(r, pk) = Hash_prefix(2, Hash_prefix(3, r) || Hash_prefix(4, pk)),
// HashSession(b, r, c) = Hash_prefix(b, Hash_prefix(3, r) || c).
//
// The ring arithmetic and encodings are sntrup761_poly.cpp. Constant time:
// besides that file's masked arithmetic, the decryption failure fallback and
// the implicit rejection here are masks. The only data-dependent control flow
// on secrets is the rejection of non-invertible g in key generation (as in
// the specification; it reveals only how many draws were thrown away).
#include "common/crypto/sntrup761.hpp"

#include "common/crypto/hash.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <initializer_list>

namespace longhaul::sntrup761 {

namespace {

using detail::fq_poly;
using detail::nonzero_mask;
using detail::p;
using detail::rounded_bytes;
using detail::small_bytes;
using detail::small_poly;
using detail::w;

constexpr std::size_t hash_bytes = 32;

// The secret key: Encode(f) || Encode(1/g in R3) || pk || rho || Hash_prefix(4, pk).
constexpr std::size_t sk_f = 0;
constexpr std::size_t sk_ginv = small_bytes;
constexpr std::size_t sk_pk = 2 * small_bytes;
constexpr std::size_t sk_rho = sk_pk + public_key_bytes;
constexpr std::size_t sk_cache = sk_rho + small_bytes;
static_assert(sk_cache + hash_bytes == secret_key_bytes);
static_assert(ciphertext_bytes == rounded_bytes + hash_bytes);
static_assert((p + 3) / 4 == small_bytes);

using hash32 = std::array<std::uint8_t, hash_bytes>;

// Key gen draws g again while it is not invertible in R3; with a working
// random source that happens with small probability, so a long run of
// failures means the source is broken, not unlucky.
constexpr int max_key_gen_attempts = 100;

// ---------------------------------------------------------------- random elements

// p random 32-bit values from one call for 4p bytes, little-endian, as the
// reference's Small_random and Short_random draw them (the NIST DRBG's
// output depends on how the bytes are asked for: the known-answer test
// matches only this way, not with one 4-byte call per value).
bool random_list(const random_fn& random, std::array<std::uint32_t, p>& out)
{
    wiped<std::array<std::uint8_t, 4 * p>> b;
    if (!random(mutable_byte_span(b.data(), b.size())))
        return false;
    for (std::size_t i = 0; i < p; ++i)
        out[i] = std::uint32_t{b[4 * i]} | std::uint32_t{b[4 * i + 1]} << 8 | std::uint32_t{b[4 * i + 2]} << 16 |
                 std::uint32_t{b[4 * i + 3]} << 24;
    return true;
}

// Small_random: each coefficient floor(3 L / 2^30) - 1 of a 30-bit L.
bool small_random(const random_fn& random, small_poly& out)
{
    wiped<std::array<std::uint32_t, p>> list;
    if (!random_list(random, list))
        return false;
    for (std::size_t i = 0; i < p; ++i)
        out[i] = static_cast<std::int8_t>((((list[i] & 0x3fffffffu) * 3) >> 30) - 1);
    return true;
}

// Short_random: Short_fromlist of p random values.
bool short_random(const random_fn& random, small_poly& out)
{
    wiped<std::array<std::uint32_t, p>> list;
    if (!random_list(random, list))
        return false;
    detail::short_from_list(out, list);
    return true;
}

// ---------------------------------------------------------------- hashes

// Hash_prefix(b, parts...): the first 32 bytes of SHA-512(b || parts...).
void hash_prefix(hasher& h, std::uint8_t b, std::initializer_list<byte_span> parts, std::uint8_t* out)
{
    h.reset();
    h.update(byte_span(&b, 1));
    for (const auto part : parts)
        h.update(part);
    wiped<std::array<std::uint8_t, 64>> full;
    h.finish_into(mutable_byte_span(full.data(), full.size()));
    std::copy_n(full.begin(), hash_bytes, out);
}

// HashSession(b, r, c) = Hash_prefix(b, Hash_prefix(3, r) || c).
void hash_session(hasher& h, std::uint8_t b, byte_span r_enc, byte_span c, std::uint8_t* out)
{
    wiped<hash32> hr;
    hash_prefix(h, 3, {r_enc}, hr.data());
    hash_prefix(h, b, {byte_span(hr.data(), hr.size()), c}, out);
}

// Hide(r, pk) with the cached Hash_prefix(4, pk): r_enc = Small encoding of
// r, c = Rounded(Round(h r)) || HashConfirm, HashConfirm(r, pk) =
// Hash_prefix(2, Hash_prefix(3, r_enc) || Hash_prefix(4, pk)).
void hide(hasher& hs, const small_poly& r, const fq_poly& h, byte_span cache, std::uint8_t* r_enc, std::uint8_t* c)
{
    detail::small_encode(r, r_enc);
    wiped<fq_poly> hr;
    detail::rq_mult_small(hr, h, r);
    detail::rq_round(hr);
    detail::rounded_encode(hr, c);
    wiped<hash32> hashed_r;
    hash_prefix(hs, 3, {byte_span(r_enc, small_bytes)}, hashed_r.data());
    hash_prefix(hs, 2, {byte_span(hashed_r.data(), hashed_r.size()), cache}, c + rounded_bytes);
}

bool rand_priv(mutable_byte_span out)
{
    return RAND_priv_bytes(out.data(), static_cast<int>(out.size())) == 1;
}

} // namespace

result<key_pair> key_gen(const random_fn& random)
{
    try {
        // g small and invertible in R3 (the loop is the specification's), f short.
        wiped<small_poly> g;
        wiped<small_poly> ginv;
        for (int attempt = 0;; ++attempt) {
            if (attempt == max_key_gen_attempts || !small_random(random, g))
                return errc::crypto_error;
            if (detail::r3_reciprocal(ginv, g) == 0)
                break;
        }
        wiped<small_poly> f;
        if (!short_random(random, f))
            return errc::crypto_error;
        // h = g / (3f) in Rq; Rq is a field and f is not 0, so 3f is invertible.
        wiped<fq_poly> finv;
        detail::rq_reciprocal3(finv, f);
        fq_poly h;
        detail::rq_mult_small(h, finv, g);

        key_pair kp{bytes(public_key_bytes), secret_bytes(secret_key_bytes)};
        detail::rq_encode(h, kp.public_key.data());
        std::uint8_t* sk = kp.secret_key.data();
        detail::small_encode(f, sk + sk_f);
        detail::small_encode(ginv, sk + sk_ginv);
        std::copy(kp.public_key.begin(), kp.public_key.end(), sk + sk_pk);
        if (!random(mutable_byte_span(sk + sk_rho, small_bytes)))
            return errc::crypto_error;
        hasher hs(hash_alg::sha512);
        hash_prefix(hs, 4, {kp.public_key}, sk + sk_cache);
        return kp;
    } catch (const std::exception&) {
        return errc::crypto_error;
    }
}

result<encapsulation> encaps(byte_span public_key, const random_fn& random)
{
    // Decode is total: any 1158 bytes are some h in Rq, so the length is the
    // whole of the public key check.
    if (public_key.size() != public_key_bytes)
        return errc::invalid_argument;
    try {
        hasher hs(hash_alg::sha512);
        hash32 cache;
        hash_prefix(hs, 4, {public_key}, cache.data());
        fq_poly h;
        detail::rq_decode(public_key.data(), h);
        wiped<small_poly> r;
        if (!short_random(random, r))
            return errc::crypto_error;

        encapsulation out{bytes(ciphertext_bytes), secret_bytes(shared_secret_bytes)};
        wiped<std::array<std::uint8_t, small_bytes>> r_enc;
        hide(hs, r, h, cache, r_enc.data(), out.ciphertext.data());
        hash_session(hs, 1, byte_span(r_enc.data(), r_enc.size()), out.ciphertext, out.shared_secret.data());
        return out;
    } catch (const std::exception&) {
        return errc::crypto_error;
    }
}

result<secret_bytes> decaps(const secret_bytes& secret_key, byte_span ciphertext)
{
    if (secret_key.size() != secret_key_bytes || ciphertext.size() != ciphertext_bytes)
        return errc::invalid_argument;
    try {
        const byte_span sk = secret_key.span();
        wiped<small_poly> f;
        wiped<small_poly> ginv;
        detail::small_decode(sk.data() + sk_f, f);
        detail::small_decode(sk.data() + sk_ginv, ginv);
        fq_poly c;
        detail::rounded_decode(ciphertext.data(), c);

        // Decrypt: e = 3 f c in R3 (reduced in Rq first), r' = e / g.
        wiped<fq_poly> cf;
        detail::rq_mult_small(cf, c, f);
        wiped<small_poly> e;
        detail::r3_from_rq_times3(e, cf);
        wiped<small_poly> ev;
        detail::r3_mult(ev, e, ginv);
        // r' if it has weight w, else the specification's fallback (1,...,1
        // (w times), 0,...,0), chosen by a mask.
        std::int32_t weight = 0;
        for (const auto x : ev)
            weight += x & 1;
        const std::int32_t keep = value_barrier(~nonzero_mask(value_barrier(weight - static_cast<std::int32_t>(w))));
        wiped<small_poly> r;
        for (std::size_t i = 0; i < p; ++i)
            r[i] = static_cast<std::int8_t>((ev[i] & keep) | ((i < w ? 1 : 0) & ~keep));

        // Re-encrypt with the public key and hash cached in sk, and compare
        // every byte (no early exit).
        fq_poly h;
        detail::rq_decode(sk.data() + sk_pk, h);
        hasher hs(hash_alg::sha512);
        wiped<std::array<std::uint8_t, small_bytes>> r_enc;
        wiped<std::array<std::uint8_t, ciphertext_bytes>> c2;
        hide(hs, r, h, sk.subspan(sk_cache, hash_bytes), r_enc.data(), c2.data());
        std::int32_t diff = 0;
        for (std::size_t i = 0; i < ciphertext_bytes; ++i)
            diff |= ciphertext[i] ^ c2[i];
        // Implicit rejection: on a mismatch rho replaces r and the session
        // hash takes prefix 0 instead of 1, both by the mask.
        const std::int32_t reject = value_barrier(nonzero_mask(value_barrier(diff)));
        const auto reject8 = static_cast<std::uint8_t>(reject);
        const std::uint8_t* rho = sk.data() + sk_rho;
        for (std::size_t i = 0; i < small_bytes; ++i)
            r_enc[i] = static_cast<std::uint8_t>(r_enc[i] ^ (reject8 & (r_enc[i] ^ rho[i])));
        secret_bytes key(shared_secret_bytes);
        hash_session(hs, static_cast<std::uint8_t>(1 + reject), byte_span(r_enc.data(), r_enc.size()), ciphertext,
                     key.data());
        return key;
    } catch (const std::exception&) {
        return errc::crypto_error;
    }
}

result<key_pair> key_gen() { return key_gen(random_fn(rand_priv)); }

result<encapsulation> encaps(byte_span public_key) { return encaps(public_key, random_fn(rand_priv)); }

} // namespace longhaul::sntrup761
