#include "common/random.hpp"

#include <openssl/rand.h>

#include <cstring>
#include <stdexcept>

namespace longhaul {

system_random::~system_random() { cleanse(pool_.data(), pool_.size()); }

void system_random::fill(mutable_byte_span out)
{
    while (!out.empty()) {
        if (used_ == pool_.size()) {
            if (RAND_bytes(pool_.data(), static_cast<int>(pool_.size())) != 1)
                throw std::runtime_error("RAND_bytes failed");
            used_ = 0;
        }
        std::size_t n = std::min(out.size(), pool_.size() - used_);
        std::memcpy(out.data(), pool_.data() + used_, n);
        cleanse(pool_.data() + used_, n);
        used_ += n;
        out = out.subspan(n);
    }
}

} // namespace longhaul
