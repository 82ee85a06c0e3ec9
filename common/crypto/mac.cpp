#include "common/crypto/mac.hpp"

#include <openssl/evp.h>

#include <algorithm>
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
    : md_(detail::fetch_md(md_name(alg))), inner_(detail::new_md_ctx()), outer_(detail::new_md_ctx())
{
    block_ = std::size_t(EVP_MD_get_block_size(md_.get()));
    size_ = std::size_t(EVP_MD_get_size(md_.get()));
    if (block_ == 0 || size_ == 0 || size_ > block_)
        throw std::runtime_error("unusable digest for HMAC");

    // K0: the key zero-padded to a block, or its digest when it is longer.
    secret_bytes k0(block_);
    if (key.size() > block_) {
        unsigned int n = 0;
        if (EVP_Digest(key.data(), key.size(), k0.data(), &n, md_.get(), nullptr) != 1)
            detail::throw_openssl_error("EVP_Digest");
    } else if (!key.empty()) {
        std::copy(key.begin(), key.end(), k0.data());
    }
    pads_ = secret_bytes(2 * block_);
    for (std::size_t i = 0; i < block_; ++i) {
        pads_.data()[i] = k0.data()[i] ^ 0x36;
        pads_.data()[block_ + i] = k0.data()[i] ^ 0x5c;
    }
    // The first init binds each context to the fetched digest; later inits
    // with the same digest reuse the provider state instead of reallocating.
    if (EVP_DigestInit_ex2(inner_.get(), md_.get(), nullptr) != 1 ||
        EVP_DigestInit_ex2(outer_.get(), md_.get(), nullptr) != 1)
        detail::throw_openssl_error("EVP_DigestInit_ex2");
}

bool hmac::begin() noexcept
{
    return EVP_DigestInit_ex2(inner_.get(), md_.get(), nullptr) == 1 &&
           EVP_DigestUpdate(inner_.get(), pads_.data(), block_) == 1;
}

bool hmac::update(byte_span data) noexcept
{
    return data.empty() || EVP_DigestUpdate(inner_.get(), data.data(), data.size()) == 1;
}

bool hmac::finish(std::uint8_t* out) noexcept
{
    // The inner digest is at most one block (64 bytes for SHA-512); it lands in
    // `out` first, which is exactly large enough, then the outer digest
    // overwrites it.
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(inner_.get(), out, &n) != 1 || n != size_)
        return false;
    if (EVP_DigestInit_ex2(outer_.get(), md_.get(), nullptr) != 1 ||
        EVP_DigestUpdate(outer_.get(), pads_.data() + block_, block_) != 1 ||
        EVP_DigestUpdate(outer_.get(), out, size_) != 1)
        return false;
    return EVP_DigestFinal_ex(outer_.get(), out, &n) == 1 && n == size_;
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
