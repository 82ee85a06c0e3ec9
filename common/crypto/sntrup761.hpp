// Streamlined NTRU Prime sntrup761 ("NTRU Prime: round 3", 7 October 2020),
// the post-quantum half of sntrup761x25519-sha512. Written from the
// specification's algorithms over OpenSSL's SHA-512.
//
// Keys and ciphertexts are the specification's byte strings: the public key
// is Encode(h) (Rq), the secret key is Encode(f) || Encode(1/g) || pk || rho
// || Hash4(pk), and the ciphertext is Encode(Round(h r)) || HashConfirm.
// Every byte string of the right length decodes to a valid ring element, so
// the only check on peer bytes (a public key on the encapsulating side, a
// ciphertext on the decapsulating side) is their length: errc::invalid_argument.
// Nothing here throws or aborts on any input.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace longhaul::sntrup761 {

inline constexpr std::size_t public_key_bytes = 1158;
inline constexpr std::size_t secret_key_bytes = 1763;
inline constexpr std::size_t ciphertext_bytes = 1039;
inline constexpr std::size_t shared_secret_bytes = 32;

struct key_pair {
    bytes public_key;        // 1158 bytes
    secret_bytes secret_key; // 1763 bytes, wiped on destruction
};

struct encapsulation {
    bytes ciphertext;           // 1039 bytes
    secret_bytes shared_secret; // 32 bytes
};

// A source of random bytes: the randomised forms below use OpenSSL's
// RAND_priv_bytes; tests pass a deterministic one (NIST's AES-256 CTR DRBG
// for the known-answer test). Called as the reference implementation's
// randombytes() is, so the KAT's byte stream lines up: one call for 4p =
// 3044 bytes (p 32-bit values) for each Small_random and Short_random, and
// one for the 191 bytes of rho. Returning false (or throwing a
// std::exception) fails the operation with errc::crypto_error.
using random_fn = std::function<bool(mutable_byte_span)>;

// KeyGen' of the specification: g small and invertible in R3 (redrawn until
// it is; 100 non-invertible draws in a row mean a broken random source:
// errc::crypto_error), f short, h = g / (3f) in Rq, rho random.
result<key_pair> key_gen(const random_fn& random);

// Encap: r short, c = Encode(Round(h r)) || HashConfirm(r, pk), and the
// session key HashSession(1, r, c). A public key of the wrong length:
// errc::invalid_argument.
result<encapsulation> encaps(byte_span public_key, const random_fn& random);

// Decap with implicit rejection: a ciphertext that does not re-encrypt to
// itself yields HashSession(0, rho, c), not an error; neither the comparison
// nor the choice of the key branches on secret data. Wrong lengths:
// errc::invalid_argument.
result<secret_bytes> decaps(const secret_bytes& secret_key, byte_span ciphertext);

// The same with randomness from OpenSSL's RAND_priv_bytes.
result<key_pair> key_gen();
result<encapsulation> encaps(byte_span public_key);

// Internals shared by sntrup761.cpp (the KEM) and sntrup761_poly.cpp (ring
// arithmetic and encodings), and reachable by the tests; not an API.
namespace detail {

inline constexpr std::size_t p = 761;
inline constexpr std::int32_t q = 4591;
inline constexpr std::size_t w = 286;
inline constexpr std::int32_t q12 = (q - 1) / 2;
inline constexpr std::size_t small_bytes = 191;    // Small: 4 coefficients a byte
inline constexpr std::size_t rounded_bytes = 1007; // Rounded: the ciphertext's first part

using small_poly = std::array<std::int8_t, p>; // coefficients in {-1, 0, 1}
using fq_poly = std::array<std::int16_t, p>;   // coefficients in [-q12, q12]

// (wiped<T> and value_barrier() come from common/bytes.hpp.)

// -1 when x != 0, else 0: one of x and -x has its top bit set unless x is 0.
constexpr std::int32_t nonzero_mask(std::int32_t x) noexcept
{
    const auto u = static_cast<std::uint32_t>(x);
    return -static_cast<std::int32_t>((u | (0u - u)) >> 31);
}

// Products in R = Z[x]/(x^p - x - 1) reduced mod q or 3 (out may be an input).
void rq_mult_small(fq_poly& out, const fq_poly& a, const small_poly& b);
void r3_mult(small_poly& out, const small_poly& a, const small_poly& b);
// out = 1/a in R3: 0 when a is invertible, -1 (out meaningless) when not.
std::int32_t r3_reciprocal(small_poly& out, const small_poly& a);
// out = 1/(3a) in Rq: 0 when invertible (always, for a != 0), else -1.
std::int32_t rq_reciprocal3(fq_poly& out, const small_poly& a);
// Round: each coefficient to the nearest multiple of 3.
void rq_round(fq_poly& a);
// R3_fromRq(3a): 3a reduced in Rq, then mod 3.
void r3_from_rq_times3(small_poly& out, const fq_poly& a);
// Short_fromlist: a weight-w vector from p random 32-bit values (overwritten).
void short_from_list(small_poly& out, std::array<std::uint32_t, p>& list);

// The encodings: Rq (1158 bytes), Rounded (1007 bytes) and Small (191
// bytes). The decoders are total: every byte string gives in-range values.
void rq_encode(const fq_poly& h, std::uint8_t* out);
void rq_decode(const std::uint8_t* in, fq_poly& h);
void rounded_encode(const fq_poly& c, std::uint8_t* out);
void rounded_decode(const std::uint8_t* in, fq_poly& c);
void small_encode(const small_poly& f, std::uint8_t* out);
void small_decode(const std::uint8_t* in, small_poly& f);

} // namespace detail

} // namespace longhaul::sntrup761
