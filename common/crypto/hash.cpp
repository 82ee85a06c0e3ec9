#include "common/crypto/hash.hpp"

#include <openssl/evp.h>

#include <stdexcept>
#include <utility>

namespace longhaul {

std::size_t digest_size(hash_alg alg) noexcept
{
    switch (alg) {
    case hash_alg::sha1: return 20;
    case hash_alg::sha256: return 32;
    case hash_alg::sha384: return 48;
    case hash_alg::sha512: return 64;
    case hash_alg::md5: return 16;
    }
    return 0;
}

const EVP_MD* evp_md(hash_alg alg) noexcept
{
    switch (alg) {
    case hash_alg::sha1: return EVP_sha1();
    case hash_alg::sha256: return EVP_sha256();
    case hash_alg::sha384: return EVP_sha384();
    case hash_alg::sha512: return EVP_sha512();
    case hash_alg::md5: return EVP_md5();
    }
    return nullptr;
}

hasher::hasher(hash_alg alg) : alg_(alg), ctx_(EVP_MD_CTX_new())
{
    if (ctx_ == nullptr)
        throw std::bad_alloc();
    reset();
}

hasher::hasher(hasher&& o) noexcept : alg_(o.alg_), ctx_(std::exchange(o.ctx_, nullptr)) {}

hasher& hasher::operator=(hasher&& o) noexcept
{
    std::swap(alg_, o.alg_);
    std::swap(ctx_, o.ctx_);
    return *this;
}

hasher::~hasher() { EVP_MD_CTX_free(ctx_); }

void hasher::reset()
{
    if (EVP_DigestInit_ex(ctx_, evp_md(alg_), nullptr) != 1)
        throw std::runtime_error("EVP_DigestInit_ex failed");
}

hasher& hasher::update(byte_span data)
{
    if (!data.empty() && EVP_DigestUpdate(ctx_, data.data(), data.size()) != 1)
        throw std::runtime_error("EVP_DigestUpdate failed");
    return *this;
}

void hasher::finish_into(mutable_byte_span out)
{
    unsigned int n = 0;
    if (out.size() < size() || EVP_DigestFinal_ex(ctx_, out.data(), &n) != 1)
        throw std::runtime_error("EVP_DigestFinal_ex failed");
}

bytes hasher::finish()
{
    bytes out(size());
    finish_into(out);
    return out;
}

bytes digest(hash_alg alg, byte_span data)
{
    hasher h(alg);
    h.update(data);
    return h.finish();
}

} // namespace longhaul
