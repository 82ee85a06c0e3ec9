// The source of randomness handed to protocol cores (which own none of their
// own): cookies, padding, nonces. Tests may pass a deterministic one.
#pragma once

#include "common/bytes.hpp"

#include <array>
#include <cstddef>

namespace longhaul {

class random_source {
public:
    virtual ~random_source() = default;
    virtual void fill(mutable_byte_span out) = 0;
};

// OpenSSL's DRBG, read in 4 KiB batches: per-packet padding would otherwise
// cost a locked RAND_bytes call per packet.
class system_random final : public random_source {
public:
    system_random() = default;
    system_random(const system_random&) = delete;
    system_random& operator=(const system_random&) = delete;
    ~system_random() override;
    void fill(mutable_byte_span out) override;

private:
    std::array<std::uint8_t, 4096> pool_{};
    std::size_t used_ = pool_.size();
};

} // namespace longhaul
