#include "common/crypto/evp_handles.hpp"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/ec.h>
#include <openssl/encoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

#include <stdexcept>
#include <string>

namespace longhaul::detail {

void openssl_deleter::operator()(EVP_CIPHER* p) const noexcept { EVP_CIPHER_free(p); }
// EVP_CIPHER_CTX_free and EVP_MAC_CTX_free cleanse the key schedules they hold.
void openssl_deleter::operator()(EVP_CIPHER_CTX* p) const noexcept { EVP_CIPHER_CTX_free(p); }
void openssl_deleter::operator()(EVP_MAC* p) const noexcept { EVP_MAC_free(p); }
void openssl_deleter::operator()(EVP_MAC_CTX* p) const noexcept { EVP_MAC_CTX_free(p); }
void openssl_deleter::operator()(EVP_MD* p) const noexcept { EVP_MD_free(p); }
void openssl_deleter::operator()(EVP_MD_CTX* p) const noexcept { EVP_MD_CTX_free(p); }
void openssl_deleter::operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
void openssl_deleter::operator()(EVP_PKEY_CTX* p) const noexcept { EVP_PKEY_CTX_free(p); }
void openssl_deleter::operator()(BIGNUM* p) const noexcept { BN_clear_free(p); }
void openssl_deleter::operator()(BN_CTX* p) const noexcept { BN_CTX_free(p); }
void openssl_deleter::operator()(EC_GROUP* p) const noexcept { EC_GROUP_free(p); }
void openssl_deleter::operator()(EC_POINT* p) const noexcept { EC_POINT_clear_free(p); }
void openssl_deleter::operator()(ECDSA_SIG* p) const noexcept { ECDSA_SIG_free(p); }
void openssl_deleter::operator()(OSSL_PARAM_BLD* p) const noexcept { OSSL_PARAM_BLD_free(p); }

void openssl_deleter::operator()(OSSL_PARAM* p) const noexcept
{
    if (p == nullptr)
        return;
    for (OSSL_PARAM* q = p; q->key != nullptr; ++q)
        if (q->data != nullptr && q->data_size != 0)
            OPENSSL_cleanse(q->data, q->data_size);
    OSSL_PARAM_free(p);
}

void openssl_deleter::operator()(OSSL_DECODER_CTX* p) const noexcept { OSSL_DECODER_CTX_free(p); }
void openssl_deleter::operator()(OSSL_ENCODER_CTX* p) const noexcept { OSSL_ENCODER_CTX_free(p); }

void throw_openssl_error(const char* what)
{
    std::string message = std::string(what) + " failed";
    if (unsigned long e = ERR_peek_last_error(); e != 0) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        message += ": ";
        message += buf;
    }
    ERR_clear_error();
    throw std::runtime_error(message);
}

cipher_ptr fetch_cipher(const char* name)
{
    cipher_ptr p(EVP_CIPHER_fetch(nullptr, name, nullptr));
    if (!p)
        throw_openssl_error(name);
    return p;
}

mac_ptr fetch_mac(const char* name)
{
    mac_ptr p(EVP_MAC_fetch(nullptr, name, nullptr));
    if (!p)
        throw_openssl_error(name);
    return p;
}

md_ptr fetch_md(const char* name)
{
    md_ptr p(EVP_MD_fetch(nullptr, name, nullptr));
    if (!p)
        throw_openssl_error(name);
    return p;
}

cipher_ctx_ptr new_cipher_ctx()
{
    cipher_ctx_ptr p(EVP_CIPHER_CTX_new());
    if (!p)
        throw std::bad_alloc();
    return p;
}

mac_ctx_ptr new_mac_ctx(EVP_MAC* mac)
{
    mac_ctx_ptr p(EVP_MAC_CTX_new(mac));
    if (!p)
        throw_openssl_error("EVP_MAC_CTX_new");
    return p;
}

md_ctx_ptr new_md_ctx()
{
    md_ctx_ptr p(EVP_MD_CTX_new());
    if (!p)
        throw std::bad_alloc();
    return p;
}

} // namespace longhaul::detail
