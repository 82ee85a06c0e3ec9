// Blocking reads and writes of a whole buffer on a descriptor, retried on
// EINTR: for helpers' pipes and small files, not the event loop's sockets.
#pragma once

#include "common/bytes.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace longhaul {

// Writes all of `data`; false on an error (errno set) or a write of 0.
bool write_all(int fd, byte_span data);

// Reads until `size` bytes have come, end of file, an error or `deadline`;
// returns how many came. Short of `size`, errno says why: 0 at end of
// file, ETIMEDOUT at the deadline, else the read's. Without a deadline no
// poll is made: one read(2) per chunk, as a plain loop would.
std::size_t read_full(int fd, std::uint8_t* out, std::size_t size,
                      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

// Exactly `size` bytes, or false (errno as read_full's).
inline bool read_exactly(int fd, std::uint8_t* out, std::size_t size,
                         std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max())
{
    return read_full(fd, out, size, deadline) == size;
}

} // namespace longhaul
