// Fuzzes the SOCKS 4/4a/5 server handshake (channel/forward/socks_server):
// what ssh -D reads from a local client and ssh -R port from a forwarded
// channel.
//
// Input: byte 0 = how the stream is cut (0: at once; n: pieces of
// 1 + (n - 1) % 64 bytes, the size changing with each piece when n > 128),
// byte 1 = the outcome to reply with, then the client's bytes.
// Invariants: the server takes no more than it is given, all of it while
// the handshake is incomplete and nothing once it is over, never more than
// the longest handshake; its output is a greeting answer and at most one
// reply; a request names a host; and the result (state, request, error,
// output, bytes taken) is the same whatever the cut.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "channel/forward/socks_server.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include <cstdlib>
#include <string>

using namespace longhaul;
using namespace longhaul::forward;
using longhaul::fuzz::with_prefix;
using longhaul::fuzz::write_seed;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

struct outcome {
    socks_state state;
    socks_request request;
    errc error;
    bytes output;
    std::size_t taken;
};

outcome run(std::uint8_t cut, byte_span in)
{
    socks_server s;
    std::size_t pos = 0, taken = 0, piece = 0;
    while (pos < in.size()) {
        std::size_t n = in.size() - pos;
        if (cut != 0) {
            std::size_t size = 1 + (cut - 1u) % 64;
            if (cut > 128)
                size = 1 + (size + piece * 7) % 64;
            n = std::min(n, size);
        }
        ++piece;
        const auto before = s.state();
        const std::size_t t = s.feed(in.subspan(pos, n));
        check(t <= n);
        if (before != socks_state::handshake)
            check(t == 0);
        if (s.state() == socks_state::handshake)
            check(t == n);
        taken += t;
        pos += n;
        check(s.output().size() <= 2 + 10);
        if (t < n)
            break;
    }
    // The longest handshake: a SOCKS4 request, or a SOCKS5 greeting and a
    // request with a 255-byte name.
    check(taken <= std::max<std::size_t>(max_socks4_request, 2 + 255 + 4 + 1 + 255 + 2));
    if (s.state() == socks_state::request) {
        check(!s.request().host.empty());
        check(s.request().version == socks_version::v4 || s.request().version == socks_version::v5);
        check(s.output().size() == (s.request().version == socks_version::v5 ? 2u : 0u));
    } else {
        check(!s.replied());
    }
    if (s.state() == socks_state::refused)
        check(s.error() != errc::ok && !s.error_message().empty());
    outcome o{s.state(), s.request(), s.error(), bytes(s.output().begin(), s.output().end()), taken};
    return o;
}

void reply_and_check(std::uint8_t how, byte_span in)
{
    socks_server s;
    s.feed(in);
    const std::size_t before = s.output().size();
    const auto code = static_cast<socks5_reply>(how % 10);
    const bool ok = (how & 0x80) ? s.reply_success() : s.reply_failure(code);
    check(ok == (s.state() == socks_state::request));
    if (ok) {
        const std::size_t reply = s.output().size() - before;
        check(reply == (s.request().version == socks_version::v4 ? 8u : 10u));
        check(!s.reply_success() && !s.reply_failure(code));
    }
    s.consume_output(s.output().size() + 1);
    check(s.output().empty());
}

bytes b(std::initializer_list<int> v)
{
    bytes out;
    for (int x : v)
        out.push_back(static_cast<std::uint8_t>(x));
    return out;
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](std::uint8_t cut, std::uint8_t how, const bytes& stream) {
        write_seed(dir, "seed-" + std::to_string(n++), with_prefix({cut, how}, stream));
    };
    const bytes v4 = b({4, 1, 0x1f, 0x90, 192, 0, 2, 7, 'u', 's', 'e', 'r', 0, 'G', 'E', 'T'});
    const bytes v4a = b({4, 1, 0, 22, 0, 0, 0, 1, 0, 'd', 'b', '.', 'e', 'x', 0});
    const bytes v4_bind = b({4, 2, 0, 80, 10, 0, 0, 1, 0});
    const bytes v5_ipv4 = b({5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0x15, 0x38, 'x'});
    const bytes v5_ipv6 = b({5, 2, 2, 0, 5, 1, 0, 4, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 80});
    bytes name = b({5, 1, 0, 5, 1, 0, 3, 15});
    for (char c : std::string("web.example.org"))
        name.push_back(static_cast<std::uint8_t>(c));
    name.push_back(0x20);
    name.push_back(0xfb);
    const bytes v5_name = name;
    const bytes v5_noauth = b({5, 2, 1, 2});
    const bytes v5_udp = b({5, 1, 0, 5, 3, 0, 1, 0, 0, 0, 0, 0, 0});
    const bytes v5_atyp = b({5, 1, 0, 5, 1, 0, 9});
    for (const bytes* s : {&v4, &v4a, &v4_bind, &v5_ipv4, &v5_ipv6, &v5_name, &v5_noauth, &v5_udp, &v5_atyp}) {
        put(0, 0x80, *s);
        put(1, 5, *s);
        put(200, 4, *s);
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    longhaul::fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    const byte_span in(data + 2, size - 2);
    const outcome whole = run(0, in);
    const outcome cut = run(data[0], in);
    check(whole.state == cut.state && whole.error == cut.error && whole.output == cut.output &&
          whole.taken == cut.taken);
    if (whole.state == socks_state::request)
        check(whole.request.host == cut.request.host && whole.request.port == cut.request.port &&
              whole.request.user == cut.request.user && whole.request.address_type == cut.request.address_type);
    reply_and_check(data[1], in);
    return 0;
}
