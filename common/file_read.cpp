#include "common/file_read.hpp"

#include <cerrno>

#include <unistd.h>

namespace longhaul {

int read_to_end(int fd, std::size_t max, std::string& out)
{
    const std::size_t start = out.size();
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            return 0;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() - start > max)
            return EFBIG;
    }
}

} // namespace longhaul
