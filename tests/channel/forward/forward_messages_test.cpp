#include "channel/forward/forward_messages.hpp"

#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace longhaul;
using namespace longhaul::forward;

namespace {

// Every proper prefix of a sound message is malformed; a byte more is
// trailing data.
template <class T>
void check_truncation_and_trailing(const bytes& m)
{
    for (std::size_t n = 0; n < m.size(); ++n) {
        CAPTURE(n);
        CHECK(T::decode(byte_span(m).first(n)).error() == errc::malformed);
    }
    bytes longer = m;
    longer.push_back(0);
    CHECK(T::decode(longer).error() == errc::trailing_data);
}

bytes strings_and_ports(std::initializer_list<std::string_view> ss, std::initializer_list<std::uint32_t> ps)
{
    // host, port, originator, port order for the tcpip messages.
    bytes out;
    wire_writer w(out);
    auto s = ss.begin();
    auto p = ps.begin();
    while (s != ss.end() || p != ps.end()) {
        if (s != ss.end())
            w.string(*s++);
        if (p != ps.end())
            w.u32(*p++);
    }
    return out;
}

} // namespace

TEST_CASE("forward messages: direct-tcpip")
{
    const direct_tcpip_open m{"db.internal", 5432, "192.0.2.10", 50123};
    const bytes e = m.encode();
    CHECK(e == strings_and_ports({"db.internal", "192.0.2.10"}, {5432, 50123}));
    auto d = direct_tcpip_open::decode(e);
    REQUIRE(d);
    CHECK(d->host == "db.internal");
    CHECK(d->port == 5432);
    CHECK(d->originator == "192.0.2.10");
    CHECK(d->originator_port == 50123);
    check_truncation_and_trailing<direct_tcpip_open>(e);

    // Bounds: a host of 1024 bytes is taken, 1025 is too large; ports
    // above 65535 are too large (OpenSSH refuses the open), a NUL inside a
    // string is malformed (OpenSSH disconnects).
    CHECK(direct_tcpip_open::decode(direct_tcpip_open{std::string(1024, 'h'), 1, "o", 2}.encode()));
    CHECK(direct_tcpip_open::decode(direct_tcpip_open{std::string(1025, 'h'), 1, "o", 2}.encode()).error() ==
          errc::too_large);
    CHECK(direct_tcpip_open::decode(strings_and_ports({"h", "o"}, {65536, 1})).error() == errc::too_large);
    CHECK(direct_tcpip_open::decode(strings_and_ports({"h", "o"}, {1, 0xffffffff})).error() == errc::too_large);
    CHECK(direct_tcpip_open::decode(strings_and_ports({std::string_view("a\0b", 3), "o"}, {1, 1})).error() ==
          errc::malformed);
    // A structural error wins over a value out of bounds.
    bytes bad = strings_and_ports({"h", "o"}, {70000, 1});
    bad.push_back(1);
    CHECK(direct_tcpip_open::decode(bad).error() == errc::trailing_data);
    // A length beyond the message.
    bytes huge;
    wire_writer(huge).u32(0x7fffffff);
    CHECK(direct_tcpip_open::decode(huge).error() != errc::ok);
}

TEST_CASE("forward messages: forwarded-tcpip")
{
    const forwarded_tcpip_open m{"localhost", 8080, "::1", 40000};
    const bytes e = m.encode();
    CHECK(e == strings_and_ports({"localhost", "::1"}, {8080, 40000}));
    auto d = forwarded_tcpip_open::decode(e);
    REQUIRE(d);
    CHECK(d->address == "localhost");
    CHECK(d->port == 8080);
    CHECK(d->originator == "::1");
    CHECK(d->originator_port == 40000);
    check_truncation_and_trailing<forwarded_tcpip_open>(e);
    CHECK(forwarded_tcpip_open::decode(strings_and_ports({"", ""}, {0, 0})));
    CHECK(forwarded_tcpip_open::decode(forwarded_tcpip_open{"a", 1, std::string(1025, 'o'), 2}.encode()).error() ==
          errc::too_large);
}

