// Socket addresses from text for the tests of the listener's per-source
// tables (source_limit, penalty_table).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <doctest/doctest.h>

namespace longhaul::test {

inline sockaddr_storage v4(const char* text)
{
    sockaddr_storage ss{};
    auto& a = reinterpret_cast<sockaddr_in&>(ss);
    a.sin_family = AF_INET;
    REQUIRE(inet_pton(AF_INET, text, &a.sin_addr) == 1);
    return ss;
}

inline sockaddr_storage v6(const char* text)
{
    sockaddr_storage ss{};
    auto& a = reinterpret_cast<sockaddr_in6&>(ss);
    a.sin6_family = AF_INET6;
    REQUIRE(inet_pton(AF_INET6, text, &a.sin6_addr) == 1);
    return ss;
}

} // namespace longhaul::test
