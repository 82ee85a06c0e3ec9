// The identification string exchange of RFC 4253 §4.2.
#pragma once

#include "common/buffer.hpp"
#include "common/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// OpenSSH's limits: a line longer than this, or more pre-version lines than
// this, ends the connection.
inline constexpr std::size_t max_identification_line = 8192;
inline constexpr std::size_t max_pre_version_lines = 1024;

struct identification {
    std::string line;     // without CR LF, as hashed into the exchange hash
    std::string proto;    // "2.0" (1.99 is reported as 2.0-compatible)
    std::string software; // e.g. "OpenSSH_9.2p1"
    std::string comments; // text after the first space, may be empty
};

// Takes one complete line (LF or CR LF terminated) off the front of `in`.
// nullopt: no complete line yet. errc::too_large: the line would be too long;
// errc::malformed: a NUL byte or other control character in the line.
result<std::optional<std::string>> take_identification_line(byte_buffer& in);

// Splits a line that starts with "SSH-". errc::bad_version when the
// protocol version is not 2.0 or 1.99 or the software version is empty.
result<identification> parse_identification(std::string_view line);

// "SSH-2.0-<software>[ <comments>]" without CR LF.
std::string make_identification(std::string_view software, std::string_view comments = {});

} // namespace longhaul
