#include "sshd/source_limit.hpp"

#include "tests/sshd/socket_address_util.hpp"

#include <doctest/doctest.h>

#include <cstring>

using namespace longhaul;
using longhaul::test::v4;
using longhaul::test::v6;

TEST_CASE("source_limit: PerSourceMaxStartups counts startups per address block")
{
    source_limit l(2, 32, 128);
    const auto a = l.block_of(v4("192.0.2.1"));
    const auto b = l.block_of(v4("192.0.2.2"));
    CHECK(l.enabled());
    CHECK(a != b); // /32: every address its own block
    CHECK(l.admit(a));
    CHECK(l.admit(a));
    CHECK_FALSE(l.admit(a)); // the third unauthenticated connection is dropped
    CHECK(l.count(a) == 2);
    CHECK(l.admit(b));
    l.release(a); // one authenticated or ended
    CHECK(l.admit(a));
    CHECK_FALSE(l.admit(a));
    l.release(a);
    l.release(a);
    l.release(a); // more releases than slots never go negative
    CHECK(l.count(a) == 0);
    CHECK(l.admit(a));
}

TEST_CASE("source_limit: PerSourceNetBlockSize groups addresses")
{
    source_limit l(1, 24, 56);
    CHECK(l.block_of(v4("198.51.100.7")) == l.block_of(v4("198.51.100.200")));
    CHECK(l.block_of(v4("198.51.100.7")) != l.block_of(v4("198.51.101.7")));
    CHECK(source_limit::describe(l.block_of(v4("198.51.100.7"))) == "198.51.100.0/24");
    // An IPv4-mapped IPv6 peer is the IPv4 address.
    CHECK(l.block_of(v6("::ffff:198.51.100.9")) == l.block_of(v4("198.51.100.7")));
    CHECK(l.block_of(v6("2001:db8:0:ab::1")) == l.block_of(v6("2001:db8:0:ab:ffff::2")));
    CHECK(l.block_of(v6("2001:db8:0:ab::1")) != l.block_of(v6("2001:db8:0:1ab::1")));
    CHECK(source_limit::describe(l.block_of(v6("2001:db8:0:abcd::1"))) == "2001:db8:0:ab00::/56");
    const auto blk = l.block_of(v4("198.51.100.7"));
    CHECK(l.admit(blk));
    CHECK_FALSE(l.admit(l.block_of(v4("198.51.100.8"))));
    // Odd prefix lengths mask inside a byte.
    source_limit odd(1, 20, 128);
    CHECK(source_limit::describe(odd.block_of(v4("10.1.31.5"))) == "10.1.16.0/20");
    source_limit all(1, 0, 0);
    CHECK(all.block_of(v4("10.0.0.1")) == all.block_of(v4("203.0.113.1")));
}

TEST_CASE("source_limit: none means no limit")
{
    source_limit l(INT_MAX, 32, 128);
    CHECK_FALSE(l.enabled());
    const auto a = l.block_of(v4("192.0.2.1"));
    for (int i = 0; i < 1000; ++i)
        CHECK(l.admit(a));
    CHECK(l.count(a) == 0); // nothing is kept without a limit
    sockaddr_storage unix_peer{};
    unix_peer.ss_family = AF_UNIX;
    CHECK(source_limit(1, 32, 128).block_of(unix_peer).empty());
}
