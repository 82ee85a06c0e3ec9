#include "ssh/sftp_client/text.hpp"

#include <cstdarg>
#include <cstdio>

namespace longhaul::sftp {

std::string strprintf(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    va_list copy;
    va_copy(copy, ap);
    const int n = std::vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    std::string out;
    if (n < 0) {
        va_end(ap);
        return out;
    }
    if (std::size_t(n) < sizeof small) {
        out.assign(small, std::size_t(n));
    } else {
        out.resize(std::size_t(n) + 1);
        std::vsnprintf(out.data(), out.size(), fmt, ap);
        out.resize(std::size_t(n));
    }
    va_end(ap);
    return out;
}

const char* fx2txt(std::uint32_t code) noexcept
{
    switch (code) {
    case 0: return "No error";
    case 1: return "End of file";
    case 2: return "No such file or directory";
    case 3: return "Permission denied";
    case 4: return "Failure";
    case 5: return "Bad message";
    case 6: return "No connection";
    case 7: return "Connection lost";
    case 8: return "Operation unsupported";
    default: return "Unknown status";
    }
}

} // namespace longhaul::sftp
