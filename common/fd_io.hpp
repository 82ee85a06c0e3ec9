// Blocking reads and writes of a whole buffer on a descriptor, retried on
// EINTR: for helpers' pipes and small files, not the event loop's sockets.
#pragma once

#include "common/bytes.hpp"

#include <cstddef>
#include <cstdint>

namespace longhaul {

// Writes all of `data`; false on an error (errno set) or a write of 0.
bool write_all(int fd, byte_span data);

// Reads exactly `size` bytes into `out`; false at end of file first or on
// an error.
bool read_exactly(int fd, std::uint8_t* out, std::size_t size);

} // namespace longhaul
