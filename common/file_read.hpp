// Reading a whole (small) file: config files, known_hosts, authorized_keys.
// Each caller has its own size cap, since a file far larger than any real
// one is a mistake or an attack, not something to load into memory.
#pragma once

#include <cstddef>
#include <string>

namespace longhaul {

// Appends everything `fd` delivers, up to end of file, to `out`. Returns 0,
// or the errno of a failed read, or EFBIG as soon as more than `max` bytes
// arrived (the rest is not read). Retries on EINTR; does not close fd.
int read_to_end(int fd, std::size_t max, std::string& out);

} // namespace longhaul
