// Deterministic "randomness" for tests that need fixed salts, check-ints
// or choices: byte n of the stream is (start + n) * mul + add, mod 256.
// One definition for the test programs (several test files of a program
// share a translation unit in a unity build).
#pragma once

#include "common/random.hpp"

#include <cstdint>

namespace longhaul::test {

class counting_random final : public random_source {
public:
    explicit counting_random(std::uint32_t start = 0, std::uint32_t mul = 1, std::uint32_t add = 0)
        : next_(start), mul_(mul), add_(add)
    {
    }
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = static_cast<std::uint8_t>(next_++ * mul_ + add_);
    }

private:
    std::uint32_t next_;
    std::uint32_t mul_;
    std::uint32_t add_;
};

} // namespace longhaul::test
