// Raw TCP over the emulated link: the ceiling every SSH is compared with.
#include "meter.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <netdb.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace wan_meter {

namespace {

addrinfo* resolve(const std::string& host, const std::string& port, bool passive)
{
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    addrinfo* res = nullptr;
    if (int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); e != 0)
        throw std::runtime_error(host + ":" + port + ": " + ::gai_strerror(e));
    return res;
}

} // namespace

int cmd_tcp_sink(const args& a)
{
    std::string host, port, ready;
    int timeline_ms = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == "--listen" && i + 2 < a.size()) {
            host = a[i + 1];
            port = a[i + 2];
            i += 2;
        } else if (a[i] == "--ready-file" && i + 1 < a.size()) {
            ready = a[++i];
        } else if (a[i] == "--timeline-ms" && i + 1 < a.size()) {
            timeline_ms = parse_timeline_ms(a[++i]);
        } else {
            throw std::invalid_argument("tcp-sink --listen ADDR PORT [--ready-file F] [--timeline-ms N]");
        }
    }
    addrinfo* ai = resolve(host, port, true);
    const int ls = ::socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    if (ls < 0 || ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        ::bind(ls, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(ls, 1) != 0)
        throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
    ::freeaddrinfo(ai);
    if (!ready.empty())
        std::ofstream(ready) << "ready\n";
    const int s = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
    if (s < 0)
        throw std::runtime_error(std::string("accept: ") + std::strerror(errno));
    ::close(ls);
    const int rc = drain_and_report(s, stdout, timeline_ms);
    ::close(s);
    return rc;
}

int cmd_tcp_source(const args& a)
{
    std::string host, port;
    source_limit limit;
    bool have_limit = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == "--connect" && i + 2 < a.size()) {
            host = a[i + 1];
            port = a[i + 2];
            i += 2;
        } else {
            limit = parse_limit(a, i);
            have_limit = true;
        }
    }
    if (host.empty() || !have_limit)
        throw std::invalid_argument("tcp-source --connect ADDR PORT --bytes N | --seconds S");
    ::signal(SIGPIPE, SIG_IGN);
    addrinfo* ai = resolve(host, port, false);
    const int s = ::socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || ::connect(s, ai->ai_addr, ai->ai_addrlen) != 0)
        throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
    ::freeaddrinfo(ai);
    const std::uint64_t sent = pump_out(s, limit);
    ::shutdown(s, SHUT_WR);
    // Wait for the sink to close: only then has everything arrived.
    char c;
    while (::read(s, &c, 1) > 0) {
    }
    ::close(s);
    std::printf("{\"sent\": %llu, \"cpu_s\": %.4f}\n", (unsigned long long)sent, cpu_self_s());
    return 0;
}

} // namespace wan_meter
