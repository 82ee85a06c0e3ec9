#include "channel/forward/tun_messages.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::forward;

TEST_CASE("tun@openssh.com open: mode and unit as PROTOCOL lays them out")
{
    const tun_open o{tun_mode_point_to_point, 5};
    const bytes want = {0, 0, 0, 1, 0, 0, 0, 5};
    CHECK(o.encode() == want);
    auto d = tun_open::decode(want);
    REQUIRE(d);
    CHECK(d->mode == tun_mode_point_to_point);
    CHECK(d->unit == 5);

    // "any" and ethernet.
    const bytes any = tun_open{tun_mode_ethernet, tun_unit_any}.encode();
    CHECK(any == bytes{0, 0, 0, 2, 0x7f, 0xff, 0xff, 0xff});
    CHECK(tun_open::decode(any)->unit == tun_unit_any);

    // Values are kept as sent: sshd refuses a mode or unit it cannot use
    // (OpenSSH refuses the channel rather than disconnecting).
    auto odd = tun_open::decode(bytes{0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff});
    REQUIRE(odd);
    CHECK(odd->mode == 7);
    CHECK(odd->unit == 0xffffffffu);

    for (std::size_t n = 0; n < want.size(); ++n) {
        CAPTURE(n);
        CHECK(tun_open::decode(byte_span(want).first(n)).error() == errc::malformed);
    }
    bytes longer = want;
    longer.push_back(0);
    CHECK(tun_open::decode(longer).error() == errc::trailing_data);
}

TEST_CASE("tun address family header: OpenBSD's numbering from the IP version")
{
    const bytes v4 = {0x45, 0, 0, 20};
    const bytes v6 = {0x60, 0, 0, 0};
    CHECK(tun_packet_family(v4) == 2);
    CHECK(tun_packet_family(v6) == 24);
    // Anything else counts as IPv4, as OpenSSH's switch on ip_v.
    CHECK(tun_packet_family(bytes{0x10}) == 2);
    CHECK(tun_packet_family(byte_span{}) == 2);

    // Device -> channel: four bytes, big-endian, in front of the packet.
    bytes msg(4 + v6.size());
    std::copy(v6.begin(), v6.end(), msg.begin() + 4);
    put_af_header(msg.data(), byte_span(msg).subspan(4));
    CHECK(bytes(msg.begin(), msg.begin() + 4) == bytes{0, 0, 0, 24});
    bytes msg4(4 + v4.size());
    std::copy(v4.begin(), v4.end(), msg4.begin() + 4);
    put_af_header(msg4.data(), byte_span(msg4).subspan(4));
    CHECK(bytes(msg4.begin(), msg4.begin() + 4) == bytes{0, 0, 0, 2});

    // Channel -> device: the header goes whatever it says (Linux's tun
    // reads the version from the packet), the packet stays whole.
    auto p = strip_af_header(msg);
    REQUIRE(p);
    CHECK(bytes(p->begin(), p->end()) == v6);
    const bytes odd_family = {0, 0, 0, 10, 0x45, 1};
    auto q = strip_af_header(odd_family);
    REQUIRE(q);
    CHECK(bytes(q->begin(), q->end()) == bytes{0x45, 1});
    // Just the header: an empty packet; less: nothing to write (OpenSSH's
    // outfilter stops the channel).
    const bytes header_only = {0, 0, 0, 2}, short_header = {0, 0, 2};
    CHECK(strip_af_header(header_only)->empty());
    CHECK(!strip_af_header(short_header));
    CHECK(!strip_af_header(byte_span{}));
}