TEST_CASE("forward messages: streamlocal opens")
{
    const direct_streamlocal_open m{"/run/app.sock", "", 0};
    bytes expect;
    wire_writer(expect).string("/run/app.sock").string("").u32(0);
    CHECK(m.encode() == expect);
    auto d = direct_streamlocal_open::decode(expect);
    REQUIRE(d);
    CHECK(d->path == "/run/app.sock");
    check_truncation_and_trailing<direct_streamlocal_open>(expect);

    const forwarded_streamlocal_open f{"/tmp/fwd.sock", ""};
    bytes fe;
    wire_writer(fe).string("/tmp/fwd.sock").string("");
    CHECK(f.encode() == fe);
    auto fd = forwarded_streamlocal_open::decode(fe);
    REQUIRE(fd);
    CHECK(fd->path == "/tmp/fwd.sock");
    check_truncation_and_trailing<forwarded_streamlocal_open>(fe);

    // sun_path holds 107 bytes and the NUL.
    CHECK(max_socket_path == 107);
    CHECK(direct_streamlocal_open::decode(direct_streamlocal_open{std::string(107, 'p'), "", 0}.encode()));
    CHECK(direct_streamlocal_open::decode(direct_streamlocal_open{std::string(108, 'p'), "", 0}.encode()).error() ==
          errc::too_large);
    CHECK(forwarded_streamlocal_open::decode(forwarded_streamlocal_open{std::string(108, 'p'), ""}.encode()).error() ==
          errc::too_large);
    CHECK(direct_streamlocal_open::decode(direct_streamlocal_open{std::string("/a\0b", 4), "", 0}.encode()).error() ==
          errc::malformed);
}

TEST_CASE("forward messages: global requests and the allocated port")
{
    const tcpip_forward_request r{"", 0};
    bytes e;
    wire_writer(e).string("").u32(0);
    CHECK(r.encode() == e);
    auto d = tcpip_forward_request::decode(e);
    REQUIRE(d);
    CHECK(d->address.empty());
    CHECK(d->port == 0);
    check_truncation_and_trailing<tcpip_forward_request>(tcpip_forward_request{"localhost", 2222}.encode());
    CHECK(tcpip_forward_request::decode(strings_and_ports({"x"}, {65536})).error() == errc::too_large);

    const tcpip_forward_reply reply{40123};
    CHECK(reply.encode() == bytes{0, 0, 0x9c, 0xbb});
    REQUIRE(tcpip_forward_reply::decode(reply.encode()));
    CHECK(tcpip_forward_reply::decode(reply.encode())->port == 40123);
    check_truncation_and_trailing<tcpip_forward_reply>(reply.encode());
    CHECK(tcpip_forward_reply::decode(bytes{0, 1, 0, 0}).error() == errc::too_large);

    const streamlocal_forward_request s{"/tmp/l.sock"};
    REQUIRE(streamlocal_forward_request::decode(s.encode()));
    CHECK(streamlocal_forward_request::decode(s.encode())->path == "/tmp/l.sock");
    check_truncation_and_trailing<streamlocal_forward_request>(s.encode());
    CHECK(streamlocal_forward_request::decode(streamlocal_forward_request{std::string(200, 'p')}.encode()).error() ==
          errc::too_large);
}

TEST_CASE("forward messages: decoding by channel type and request name")
{
    auto o = decode_forward_open("direct-tcpip", direct_tcpip_open{"h", 1, "o", 2}.encode());
    REQUIRE(o);
    CHECK(std::holds_alternative<direct_tcpip_open>(*o));
    o = decode_forward_open("forwarded-streamlocal@openssh.com", forwarded_streamlocal_open{"/p", ""}.encode());
    REQUIRE(o);
    CHECK(std::get<forwarded_streamlocal_open>(*o).path == "/p");
    CHECK(decode_forward_open("session", {}).error() == errc::unsupported);
    CHECK(decode_forward_open("direct-tcpip", {}).error() == errc::malformed);

    auto r = decode_forward_request("cancel-tcpip-forward", tcpip_forward_request{"*", 80}.encode());
    REQUIRE(r);
    CHECK(r->kind == forward_request_kind::cancel_tcpip_forward);
    CHECK(std::get<tcpip_forward_request>(r->body).address == "*");
    r = decode_forward_request("streamlocal-forward@openssh.com", streamlocal_forward_request{"/s"}.encode());
    REQUIRE(r);
    CHECK(r->kind == forward_request_kind::streamlocal_forward);
    r = decode_forward_request("cancel-streamlocal-forward@openssh.com", streamlocal_forward_request{"/s"}.encode());
    REQUIRE(r);
    CHECK(r->kind == forward_request_kind::cancel_streamlocal_forward);
    CHECK(decode_forward_request("keepalive@openssh.com", {}).error() == errc::unsupported);
    CHECK(decode_forward_request("tcpip-forward", bytes{0, 0}).error() == errc::malformed);
}
