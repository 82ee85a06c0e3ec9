#include "channel/forward/socks_server.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace longhaul;
using namespace longhaul::forward;

namespace {

bytes b(std::initializer_list<int> v)
{
    bytes out;
    for (int x : v)
        out.push_back(static_cast<std::uint8_t>(x));
    return out;
}

bytes cat(bytes a, const bytes& c)
{
    a.insert(a.end(), c.begin(), c.end());
    return a;
}

bytes text(std::string_view s)
{
    return bytes(s.begin(), s.end());
}

// Feeds `in` in pieces of `chunk` bytes (0: all at once) and returns how
// many bytes the server took in all.
std::size_t feed_in_pieces(socks_server& s, const bytes& in, std::size_t chunk)
{
    std::size_t taken = 0, pos = 0;
    while (pos < in.size()) {
        const std::size_t n = chunk == 0 ? in.size() - pos : std::min(chunk, in.size() - pos);
        const std::size_t t = s.feed(byte_span(in).subspan(pos, n));
        taken += t;
        pos += n;
        if (t < n)
            break;
    }
    return taken;
}

bytes drain(socks_server& s)
{
    bytes out(s.output().begin(), s.output().end());
    s.consume_output(out.size());
    return out;
}

const bytes socks5_ok_greeting = b({5, 1, 0});
const bytes socks5_method_ok = b({5, 0});

bytes socks5_connect_ipv4(int a, int b_, int c, int d, int port)
{
    return b({5, 1, 0, 1, a, b_, c, d, port >> 8, port & 0xff});
}

bytes socks5_connect_name(std::string_view name, int port)
{
    bytes m = b({5, 1, 0, 3, static_cast<int>(name.size())});
    m = cat(m, text(name));
    return cat(m, b({port >> 8, port & 0xff}));
}

} // namespace

TEST_CASE("socks4: CONNECT to an IPv4 address, whole and one byte at a time")
{
    const bytes req = cat(b({4, 1, 0x1f, 0x90, 192, 0, 2, 7}), text(std::string("alice") + '\0'));
    for (std::size_t chunk : {0, 1, 3}) {
        CAPTURE(chunk);
        socks_server s;
        CHECK(feed_in_pieces(s, req, chunk) == req.size());
        REQUIRE(s.state() == socks_state::request);
        CHECK(s.request().version == socks_version::v4);
        CHECK(s.request().address_type == socks_address_type::ipv4);
        CHECK(s.request().host == "192.0.2.7");
        CHECK(s.request().port == 8080);
        CHECK(s.request().user == "alice");
        CHECK(s.output().empty()); // nothing until the channel opens
        CHECK(s.reply_success());
        CHECK(drain(s) == b({0, 0x5a, 0, 0, 0, 0, 0, 0}));
        CHECK_FALSE(s.reply_success());
        CHECK_FALSE(s.reply_failure(socks5_reply::general_failure));
        CHECK(s.output().empty());
    }
}

TEST_CASE("socks4a: a host name after the user id")
{
    const bytes req = cat(b({4, 1, 0, 22, 0, 0, 0, 1}), text(std::string("\0db.example.org\0", 16)));
    socks_server s;
    CHECK(feed_in_pieces(s, req, 1) == req.size());
    REQUIRE(s.state() == socks_state::request);
    CHECK(s.request().address_type == socks_address_type::domain);
    CHECK(s.request().host == "db.example.org");
    CHECK(s.request().user.empty());
    CHECK(s.request().port == 22);
    CHECK(s.reply_failure(socks5_reply::connection_refused));
    CHECK(drain(s) == b({0, 0x5b, 0, 0, 0, 0, 0, 0}));
}

TEST_CASE("socks4: bytes after the request belong to the stream")
{
    const bytes req = cat(b({4, 1, 0, 80, 10, 0, 0, 1}), b({0}));
    const bytes stream = text("GET / HTTP/1.0\r\n\r\n");
    socks_server s;
    CHECK(s.feed(cat(req, stream)) == req.size());
    CHECK(s.state() == socks_state::request);
    CHECK(s.feed(stream) == 0); // the handshake is over
}

