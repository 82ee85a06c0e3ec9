#include "channel/forward/x11_messages.hpp"

#include "channel/forward/message_fields.hpp"

#include "common/wire.hpp"

#include <cctype>

namespace longhaul::forward {

namespace {

// A string field, too_large past the X11 fields' bound.
std::string x11_cstring(wire_reader& r, bool& too_large)
{
    std::string s = detail::read_cstring(r);
    if (s.size() > max_x11_auth_field)
        too_large = true;
    return s;
}

bool x11_name_char(char c, std::string_view extra) noexcept
{
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || extra.find(c) != std::string_view::npos;
}

// sscanf("%u"): leading digits; nullopt when there are none or too many.
std::optional<unsigned> x11_leading_number(std::string_view s) noexcept
{
    unsigned long v = 0;
    std::size_t i = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
        v = v * 10 + static_cast<unsigned>(s[i] - '0');
        if (v > 0xffffffffUL)
            return std::nullopt;
    }
    if (i == 0)
        return std::nullopt;
    return static_cast<unsigned>(v);
}

} // namespace

bytes x11_request::encode() const
{
    bytes out;
    wire_writer(out).u8(single_connection ? 1 : 0).string(auth_protocol).string(auth_cookie).u32(screen);
    return out;
}

result<x11_request> x11_request::decode(byte_span data)
{
    wire_reader r(data);
    x11_request m;
    bool big = false;
    m.single_connection = r.boolean();
    m.auth_protocol = x11_cstring(r, big);
    m.auth_cookie = x11_cstring(r, big);
    m.screen = r.u32();
    return detail::finish_message(r, std::move(m), big);
}

bytes x11_open::encode() const
{
    bytes out;
    wire_writer(out).string(originator).u32(originator_port);
    return out;
}

result<x11_open> x11_open::decode(byte_span data)
{
    wire_reader r(data);
    x11_open m;
    bool big = false;
    m.originator = x11_cstring(r, big);
    m.originator_port = detail::read_port(r, big);
    return detail::finish_message(r, std::move(m), big);
}

bool xauth_valid_string(std::string_view s) noexcept
{
    for (char c : s)
        if (!x11_name_char(c, ".:/-_"))
            return false;
    return true;
}

bool x11_display_valid(std::string_view display, char& bad) noexcept
{
    for (char c : display) {
        if (!x11_name_char(c, ":/.-_")) {
            bad = c;
            return false;
        }
    }
    return true;
}

std::uint32_t x11_screen_of(std::string_view display) noexcept
{
    const auto colon = display.find(':');
    if (colon == std::string_view::npos)
        return 0;
    const auto dot = display.find('.', colon);
    if (dot == std::string_view::npos)
        return 0;
    // strtonum wants the whole rest to be the number.
    const std::string_view rest = display.substr(dot + 1);
    auto n = x11_leading_number(rest);
    if (!n || *n > 400)
        return 0;
    for (char c : rest)
        if (c < '0' || c > '9')
            return 0;
    return *n;
}

std::optional<x11_display_target> parse_x11_display(std::string_view display, std::string& error)
{
    const std::string shown(display.substr(0, 100));
    x11_display_target t;
    if (display.substr(0, 5) == "unix:" || (!display.empty() && display[0] == ':')) {
        auto n = x11_leading_number(display.substr(display.rfind(':') + 1));
        if (!n) {
            error = "Could not parse display number from DISPLAY: " + shown;
            return std::nullopt;
        }
        t.local_socket = true;
        t.display = *n;
        return t;
    }
    const auto colon = display.find(':');
    if (colon == std::string_view::npos) {
        error = "Could not find ':' in DISPLAY: " + shown;
        return std::nullopt;
    }
    auto n = x11_leading_number(display.substr(colon + 1));
    if (!n || *n > 0xffff - x11_base_port) {
        error = "Could not parse display number from DISPLAY: " + shown;
        return std::nullopt;
    }
    t.host = std::string(display.substr(0, colon));
    t.display = *n;
    return t;
}

std::string x11_xauth_display_name(std::string_view display)
{
    if (display.substr(0, 10) == "localhost:")
        return "unix:" + std::string(display.substr(10));
    return std::string(display);
}

std::optional<int> first_free_x11_display(int offset, const std::function<bool(int display)>& try_bind)
{
    for (int d = offset < 0 ? 0 : offset; d < x11_max_displays; ++d)
        if (try_bind(d))
            return d;
    return std::nullopt;
}

} // namespace longhaul::forward
