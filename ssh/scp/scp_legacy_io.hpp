// The byte-level helpers the legacy rcp protocol's source and sink share
// (scp_legacy.cpp, scp_legacy_sink.cpp). Internal to ssh/scp.
#pragma once

#include "common/fd_io.hpp"

#include <sys/stat.h>

#include <cstddef>
#include <string>

namespace longhaul::scp::legacy_io {

constexpr std::size_t copy_buffer = 256 * 1024;
constexpr mode_t file_mode_mask = S_ISUID | S_ISGID | S_IRWXU | S_IRWXG | S_IRWXO;
// A record line is at most this long (OpenSSH's 2048-byte buffer).
constexpr std::size_t max_record = 2048;

// Writes all n bytes (retrying on EINTR); false on an error or a closed fd.
inline bool write_all(int fd, const void* p, std::size_t n)
{
    return longhaul::write_all(fd, byte_span(static_cast<const std::uint8_t*>(p), n));
}
// Reads exactly n bytes (less only at EOF or an error).
inline std::size_t read_all(int fd, void* p, std::size_t n)
{
    return read_full(fd, static_cast<std::uint8_t*>(p), n);
}
// Control characters (a newline in a name) shown escaped, as OpenSSH's
// strnvis(VIS_NL) and snmprintf do.
std::string visible(const std::string& s, bool keep_newline_last = false);
// Writes s to stderr.
void say(const std::string& s);
// The last path component of name.
std::string last_component(const std::string& name);

} // namespace longhaul::scp::legacy_io
