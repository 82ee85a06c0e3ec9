// Internal to common/keys: the conversions between SSH key components (the
// fields of blobs and private key sections) and EVP_PKEY objects. Every
// builder validates what it builds, so an EVP_PKEY reaching public_key or
// private_key is always well formed. The OpenSSL handles (bn_ptr, pkey_ptr,
// ...) are common/crypto/evp_handles.hpp's.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/evp_handles.hpp"
#include "common/crypto/hash.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <openssl/bn.h>
#include <openssl/evp.h>

#include <memory>

namespace longhaul::detail {

// EVP_PKEYs are shared between a private key and copies of it.
std::shared_ptr<EVP_PKEY> adopt(EVP_PKEY* p);

// A big-endian magnitude as a BIGNUM flagged for constant-time use.
bn_ptr bn_from(byte_span magnitude);
// The magnitude of a BIGNUM without leading zeros (empty for zero).
secret_bytes bn_to_bytes(const BIGNUM* bn);

// Number of significant bits in a big-endian magnitude.
std::size_t magnitude_bits(byte_span magnitude) noexcept;

struct ec_curve {
    key_type type;
    const char* ssh_name;   // "nistp256": the curve identifier in blobs
    const char* group_name; // OpenSSL's name for the group
    std::size_t field_bytes;
    hash_alg hash;          // RFC 5656 §6.2.1
};
const ec_curve* ec_curve_for(key_type t) noexcept;

// Public keys from blob fields (validated: point on the curve and not at
// infinity; RSA size and exponent limits).
result<std::shared_ptr<EVP_PKEY>> ed25519_public(byte_span pub);
result<std::shared_ptr<EVP_PKEY>> ec_public(key_type t, byte_span q);
result<std::shared_ptr<EVP_PKEY>> rsa_public(byte_span e, byte_span n);

// Private keys from the fields of OpenSSH's private key encoding; the
// public fields must match the private ones (checked).
result<std::shared_ptr<EVP_PKEY>> ed25519_private(byte_span seed, byte_span pub);
result<std::shared_ptr<EVP_PKEY>> ec_private(key_type t, byte_span q, byte_span d);
result<std::shared_ptr<EVP_PKEY>> rsa_private(byte_span n, byte_span e, byte_span d, byte_span iqmp, byte_span p,
                                              byte_span q);

// RFC 8332 limits as OpenSSH applies them (RequiredRSASize defaults to 1024).
inline constexpr std::size_t rsa_min_bits = 1024;
inline constexpr std::size_t rsa_max_bits = 16384;

// The SSH type of an EVP_PKEY (ED25519, EC on a supported curve, RSA).
result<key_type> key_type_of(EVP_PKEY* pkey);

// Components read back out of an EVP_PKEY.
struct rsa_parts {
    secret_bytes n, e, d, iqmp, p, q;
};
result<rsa_parts> rsa_components(EVP_PKEY* pkey, bool with_private);
// Uncompressed point 04 || X || Y, whatever the key's preferred format.
result<bytes> ec_point(EVP_PKEY* pkey, key_type t);
result<secret_bytes> ec_private_scalar(EVP_PKEY* pkey);
result<bytes> ed25519_raw_public(EVP_PKEY* pkey);
result<secret_bytes> ed25519_raw_seed(EVP_PKEY* pkey);

// A byte vector for secret encodings: reserves its capacity up front so
// appends never leave a stale copy behind, and wipes all of it at the end.
class wiped_bytes {
public:
    explicit wiped_bytes(std::size_t capacity) { v_.reserve(capacity); }
    ~wiped_bytes()
    {
        v_.resize(v_.capacity());
        cleanse(v_.data(), v_.size());
    }
    wiped_bytes(const wiped_bytes&) = delete;
    wiped_bytes& operator=(const wiped_bytes&) = delete;
    bytes& get() noexcept { return v_; }
    byte_span span() const noexcept { return v_; }

private:
    bytes v_;
};

// Signature checks shared by plain and security-key verification (defined
// in public_key.cpp). evp_verify: one EVP_DigestVerify (md null for
// Ed25519). verify_ecdsa: `sig` is SSH's mpint r, mpint s; the digest is the
// curve's hash of `data`.
bool evp_verify(EVP_PKEY* pkey, const EVP_MD* md, byte_span sig, byte_span data);
bool verify_ecdsa(EVP_PKEY* pkey, key_type t, byte_span sig, byte_span data);

// Drops whatever OpenSSL queued on this thread after a failure, so errors
// from one untrusted input are not reported against the next operation.
void clear_openssl_errors() noexcept;

} // namespace longhaul::detail
