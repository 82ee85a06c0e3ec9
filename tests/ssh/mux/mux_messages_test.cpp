#include "ssh/mux/mux_messages.hpp"

#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace longhaul;
using namespace longhaul::mux;

namespace {

std::vector<message> samples()
{
    new_session s;
    s.request_id = 1;
    s.want_tty = true;
    s.want_agent = true;
    s.escape_char = '~';
    s.term = "xterm-256color";
    s.command = "echo hi";
    s.env = {"LANG=C", "A=b=c"};
    forward_request f;
    f.type = msg::close_fwd;
    f.request_id = 3;
    f.kind = static_cast<std::uint32_t>(fwd_kind::remote);
    f.listen_host = "/tmp/sock";
    f.listen_port = port_streamlocal;
    f.connect_host = "localhost";
    f.connect_port = 22;
    return {
        hello{},
        hello{4, {{"x@example.com", "1"}, {"y", ""}}},
        s,
        new_session{},
        simple_request{msg::alive_check, 0},
        simple_request{msg::terminate, 7},
        simple_request{msg::stop_listening, 8},
        simple_request{msg::proxy, 9},
        f,
        forward_request{msg::open_fwd, 4, 3, "", 1080, "", 0},
        stdio_forward{5, "", "host.example", 2222},
        status_reply{msg::ok, 6},
        status_reply{msg::proxy_ok, 6},
        error_reply{msg::failure, 2, "not supported yet"},
        error_reply{msg::permission_denied, 2, "Permission denied"},
        exit_message{1, 7},
        alive{0, 4242},
        session_opened{1, 3},
        remote_port{2, 40000},
        tty_alloc_fail{3},
    };
}

} // namespace

TEST_CASE("mux messages: every message round-trips, framed and unframed")
{
    for (const auto& m : samples()) {
        const bytes body = encode(m);
        auto back = decode(body);
        REQUIRE(back);
        CHECK(*back == m);
        CHECK(type_of(*back) == type_of(m));
        const bytes f = frame(m);
        REQUIRE(f.size() == body.size() + 4);
        CHECK(load_u32(f.data()) == body.size());
        CHECK(bytes(f.begin() + 4, f.end()) == body);
    }
}

TEST_CASE("mux messages: NEW_SESSION's layout is OpenSSH's (uint32 flags)")
{
    // Captured from OpenSSH 9.2's ssh: -e '^', TERM=xterm, "echo hi", one
    // SendEnv variable and one SetEnv.
    const std::string hex =
        "10000002"
        "00000001"
        "00000000"
        "00000000000000000000000000000000"
        "0000005e"
        "00000005787465726d"
        "000000076563686f206869"
        "0000000a4c435f464f4f3d626172"
        "00000003413d62";
    bytes body;
    for (std::size_t i = 0; i < hex.size(); i += 2)
        body.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    auto m = decode(body);
    REQUIRE(m);
    const auto* s = std::get_if<new_session>(&*m);
    REQUIRE(s != nullptr);
    CHECK(s->request_id == 1);
    CHECK_FALSE(s->want_tty);
    CHECK(s->escape_char == '^');
    CHECK(s->term == "xterm");
    CHECK(s->command == "echo hi");
    CHECK(s->env == std::vector<std::string>{"LC_FOO=bar", "A=b"});
    CHECK(encode(*m) == body);
}

TEST_CASE("mux messages: NEW_STDIO_FWD's port is a uint32, as OpenSSH sends it")
{
    const bytes body = encode(stdio_forward{1, "", "host.example", 2222});
    // type, id, reserved, host, port
    CHECK(body.size() == 4 + 4 + 4 + 4 + 12 + 4);
    CHECK(load_u32(body.data() + body.size() - 4) == 2222);
}

TEST_CASE("mux messages: truncation is malformed, extra bytes trailing")
{
    for (const auto& m : samples()) {
        const bytes body = encode(m);
        const msg t = type_of(m);
        const bool open_ended = t == msg::hello || t == msg::new_session;
        for (std::size_t n = 0; n < body.size(); ++n) {
            auto r = decode(byte_span(body).first(n));
            if (r) {
                // Only the lists at the end of HELLO and NEW_SESSION may
                // stop early, at an entry's boundary.
                CHECK(open_ended);
                continue;
            }
            CHECK(r.error() == errc::malformed);
        }
        bytes longer = body;
        longer.push_back(0);
        auto r = decode(longer);
        if (open_ended)
            CHECK_FALSE(r); // a partial string
        else
            CHECK(r.error() == errc::trailing_data);
    }
}

TEST_CASE("mux messages: unknown types, NULs in strings, and bounds")
{
    bytes unknown;
    wire_writer(unknown).u32(0x10000003).u32(0);
    CHECK(decode(unknown).error() == errc::unsupported);
    bytes s2c;
    wire_writer(s2c).u32(0x80000009).u32(0);
    CHECK(decode(s2c).error() == errc::unsupported);

    bytes nul;
    wire_writer(nul).u32(static_cast<std::uint32_t>(msg::failure)).u32(1).string(std::string_view("a\0b", 3));
    CHECK(decode(nul).error() == errc::malformed);

    // A string longer than the message.
    bytes lying;
    wire_writer(lying).u32(static_cast<std::uint32_t>(msg::failure)).u32(1).u32(1000).raw(std::string_view("x"));
    CHECK(decode(lying).error() == errc::malformed);

    new_session many;
    many.env.assign(max_environment, "A=b");
    CHECK(decode(encode(many)));
    many.env.push_back("B=c");
    CHECK(decode(encode(many)).error() == errc::too_large);

    hello h;
    for (std::size_t i = 0; i <= max_extensions; ++i)
        h.extensions.emplace_back("e" + std::to_string(i), "");
    CHECK(decode(encode(h)).error() == errc::too_large);

    bytes big(max_message + 1, 0);
    CHECK(decode(big).error() == errc::too_large);
}

TEST_CASE("mux frame_reader: reads exactly one frame, never ahead")
{
    const bytes a = frame(alive{3, 99});
    const bytes b = frame(simple_request{msg::terminate, 4});
    bytes stream = a;
    stream.insert(stream.end(), b.begin(), b.end());

    frame_reader fr;
    std::size_t pos = 0;
    std::vector<message> got;
    while (pos < stream.size()) {
        // One byte at a time where possible, to cross every boundary.
        const std::size_t n = std::min<std::size_t>(fr.wanted(), 1);
        REQUIRE(n > 0);
        REQUIRE(fr.feed(byte_span(stream).subspan(pos, n)));
        pos += n;
        if (fr.complete()) {
            auto m = decode(fr.body());
            REQUIRE(m);
            got.push_back(*m);
            fr.reset();
        }
    }
    REQUIRE(got.size() == 2);
    CHECK(got[0] == message(alive{3, 99}));
    CHECK(got[1] == message(simple_request{msg::terminate, 4}));

    frame_reader over;
    CHECK(over.wanted() == 4);
    CHECK(over.feed(byte_span(stream).first(5)).error() == errc::invalid_argument);

    const std::uint8_t too_big[4] = {0x00, 0x04, 0x00, 0x01};
    frame_reader r1;
    CHECK(r1.feed(byte_span(too_big, 4)).error() == errc::too_large);
    const std::uint8_t too_small[4] = {0, 0, 0, 3};
    frame_reader r2;
    CHECK(r2.feed(byte_span(too_small, 4)).error() == errc::malformed);
}
