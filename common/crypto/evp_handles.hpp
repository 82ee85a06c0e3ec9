// Owning handles for OpenSSL EVP objects, and the fetches that create them.
// Internal to common/crypto: keeps <openssl/evp.h> out of public headers
// while letting the .cpp files hold contexts by value-like unique_ptrs.
#pragma once

#include <memory>

typedef struct evp_cipher_st EVP_CIPHER;
typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct evp_mac_st EVP_MAC;
typedef struct evp_mac_ctx_st EVP_MAC_CTX;
typedef struct evp_md_st EVP_MD;
typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace longhaul::detail {

struct evp_deleter {
    void operator()(EVP_CIPHER* p) const noexcept;
    void operator()(EVP_CIPHER_CTX* p) const noexcept;
    void operator()(EVP_MAC* p) const noexcept;
    void operator()(EVP_MAC_CTX* p) const noexcept;
    void operator()(EVP_MD* p) const noexcept;
    void operator()(EVP_MD_CTX* p) const noexcept;
};

using cipher_ptr = std::unique_ptr<EVP_CIPHER, evp_deleter>;
using cipher_ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, evp_deleter>;
using mac_ptr = std::unique_ptr<EVP_MAC, evp_deleter>;
using mac_ctx_ptr = std::unique_ptr<EVP_MAC_CTX, evp_deleter>;
using md_ptr = std::unique_ptr<EVP_MD, evp_deleter>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, evp_deleter>;

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
