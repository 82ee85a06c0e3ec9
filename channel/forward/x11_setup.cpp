#include "channel/forward/x11_setup.hpp"

#include <algorithm>
#include <cstdio>

namespace longhaul::forward {

namespace {

std::size_t x11_pad4(std::size_t n) noexcept { return (n + 3) & ~std::size_t{3}; }

} // namespace

x11_setup_result x11_check_setup(mutable_byte_span buf, std::string_view protocol, byte_span fake, byte_span real)
{
    x11_setup_result out;
    if (buf.size() < x11_setup_fixed)
        return out;
    std::size_t proto_len = 0, data_len = 0;
    if (buf[0] == 0x42) {
        proto_len = std::size_t{buf[6]} << 8 | buf[7];
        data_len = std::size_t{buf[8]} << 8 | buf[9];
    } else if (buf[0] == 0x6c) {
        proto_len = std::size_t{buf[7]} << 8 | buf[6];
        data_len = std::size_t{buf[9]} << 8 | buf[8];
    } else {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%x", unsigned{buf[0]});
        out.verdict = x11_setup_verdict::rejected;
        out.reason = std::string("Initial X11 packet contains bad byte order byte: ") + hex;
        return out;
    }
    const std::size_t data_at = x11_setup_fixed + x11_pad4(proto_len);
    const std::size_t total = data_at + x11_pad4(data_len);
    if (buf.size() < total)
        return out;
    out.verdict = x11_setup_verdict::rejected;
    if (proto_len != protocol.size() ||
        !std::equal(protocol.begin(), protocol.end(), buf.begin() + x11_setup_fixed,
                    [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; })) {
        out.reason = "X11 connection uses different authentication protocol.";
        return out;
    }
    if (data_len != fake.size() || !equal_constant_time(fake, byte_span(buf.data() + data_at, data_len))) {
        out.reason = "X11 auth data does not match fake data.";
        return out;
    }
    if (fake.size() != real.size()) {
        out.reason = "X11 fake_data_len " + std::to_string(fake.size()) + " != saved_data_len " +
                     std::to_string(real.size());
        return out;
    }
    std::copy(real.begin(), real.end(), buf.begin() + static_cast<std::ptrdiff_t>(data_at));
    out.verdict = x11_setup_verdict::accepted;
    out.length = total;
    return out;
}

} // namespace longhaul::forward
