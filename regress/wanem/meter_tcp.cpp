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

// One end of the connection: accepts one (--listen ADDR PORT, "ready" in
// --ready-file once listening) or makes one (--connect ADDR PORT).
struct endpoint {
    std::string host, port, ready;
    bool listen = false;

    // Consumes the option at a[i] if it is one of the endpoint's.
    bool parse(const args& a, std::size_t& i)
    {
        if ((a[i] == "--listen" || a[i] == "--connect") && i + 2 < a.size()) {
            listen = a[i] == "--listen";
            host = a[i + 1];
            port = a[i + 2];
            i += 2;
            return true;
        }
        if (a[i] == "--ready-file" && i + 1 < a.size()) {
            ready = a[++i];
            return true;
        }
        return false;
    }

    int open() const
    {
        addrinfo* ai = resolve(host, port, listen);
        const int s = ::socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
            throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
        if (!listen) {
            const int rc = ::connect(s, ai->ai_addr, ai->ai_addrlen);
            ::freeaddrinfo(ai);
            if (rc != 0)
                throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
            return s;
        }
        const int one = 1;
        if (::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
            ::bind(s, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(s, 1) != 0)
            throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
        ::freeaddrinfo(ai);
        if (!ready.empty())
            std::ofstream(ready) << "ready\n";
        const int c = ::accept4(s, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0)
            throw std::runtime_error(std::string("accept: ") + std::strerror(errno));
        ::close(s);
        return c;
    }
};

} // namespace

// The receiving end; --connect serves a forward whose listener is on this
// side (ssh -L carrying data towards the client).
int cmd_tcp_sink(const args& a)
{
    endpoint ep;
    int timeline_ms = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (ep.parse(a, i))
            continue;
        if (a[i] == "--timeline-ms" && i + 1 < a.size()) {
            timeline_ms = parse_timeline_ms(a[++i]);
        } else {
            throw std::invalid_argument(
                "tcp-sink --listen|--connect ADDR PORT [--ready-file F] [--timeline-ms N]");
        }
    }
    if (ep.host.empty())
        throw std::invalid_argument("tcp-sink --listen|--connect ADDR PORT [--ready-file F] [--timeline-ms N]");
    const int s = ep.open();
    const int rc = drain_and_report(s, stdout, timeline_ms);
    ::close(s);
    return rc;
}

// The sending end; --listen serves a forward's far side (the target of ssh
// -L when the data flows back to the client).
int cmd_tcp_source(const args& a)
{
    endpoint ep;
    source_limit limit;
    bool have_limit = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (ep.parse(a, i))
            continue;
        limit = parse_limit(a, i);
        have_limit = true;
    }
    if (ep.host.empty() || !have_limit)
        throw std::invalid_argument("tcp-source --connect|--listen ADDR PORT [--ready-file F] --bytes N | --seconds S");
    ::signal(SIGPIPE, SIG_IGN);
    const int s = ep.open();
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