TEST_CASE("socks4: refusals")
{
    SUBCASE("BIND is answered 0x5B")
    {
        socks_server s;
        s.feed(b({4, 2, 0, 80, 10, 0, 0, 1, 0}));
        CHECK(s.state() == socks_state::refused);
        CHECK(s.error() == errc::unsupported);
        CHECK(drain(s) == b({0, 0x5b, 0, 0, 0, 0, 0, 0}));
    }
    SUBCASE("socks4a with an empty host name")
    {
        socks_server s;
        s.feed(b({4, 1, 0, 80, 0, 0, 0, 9, 0, 0}));
        CHECK(s.state() == socks_state::refused);
        CHECK(s.error() == errc::malformed);
        CHECK(drain(s) == b({0, 0x5b, 0, 0, 0, 0, 0, 0}));
    }
    SUBCASE("the longest request OpenSSH takes, and one byte more")
    {
        // SOCKS4: the user id's NUL may be at index 1025, not later.
        bytes ok = cat(b({4, 1, 0, 80, 10, 0, 0, 1}), bytes(max_socks4_request - 9, 'u'));
        ok.push_back(0);
        REQUIRE(ok.size() == max_socks4_request);
        socks_server s;
        CHECK(feed_in_pieces(s, ok, 7) == ok.size());
        CHECK(s.state() == socks_state::request);
        CHECK(s.request().user.size() == max_socks4_request - 9);

        bytes too_long = cat(b({4, 1, 0, 80, 10, 0, 0, 1}), bytes(max_socks4_request - 8, 'u'));
        too_long.push_back(0);
        socks_server t;
        t.feed(too_long);
        CHECK(t.state() == socks_state::refused);
        CHECK(t.error() == errc::too_large);

        // A stream of non-NUL bytes is refused at the limit, never held.
        socks_server u;
        const bytes junk(100000, 'x');
        bytes head = b({4, 1, 0, 80, 10, 0, 0, 1});
        CHECK(u.feed(cat(head, junk)) == max_socks4_request);
        CHECK(u.state() == socks_state::refused);
    }
    SUBCASE("socks4a: the user id ends where the host name could not fit")
    {
        bytes req = cat(b({4, 1, 0, 80, 0, 0, 0, 1}), bytes(max_socks4_request - 9, 'u'));
        req.push_back(0);
        socks_server s;
        s.feed(req);
        CHECK(s.state() == socks_state::refused);
        CHECK(s.error() == errc::too_large);
    }
}

TEST_CASE("socks5: greeting")
{
    SUBCASE("no-auth offered among others")
    {
        socks_server s;
        CHECK(s.feed(b({5, 3, 2, 0x80, 0})) == 5);
        CHECK(s.state() == socks_state::handshake);
        CHECK(drain(s) == socks5_method_ok);
    }
    SUBCASE("no-auth not offered: 0xFF, refused")
    {
        socks_server s;
        s.feed(b({5, 2, 1, 2}));
        CHECK(s.state() == socks_state::refused);
        CHECK(s.error() == errc::unsupported);
        CHECK(drain(s) == b({5, 0xff}));
    }
    SUBCASE("no methods at all")
    {
        socks_server s;
        s.feed(b({5, 0}));
        CHECK(s.state() == socks_state::refused);
        CHECK(drain(s) == b({5, 0xff}));
    }
    SUBCASE("an incomplete greeting waits")
    {
        socks_server s;
        CHECK(s.feed(b({5, 2, 1})) == 3);
        CHECK(s.state() == socks_state::handshake);
        CHECK(s.output().empty());
        CHECK(s.feed(b({0})) == 1);
        CHECK(drain(s) == socks5_method_ok);
    }
}

