#include "common/crypto/evp_handles.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <stdexcept>
#include <string>

namespace longhaul::detail {

void evp_deleter::operator()(EVP_CIPHER* p) const noexcept { EVP_CIPHER_free(p); }
// EVP_CIPHER_CTX_free and EVP_MAC_CTX_free cleanse the key schedules they hold.
void evp_deleter::operator()(EVP_CIPHER_CTX* p) const noexcept { EVP_CIPHER_CTX_free(p); }
void evp_deleter::operator()(EVP_MAC* p) const noexcept { EVP_MAC_free(p); }
void evp_deleter::operator()(EVP_MAC_CTX* p) const noexcept { EVP_MAC_CTX_free(p); }
void evp_deleter::operator()(EVP_MD* p) const noexcept { EVP_MD_free(p); }
void evp_deleter::operator()(EVP_MD_CTX* p) const noexcept { EVP_MD_CTX_free(p); }

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
