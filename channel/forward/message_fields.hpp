// Field readers shared by the forwarding and X11 message codecs
// (forward_messages.cpp, x11_messages.cpp): strings as OpenSSH's
// sshpkt_get_cstring reads them, 16-bit ports carried in uint32 fields,
// and the order in which a decoder reports its errors. Private to
// channel/forward.
#pragma once

#include "common/result.hpp"
#include "common/wire.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace longhaul::forward::detail {

// A string field with no NUL inside. Its length bound is the caller's,
// checked once the whole message parsed (finish_message), so it is read
// here up to the packet limit.
inline std::string read_cstring(wire_reader& r)
{
    const std::string_view s = r.text(max_wire_string);
    if (!r.ok())
        return {};
    if (s.find('\0') != std::string_view::npos) {
        r.fail(errc::malformed);
        return {};
    }
    return std::string(s);
}

// A port in a uint32 field; over 65535 marks the message too_large.
inline std::uint16_t read_port(wire_reader& r, bool& too_large)
{
    const std::uint32_t p = r.u32();
    if (p > 0xffff)
        too_large = true;
    return static_cast<std::uint16_t>(p);
}

// Structural errors (truncation, trailing bytes, NUL) first: a message
// that does not parse is a protocol error whatever its values. Then the
// bounds on values.
template <class T>
result<T> finish_message(wire_reader& r, T value, bool too_large)
{
    if (auto f = r.finish(); !f)
        return f.error() == errc::incomplete ? errc::malformed : f.error();
    if (too_large)
        return errc::too_large;
    return value;
}

} // namespace longhaul::forward::detail
