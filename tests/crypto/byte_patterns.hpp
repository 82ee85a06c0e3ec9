// Test-vector inputs the RFCs write as patterns.
#pragma once

#include "common/bytes.hpp"

#include <cstdint>

namespace longhaul::test {

// The bytes first, first+1, ..., last (a key "00:01:02:...:1f").
inline bytes counting(std::uint8_t first, std::uint8_t last)
{
    bytes out;
    for (int v = first; v <= last; ++v)
        out.push_back(std::uint8_t(v));
    return out;
}

} // namespace longhaul::test
