// Owning handles for the OpenSSL objects this project holds, and the fetches
// that create EVP algorithms. One set for common/crypto and common/keys (which
// links longhaul_crypto), so every object is freed the same way everywhere:
// secrets are wiped on the way out (BN_clear_free, EC_POINT_clear_free,
// OSSL_PARAM arrays cleansed before they are freed).
// Keeps <openssl/evp.h> out of the headers that include this one.
#pragma once

#include <openssl/types.h>

#include <memory>

// Not in <openssl/types.h>; the same declarations as <openssl/ec.h>.
typedef struct ec_group_st EC_GROUP;
typedef struct ec_point_st EC_POINT;
typedef struct ECDSA_SIG_st ECDSA_SIG;

namespace longhaul::detail {

struct openssl_deleter {
    void operator()(EVP_CIPHER* p) const noexcept;
    void operator()(EVP_CIPHER_CTX* p) const noexcept;
    void operator()(EVP_MAC* p) const noexcept;
    void operator()(EVP_MAC_CTX* p) const noexcept;
    void operator()(EVP_MD* p) const noexcept;
    void operator()(EVP_MD_CTX* p) const noexcept;
    void operator()(EVP_PKEY* p) const noexcept;
    void operator()(EVP_PKEY_CTX* p) const noexcept;
    // BN_clear_free: BIGNUMs here hold private exponents, primes and DH
    // private values as often as public ones.
    void operator()(BIGNUM* p) const noexcept;
    void operator()(BN_CTX* p) const noexcept;
    void operator()(EC_GROUP* p) const noexcept;
    // EC_POINT_clear_free: a point may be derived from a private scalar.
    void operator()(EC_POINT* p) const noexcept;
    void operator()(ECDSA_SIG* p) const noexcept;
    void operator()(OSSL_PARAM_BLD* p) const noexcept;
    // A built array may hold private components; OpenSSL 3.0 has no
    // OSSL_PARAM_clear_free, so each value is wiped before the array is freed.
    void operator()(OSSL_PARAM* p) const noexcept;
    void operator()(OSSL_DECODER_CTX* p) const noexcept;
    void operator()(OSSL_ENCODER_CTX* p) const noexcept;
};

using cipher_ptr = std::unique_ptr<EVP_CIPHER, openssl_deleter>;
using cipher_ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, openssl_deleter>;
using mac_ptr = std::unique_ptr<EVP_MAC, openssl_deleter>;
using mac_ctx_ptr = std::unique_ptr<EVP_MAC_CTX, openssl_deleter>;
using md_ptr = std::unique_ptr<EVP_MD, openssl_deleter>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, openssl_deleter>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, openssl_deleter>;
using pkey_ctx_ptr = std::unique_ptr<EVP_PKEY_CTX, openssl_deleter>;
using bn_ptr = std::unique_ptr<BIGNUM, openssl_deleter>;
using bn_ctx_ptr = std::unique_ptr<BN_CTX, openssl_deleter>;
using ec_group_ptr = std::unique_ptr<EC_GROUP, openssl_deleter>;
using ec_point_ptr = std::unique_ptr<EC_POINT, openssl_deleter>;
using ecdsa_sig_ptr = std::unique_ptr<ECDSA_SIG, openssl_deleter>;
using param_bld_ptr = std::unique_ptr<OSSL_PARAM_BLD, openssl_deleter>;
using params_ptr = std::unique_ptr<OSSL_PARAM, openssl_deleter>;
using decoder_ctx_ptr = std::unique_ptr<OSSL_DECODER_CTX, openssl_deleter>;
using encoder_ctx_ptr = std::unique_ptr<OSSL_ENCODER_CTX, openssl_deleter>;

// Explicit fetches: a fetched algorithm carries its provider, so per-packet
// calls never go through OpenSSL's implicit-fetch path. All of these throw
// std::runtime_error when OpenSSL cannot provide the algorithm; they run at
// key set-up, never on peer bytes.
cipher_ptr fetch_cipher(const char* name);
mac_ptr fetch_mac(const char* name);
md_ptr fetch_md(const char* name);
cipher_ctx_ptr new_cipher_ctx();
mac_ctx_ptr new_mac_ctx(EVP_MAC* mac);
md_ctx_ptr new_md_ctx();

// Throws std::runtime_error naming the failed call, after clearing OpenSSL's
// error queue so the failure does not leak into a later, unrelated check.
[[noreturn]] void throw_openssl_error(const char* what);

} // namespace longhaul::detail
