// The X11 connection setup an X client sends first (X Window System
// Protocol, "Connection Setup"), as ssh's X11 forwarding checks and
// rewrites it before any byte reaches the real display (OpenSSH 9.2's
// x11_open_helper): a byte-order byte ('B' most significant first, 'l'
// least), a pad byte, the major and minor version (2 bytes each), the
// lengths of the authorization protocol name and data (2 bytes each, in
// that byte order), 2 pad bytes, then the name and the data, each padded
// to a multiple of 4. The server side of the forwarding was given a fake
// cookie; a client that presents it (same protocol, same data) has its
// data replaced in place by the real cookie, of the same length. Anything
// else is refused, and the channel closed unopened to the display.
#pragma once

#include "common/bytes.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace longhaul::forward {

// The fixed part, and the most a setup can take (both fields at 65535,
// padded): what a caller holds at most before it has an answer.
inline constexpr std::size_t x11_setup_fixed = 12;
inline constexpr std::size_t x11_setup_max = x11_setup_fixed + 2 * ((0xffff + 3) & ~std::size_t{3});

enum class x11_setup_verdict {
    incomplete, // more bytes needed
    accepted,   // the fake cookie was there and is now the real one
    rejected,   // `reason` says why, in OpenSSH's words (debug2)
};

struct x11_setup_result {
    x11_setup_verdict verdict = x11_setup_verdict::incomplete;
    std::string reason;
    std::size_t length = 0; // the whole setup, once known (accepted)
};

// Checks the setup at the start of `buf` (what the X client has sent so
// far; more may follow it) against `protocol` and `fake`, and on success
// writes `real` over the data. `fake` and `real` must be the same length
// (else rejected, as OpenSSH refuses it).
x11_setup_result x11_check_setup(mutable_byte_span buf, std::string_view protocol, byte_span fake, byte_span real);

} // namespace longhaul::forward
