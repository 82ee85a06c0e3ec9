// Helpers shared by the server core's files (not part of its interface).
#pragma once

#include "common/sftp/sftp_protocol.hpp"
#include "sshd/sftp/sftp_server.hpp"
#include "common/text.hpp"

#include <cstddef>
#include <string>

namespace longhaul::sftp {

// One entry of the request tables (server::standard_handlers(),
// server::extended_handlers()).
struct server::handler {
    std::string_view name;     // -p / -P / -Q name
    std::string_view ext_name; // SSH_FXP_EXTENDED name; empty for the others
    std::uint8_t type;         // packet type, for the others
    bool does_write;           // refused in read-only mode
    void (server::*run)(std::uint32_t id, byte_span payload);
};

} // namespace longhaul::sftp

namespace longhaul::sftp::detail {

// One read() from the client's stream at most.
inline constexpr std::size_t read_chunk = 64 * 1024;
// Output waiting before the core stops taking requests (at least; two of
// the largest replies otherwise).
inline constexpr std::size_t min_output_high_water = 1024 * 1024;
// Symlinks followed by REALPATH before ELOOP (OpenSSH's SYMLOOP_MAX).
inline constexpr unsigned max_symlinks = 32;
// READDIR entries per reply, as OpenSSH sends.
inline constexpr std::size_t readdir_batch = 100;

// printf into a std::string: the log lines keep OpenSSH's formats verbatim.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// OpenSSH's errno_to_portable().
status_code status_from_errno(int e) noexcept;

// open(2) flags from SFTP pflags, and OpenSSH's "READ,WRITE,CREATE" words.
int open_flags(std::uint32_t pflags) noexcept;
std::string open_flags_text(std::uint32_t pflags);

} // namespace longhaul::sftp::detail
