// printf-style formatting into std::string (GCC 12 has no std::format), and
// the client's text for SFTP status codes.
#pragma once

#include <cstdint>
#include <string>

namespace longhaul::sftp {

std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// OpenSSH's fx2txt(): the client's words for a status code ("No such file
// or directory", not the server's "No such file").
const char* fx2txt(std::uint32_t code) noexcept;

} // namespace longhaul::sftp
