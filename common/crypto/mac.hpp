// HMAC (RFC 2104) over OpenSSL EVP digests, built so that each message costs
// no allocation: OpenSSL 3.0's HMAC re-initialisation duplicates a digest
// context (a malloc/free pair per packet), whereas re-initialising an
// existing EVP_MD_CTX with the same fetched digest reuses its state. The
// price is hashing the padded key block again per message (two extra
// compression-function calls), which is noise next to a 32 KiB packet.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/evp_handles.hpp"
#include "common/crypto/hash.hpp"

#include <cstddef>
#include <cstdint>

namespace longhaul {

class hmac {
public:
    // Any key length; keys longer than the digest's block are hashed first.
    // Throws std::runtime_error when OpenSSL cannot provide the digest.
    hmac(hash_alg alg, byte_span key);

    std::size_t size() const noexcept { return size_; }

    // One message: begin, any number of updates, finish. Each returns false
    // if OpenSSL reports a failure; none throws.
    [[nodiscard]] bool begin() noexcept;
    [[nodiscard]] bool update(byte_span data) noexcept;
    // Writes size() bytes to out.
    [[nodiscard]] bool finish(std::uint8_t* out) noexcept;

private:
    detail::md_ptr md_;
    detail::md_ctx_ptr inner_;
    detail::md_ctx_ptr outer_;
    secret_bytes pads_; // key XOR ipad, then key XOR opad, one block each
    std::size_t block_ = 0;
    std::size_t size_ = 0;
};

// One-shot HMAC, for tests and non-packet uses.
bytes hmac_digest(hash_alg alg, byte_span key, byte_span data);

} // namespace longhaul
