#include "common/crypto/mac.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <stdexcept>

namespace longhaul {

namespace {

const char* md_name(hash_alg alg)
{
    switch (alg) {
    case hash_alg::sha1: return "SHA1";
    case hash_alg::sha256: return "SHA2-256";
    case hash_alg::sha384: return "SHA2-384";
    case hash_alg::sha512: return "SHA2-512";
    case hash_alg::md5: return "MD5";
    }
    throw std::invalid_argument("unknown hash");
}

} // namespace

hmac::hmac(hash_alg alg, byte_span key)
    : mac_(detail::fetch_mac("HMAC")), ctx_(detail::new_mac_ctx(mac_.get())), size_(digest_size(alg))
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(md_name(alg)), 0),
        OSSL_PARAM_construct_end(),
    };
    // A null key pointer means "re-arm with the previous key" to OpenSSL, so
    // an empty key must still be passed as a valid pointer.
    static const std::uint8_t no_key = 0;
    if (EVP_MAC_init(ctx_.get(), key.empty() ? &no_key : key.data(), key.size(), params) != 1)
        detail::throw_openssl_error("EVP_MAC_init(HMAC)");
    if (EVP_MAC_CTX_get_mac_size(ctx_.get()) != size_)
        throw std::runtime_error("unexpected HMAC size");
}

bool hmac::begin() noexcept { return EVP_MAC_init(ctx_.get(), nullptr, 0, nullptr) == 1; }

bool hmac::update(byte_span data) noexcept
{
    return data.empty() || EVP_MAC_update(ctx_.get(), data.data(), data.size()) == 1;
}

bool hmac::finish(std::uint8_t* out) noexcept
{
    std::size_t n = 0;
    return EVP_MAC_final(ctx_.get(), out, &n, size_) == 1 && n == size_;
}

bytes hmac_digest(hash_alg alg, byte_span key, byte_span data)
{
    hmac h(alg, key);
    bytes out(h.size());
    if (!h.begin() || !h.update(data) || !h.finish(out.data()))
        detail::throw_openssl_error("HMAC");
    return out;
}

} // namespace longhaul
