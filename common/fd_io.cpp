#include "common/fd_io.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace longhaul {

bool write_all(int fd, byte_span data)
{
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

namespace {

// Waits until `fd` is readable or `deadline` has passed (false, ETIMEDOUT).
bool readable_before(int fd, std::chrono::steady_clock::time_point deadline)
{
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            errno = ETIMEDOUT;
            return false;
        }
        pollfd p{fd, POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 60'000)));
        if (r > 0)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
    }
}

} // namespace

std::size_t read_full(int fd, std::uint8_t* out, std::size_t size, std::chrono::steady_clock::time_point deadline)
{
    const bool timed = deadline != std::chrono::steady_clock::time_point::max();
    std::size_t done = 0;
    while (done < size) {
        if (timed && !readable_before(fd, deadline))
            return done;
        const ssize_t n = ::read(fd, out + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = 0;
            return done;
        }
        done += static_cast<std::size_t>(n);
    }
    return done;
}

} // namespace longhaul
