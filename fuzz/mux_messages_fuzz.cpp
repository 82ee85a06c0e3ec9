// Fuzzes the connection multiplexing codec (ssh/mux/mux_messages): what a
// master reads from any local process of its user, and what a mux client
// reads from a master.
//
// Input: the bytes of a control socket's stream, cut into frames by
// frame_reader as the master does (never reading ahead), each body
// decoded. Invariants: a frame's length is within max_message; a body that
// decodes encodes to a body that decodes to the same message (flags read
// as "non-zero" come back as 1, so the first encoding is the canonical
// one) and frame() is that body behind its length; a failure is one of
// malformed, trailing_data, too_large, unsupported.
#include "common/wire.hpp"
#include "ssh/mux/mux_messages.hpp"

#include <cstdlib>

using namespace longhaul;
using namespace longhaul::mux;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

void one_body(byte_span body)
{
    auto m = decode(body);
    if (!m) {
        const errc e = m.error();
        check(e == errc::malformed || e == errc::trailing_data || e == errc::too_large || e == errc::unsupported);
        return;
    }
    const bytes canonical = encode(*m);
    auto again = decode(canonical);
    check(again.has_value());
    check(*again == *m);
    check(encode(*again) == canonical);
    const bytes f = frame(*m);
    check(f.size() == canonical.size() + 4 && load_u32(f.data()) == canonical.size());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const byte_span in(data, size);
    // The whole input as one body, too (the mux client's receive path
    // hands decode() whatever a frame held).
    one_body(in);
    frame_reader fr;
    std::size_t pos = 0;
    while (pos < in.size()) {
        const std::size_t n = std::min(fr.wanted(), in.size() - pos);
        if (!fr.feed(in.subspan(pos, n)))
            break;
        pos += n;
        if (fr.complete()) {
            check(fr.body().size() <= max_message);
            one_body(fr.body());
            fr.reset();
        }
    }
    return 0;
}
