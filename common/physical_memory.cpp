#include "common/physical_memory.hpp"

#include <unistd.h>

namespace longhaul {

std::uint64_t physical_memory_bytes() noexcept
{
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 1ull << 30;
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

} // namespace longhaul