TEST_CASE("socks5: CONNECT by IPv4, IPv6 and name, split at every byte")
{
    struct one {
        bytes request;
        socks_address_type type;
        std::string host;
        std::uint16_t port;
    };
    const one cases[] = {
        {socks5_connect_ipv4(127, 0, 0, 1, 5432), socks_address_type::ipv4, "127.0.0.1", 5432},
        {b({5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 80}), socks_address_type::ipv6,
         "2001:db8::5", 80},
        {b({5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x01, 0xbb}), socks_address_type::ipv6, "::1",
         443},
        {socks5_connect_name("web.example.org", 8443), socks_address_type::domain, "web.example.org", 8443},
        {socks5_connect_name(std::string(255, 'n'), 1), socks_address_type::domain, std::string(255, 'n'), 1},
    };
    for (const auto& c : cases) {
        const bytes all = cat(cat(socks5_ok_greeting, c.request), text("early"));
        const std::size_t handshake = all.size() - 5;
        for (std::size_t split = 0; split <= all.size(); ++split) {
            CAPTURE(c.host);
            CAPTURE(split);
            socks_server s;
            std::size_t taken = s.feed(byte_span(all).first(split));
            if (taken == split)
                taken += s.feed(byte_span(all).subspan(split));
            CHECK(taken == handshake);
            REQUIRE(s.state() == socks_state::request);
            CHECK(s.request().version == socks_version::v5);
            CHECK(s.request().address_type == c.type);
            CHECK(s.request().host == c.host);
            CHECK(s.request().port == c.port);
            CHECK(drain(s) == socks5_method_ok);
        }
        socks_server s;
        CHECK(feed_in_pieces(s, all, 1) == handshake);
        REQUIRE(s.state() == socks_state::request);
        CHECK(s.request().host == c.host);
        s.consume_output(2);
        CHECK(s.reply_success());
        // OpenSSH's reply: bound address 0.0.0.0:0.
        CHECK(drain(s) == b({5, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
    }
}

TEST_CASE("socks5: refused requests are answered with their code")
{
    struct one {
        bytes request;
        errc error;
        socks5_reply code;
    };
    const one cases[] = {
        {b({5, 2, 0, 1, 10, 0, 0, 1, 0, 80}), errc::unsupported, socks5_reply::command_not_supported}, // BIND
        {b({5, 3, 0, 1, 10, 0, 0, 1, 0, 80}), errc::unsupported, socks5_reply::command_not_supported}, // UDP
        {b({5, 9, 0, 1}), errc::unsupported, socks5_reply::command_not_supported},
        {b({5, 1, 0, 2}), errc::unsupported, socks5_reply::address_type_not_supported},
        {b({5, 1, 0, 0}), errc::unsupported, socks5_reply::address_type_not_supported},
        {b({5, 1, 1, 1}), errc::malformed, socks5_reply::general_failure}, // RSV
        {b({4, 1, 0, 1}), errc::malformed, socks5_reply::general_failure}, // VER
        {b({5, 1, 0, 3, 0}), errc::malformed, socks5_reply::general_failure}, // empty name
        {b({5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80}), errc::malformed, socks5_reply::general_failure}, // NUL
    };
    for (const auto& c : cases) {
        CAPTURE(c.request);
        socks_server s;
        const bytes all = cat(socks5_ok_greeting, c.request);
        feed_in_pieces(s, all, 1);
        REQUIRE(s.state() == socks_state::refused);
        CHECK(s.error() == c.error);
        CHECK_FALSE(s.error_message().empty());
        CHECK(drain(s) == cat(socks5_method_ok, encode_socks5_reply(c.code)));
        CHECK_FALSE(s.reply_success());
        CHECK(s.feed(b({1, 2, 3})) == 0);
    }
}

TEST_CASE("socks5: failure replies after the open")
{
    socks_server s;
    s.feed(cat(socks5_ok_greeting, socks5_connect_name("nowhere.invalid", 80)));
    REQUIRE(s.state() == socks_state::request);
    s.consume_output(2);
    CHECK(s.reply_failure(socks5_reply::host_unreachable));
    CHECK(drain(s) == b({5, 4, 0, 1, 0, 0, 0, 0, 0, 0}));

    socks_server t;
    t.feed(cat(socks5_ok_greeting, socks5_connect_ipv4(10, 0, 0, 1, 1)));
    CHECK(t.reply_failure(socks5_reply::succeeded)); // not a failure code: general failure
    CHECK(byte_span(t.output()).subspan(2)[1] == 0x01);
}

TEST_CASE("socks: an unknown version is refused without a reply")
{
    for (int v : {0, 1, 3, 6, 71}) {
        socks_server s;
        CHECK(s.feed(bytes{static_cast<std::uint8_t>(v), 1, 2}) == 1);
        CHECK(s.state() == socks_state::refused);
        CHECK(s.error() == errc::malformed);
        CHECK(s.output().empty());
    }
    socks_server s;
    CHECK(s.feed({}) == 0);
    CHECK(s.state() == socks_state::handshake);
}

TEST_CASE("socks: reply encoders and the open-failure mapping")
{
    CHECK(encode_socks4_reply(true) == b({0, 0x5a, 0, 0, 0, 0, 0, 0}));
    CHECK(encode_socks4_reply(false) == b({0, 0x5b, 0, 0, 0, 0, 0, 0}));
    CHECK(encode_socks5_reply(socks5_reply::connection_refused) == b({5, 5, 0, 1, 0, 0, 0, 0, 0, 0}));
    CHECK(encode_socks_reply(socks_version::v4, socks5_reply::not_allowed) == encode_socks4_reply(false));
    CHECK(encode_socks_reply(socks_version::v5, socks5_reply::address_type_not_supported)[1] == 8);
    CHECK(socks5_reply_for_open_failure(1, "") == socks5_reply::not_allowed);
    CHECK(socks5_reply_for_open_failure(2, "Connection refused") == socks5_reply::connection_refused);
    CHECK(socks5_reply_for_open_failure(2, "Network is unreachable") == socks5_reply::network_unreachable);
    CHECK(socks5_reply_for_open_failure(2, "No route to host") == socks5_reply::host_unreachable);
    CHECK(socks5_reply_for_open_failure(2, "Name or service not known") == socks5_reply::host_unreachable);
    CHECK(socks5_reply_for_open_failure(3, "unknown channel type") == socks5_reply::general_failure);
    CHECK(socks5_reply_for_open_failure(4, "") == socks5_reply::general_failure);
    CHECK(to_string(socks5_reply::command_not_supported) == "command not supported");
}

TEST_CASE("socks: random input never takes more than a handshake")
{
    std::mt19937 rng(7);
    for (int i = 0; i < 3000; ++i) {
        bytes in(rng() % 1500);
        for (auto& x : in)
            x = static_cast<std::uint8_t>(rng());
        if (!in.empty())
            in[0] = static_cast<std::uint8_t>(4 + rng() % 2);
        socks_server s;
        const std::size_t taken = feed_in_pieces(s, in, 1 + rng() % 16);
        CHECK(taken <= in.size());
        CHECK(taken <= max_socks4_request + 2 + 255);
        if (s.state() == socks_state::handshake)
            CHECK(taken == in.size());
        CHECK(s.output().size() <= 2 + 10);
    }
}
