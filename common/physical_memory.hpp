// The machine's physical memory, for rules that scale a default with it
// (the channel window budget: channel/window_policy.hpp's window_limits).
#pragma once

#include <cstdint>

namespace longhaul {

// Bytes of physical memory, or a conservative 1 GiB if the system will not say.
std::uint64_t physical_memory_bytes() noexcept;

} // namespace longhaul
