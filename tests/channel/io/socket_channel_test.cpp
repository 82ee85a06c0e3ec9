// socket_channel's treatment of the descriptor it takes: non-blocking, and
// TCP_NODELAY on a TCP socket (a forwarded response must not wait for the
// application's delayed ACK; contrib/bench/forward measured 40 ms per
// 64 KiB exchange without it). A Unix socket takes the same constructor.
#include "channel/io/socket_channel.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace longhaul;

namespace {

// A connected TCP socket on 127.0.0.1 (the accepted end): its peer and the
// listener are closed before returning.
int accepted_tcp_socket()
{
    int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener >= 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    REQUIRE(::listen(listener, 1) == 0);
    REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&sa), &len) == 0);
    int client = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(::connect(client, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    int accepted = ::accept(listener, nullptr, nullptr);
    REQUIRE(accepted >= 0);
    ::close(client);
    ::close(listener);
    return accepted;
}

int socket_option(int fd, int level, int name)
{
    int value = -1;
    socklen_t len = sizeof value;
    REQUIRE(::getsockopt(fd, level, name, &value, &len) == 0);
    return value;
}

} // namespace

TEST_CASE("socket_channel: a forwarded TCP socket gets TCP_NODELAY and O_NONBLOCK")
{
    const int fd = accepted_tcp_socket();
    REQUIRE(socket_option(fd, IPPROTO_TCP, TCP_NODELAY) == 0);
    const int probe = ::dup(fd); // the channel owns and closes fd
    REQUIRE(probe >= 0);
    {
        auto ch = std::make_shared<socket_channel>(fd);
        CHECK(socket_option(probe, IPPROTO_TCP, TCP_NODELAY) != 0);
        CHECK((::fcntl(probe, F_GETFL) & O_NONBLOCK) != 0);
    }
    ::close(probe);
}

TEST_CASE("socket_channel: a Unix stream socket is taken as it is")
{
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    const int probe = ::dup(pair[0]);
    {
        auto ch = std::make_shared<socket_channel>(pair[0]);
        CHECK((::fcntl(probe, F_GETFL) & O_NONBLOCK) != 0);
    }
    // The channel closed its descriptor: the other end reads EOF.
    ::close(probe);
    char c;
    CHECK(::read(pair[1], &c, 1) == 0);
    ::close(pair[1]);
}
