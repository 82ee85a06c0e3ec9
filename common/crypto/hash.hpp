// Message digests through OpenSSL EVP (SHA-1, SHA-2): one-shot and incremental.
#pragma once

#include "common/bytes.hpp"

#include <cstddef>
#include <memory>
#include <string_view>

typedef struct evp_md_st EVP_MD;
typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace longhaul {

enum class hash_alg { sha1, sha256, sha384, sha512, md5 };

std::size_t digest_size(hash_alg alg) noexcept;
const EVP_MD* evp_md(hash_alg alg) noexcept;

class hasher {
public:
    explicit hasher(hash_alg alg);
    hasher(hasher&&) noexcept;
    hasher& operator=(hasher&&) noexcept;
    ~hasher();

    hasher& update(byte_span data);
    hasher& update(std::string_view s) { return update(as_bytes(s)); }
    // Finishes the digest; the hasher may be reused after reset().
    bytes finish();
    void finish_into(mutable_byte_span out);
    void reset();
    std::size_t size() const noexcept { return digest_size(alg_); }

private:
    hash_alg alg_;
    EVP_MD_CTX* ctx_;
};

bytes digest(hash_alg alg, byte_span data);

} // namespace longhaul
