// HMAC (RFC 2104) through OpenSSL's EVP_MAC "HMAC", keyed once and re-armed
// per message, so the padded-key states are computed only at set-up.
//
// On OpenSSL 3.0 each re-arm still costs two small allocations inside
// libcrypto (every EVP digest init or context copy recreates the provider's
// digest state); 3.0's public API offers no way around that short of the
// deprecated SHA*_Init family. docs/PERFORMANCE.md has the measurements.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/evp_handles.hpp"
#include "common/crypto/hash.hpp"

#include <cstddef>
#include <cstdint>

namespace longhaul {

class hmac {
public:
    // Any key length (keys longer than the digest's block are hashed first).
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
    detail::mac_ptr mac_;
    detail::mac_ctx_ptr ctx_;
    std::size_t size_ = 0;
};

// One-shot HMAC, for tests and non-packet uses.
bytes hmac_digest(hash_alg alg, byte_span key, byte_span data);

} // namespace longhaul
