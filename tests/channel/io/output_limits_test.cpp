// How much output the runner lets wait: in the transport's queue (the
// backpressure mark) and unsent in the kernel (TCP_NOTSENT_LOWAT), both
// about 20 ms of the rate the connection drains at.
#include "channel/io/connection_runner.hpp"
#include "common/io/transport_driver.hpp"
#include "tests/transport/harness.hpp"

#include <boost/asio/io_context.hpp>
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace longhaul;

namespace {

int unsent_limit_of(int fd)
{
    int v = -1;
    socklen_t len = sizeof v;
    REQUIRE(::getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, &len) == 0);
    return v;
}

// A connected TCP socket on the loopback (its listener and peer closed by
// the caller).
int tcp_client(int& listener, int& accepted)
{
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listener, 1) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    accepted = ::accept(listener, nullptr, nullptr);
    REQUIRE(accepted >= 0);
    return fd;
}

} // namespace

TEST_CASE("output limits: 20 ms of the drain rate, within their bounds")
{
    using r = connection_runner;
    // Nothing drained yet, or a slow path: the floors.
    CHECK(r::unsent_limit_for(0) == transport_driver::unsent_low_water);
    CHECK(r::output_high_water_for(0) == r::min_output_high_water);
    CHECK(r::unsent_limit_for(1'250'000) == transport_driver::unsent_low_water); // 10 Mbit/s
    // 1 Gbit/s: 2.5 MB in each place, 10 ms of margin before the socket runs
    // dry (the kernel wakes the writer at half the mark).
    CHECK(r::unsent_limit_for(125'000'000) == 2'500'000);
    CHECK(r::output_high_water_for(125'000'000) == 2'500'000);
    // 10 Gbit/s: 25 MB in the kernel, the queue capped at 4 MiB; beyond
    // 13.4 Gbit/s the kernel's share is capped at 32 MiB.
    CHECK(r::unsent_limit_for(1'250'000'000) == 25'000'000);
    CHECK(r::output_high_water_for(1'250'000'000) == r::max_output_high_water);
    CHECK(r::unsent_limit_for(2'500'000'000) == r::max_unsent_limit);
    // No overflow from absurd samples.
    CHECK(r::unsent_limit_for(std::uint64_t(1) << 50) == r::max_unsent_limit);
    CHECK(r::unsent_limit_for(~std::uint64_t(0)) == r::max_unsent_limit);
    CHECK(r::output_high_water_for(~std::uint64_t(0)) == r::max_output_high_water);
}

TEST_CASE("transport_driver: the unsent limit is set on a TCP socket, and only there")
{
    boost::asio::io_context io;
    test::seeded_random rng(3);
    transport_config cfg;
    int listener = -1, peer = -1;
    const int fd = tcp_client(listener, peer);
    transport core(cfg, rng, std::chrono::steady_clock::now());
    {
        transport_driver d(io, fd, core);
        CHECK(unsent_limit_of(d.native_handle()) == int(transport_driver::unsent_low_water));
        d.set_unsent_limit(3 << 20);
        CHECK(unsent_limit_of(d.native_handle()) == 3 << 20);
        d.set_unsent_limit(transport_driver::unsent_low_water);
        CHECK(unsent_limit_of(d.native_handle()) == int(transport_driver::unsent_low_water));
    }
    ::close(peer);
    ::close(listener);

    // A socketpair (ProxyCommand, sshd -i): nothing to set, nothing fails.
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    transport core2(cfg, rng, std::chrono::steady_clock::now());
    {
        transport_driver d(io, sv[0], core2);
        d.set_unsent_limit(3 << 20);
    }
    ::close(sv[1]);
}
