#include "sshd/x11_forwarding.hpp"

#include "channel/forward/x11_messages.hpp"
#include "channel/io/listen_sockets.hpp"
#include "common/text.hpp"
#include "sshd/server_session.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

namespace {

// OpenSSH's NUM_SOCKS: addresses bound per display at most.
constexpr std::size_t x11_max_sockets = 10;

// Binds TCP port 6000 + display on every address getaddrinfo gives for
// the loopback (use_localhost) or the wildcard, as x11_create_display_inet
// does: a family the kernel lacks is skipped; any bind that fails gives
// the display up (all or nothing). Errors other than "in use" are logged.
bool bind_x11_display(int display, bool use_localhost, int family, std::vector<int>& fds, logger& log)
{
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_flags = use_localhost ? 0 : AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    const std::string port = std::to_string(forward::x11_base_port + display);
    addrinfo* res = nullptr;
    if (const int r = ::getaddrinfo(nullptr, port.c_str(), &hints, &res); r != 0) {
        log.error(std::string("getaddrinfo: ") + ::gai_strerror(r));
        return false;
    }
    bool ok = true;
    for (addrinfo* ai = res; ai != nullptr && fds.size() < x11_max_sockets; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            if (errno == EINVAL || errno == EAFNOSUPPORT || errno == EPFNOSUPPORT) {
                log.debug("x11_create_display_inet: Socket family " + std::to_string(ai->ai_family) +
                          " not supported");
                continue;
            }
            log.error(std::string("socket: ") + std::strerror(errno));
            ok = false;
            break;
        }
        const int one = 1;
        if (ai->ai_family == AF_INET6)
            ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (use_localhost)
            ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            log.debug2("x11_create_display_inet: bind port " + port + ": " + std::strerror(errno));
            ::close(fd);
            ok = false;
            break;
        }
        fds.push_back(fd);
    }
    ::freeaddrinfo(res);
    if (!ok || fds.empty()) {
        for (int fd : fds)
            ::close(fd);
        fds.clear();
        return false;
    }
    return true;
}

void close_x11_fds(std::vector<int>& fds)
{
    for (int fd : fds)
        ::close(fd);
    fds.clear();
}

} // namespace

bool x11_forwarding_enabled(const session_environment& env, connection& conn)
{
    if (env.key && !env.key->options.permit_x11_forwarding) {
        env.log->debug("X11 forwarding disabled by key options.");
        conn.core().send_debug(false, "X11 forwarding disabled by key options.");
        return false;
    }
    if (!env.config->x11_forwarding || env.config->disable_forwarding) {
        env.log->debug("X11 forwarding disabled in server configuration file.");
        return false;
    }
    return true;
}

x11_display::x11_display(x11_forwarding& owner, int number, std::uint32_t screen, bool use_localhost,
                         std::string protocol, std::string cookie, bool single_connection)
    : owner_(owner), number_(number), protocol_(std::move(protocol)), cookie_(std::move(cookie)),
      single_connection_(single_connection)
{
    const std::string n = std::to_string(number) + "." + std::to_string(screen);
    if (use_localhost) {
        display_ = "localhost:" + n;
        auth_display_ = "unix:" + n;
    } else {
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0)
            std::strcpy(host, "localhost");
        display_ = std::string(host) + ":" + n;
        auth_display_ = display_;
    }
}

x11_display::~x11_display() = default;

void x11_display::listen(boost::asio::io_context& io, std::vector<int> fds)
{
    for (int fd : fds) {
        if (::listen(fd, 128) != 0) {
            owner_.log().error(std::string("listen: ") + std::strerror(errno));
            ::close(fd);
            continue;
        }
        listeners_.push_back(std::make_unique<fd_listener>(io, fd, std::string(), [this](int c) { accepted(c); }));
    }
}

void x11_display::accepted(int fd)
{
    if (single_connection_) {
        owner_.log().debug2("single_connection: closing X11 listener.");
        for (auto& l : listeners_)
            l->close();
    }
    owner_.open_channel(fd);
}

x11_forwarding::x11_forwarding(boost::asio::io_context& io, connection_runner& runner,
                               const session_environment& env)
    : io_(io), runner_(runner), env_(env), channels_(runner)
{
}

x11_forwarding::~x11_forwarding() { channels_.stop_all(); }

logger& x11_forwarding::log() const noexcept { return *env_.log; }

std::unique_ptr<x11_display> x11_forwarding::request(connection& conn, byte_span data, bool already)
{
    logger& log = *env_.log;
    if (already) {
        log.error("session_x11_req: session " + std::to_string(env_.session_number) +
                  ": x11 forwarding already active");
        return nullptr;
    }
    auto req = forward::x11_request::decode(data);
    if (!req) {
        log.error("session_x11_req: bad request: " + std::string(to_string(req.error())));
        return nullptr;
    }
    if (!forward::xauth_valid_string(req->auth_protocol) || !forward::xauth_valid_string(req->auth_cookie)) {
        log.error("Invalid X11 forwarding data");
        return nullptr;
    }
    if (!x11_forwarding_enabled(env_, conn))
        return nullptr;
    struct stat st {};
    const std::string& xauth = env_.config->xauth_location;
    if (xauth.empty() || ::stat(xauth.c_str(), &st) != 0) {
        log.debug("No xauth program; cannot forward X11.");
        conn.core().send_debug(false, "No xauth program; cannot forward X11.");
        return nullptr;
    }
    const bool localhost = env_.config->x11_use_localhost;
    const int family = env_.config->address_family == address_family_mode::inet    ? AF_INET
                       : env_.config->address_family == address_family_mode::inet6 ? AF_INET6
                                                                                    : AF_UNSPEC;
    std::vector<int> fds;
    auto number = forward::first_free_x11_display(env_.config->x11_display_offset, [&](int d) {
        return bind_x11_display(d, localhost, family, fds, log);
    });
    if (!number) {
        close_x11_fds(fds);
        log.error("Failed to allocate internet-domain X11 display socket.");
        log.debug("x11_create_display_inet failed.");
        return nullptr;
    }
    auto display = std::make_unique<x11_display>(*this, *number, req->screen, localhost, req->auth_protocol,
                                                 req->auth_cookie, req->single_connection);
    display->listen(io_, std::move(fds));
    log.debug("X11 display " + display->display() + " for session " + std::to_string(env_.session_number));
    return display;
}

void x11_forwarding::open_channel(int fd)
{
    env_.log->debug("X11 connection requested.");
    forward::x11_open o;
    if (auto peer = peer_address(fd)) {
        o.originator = peer->first;
        o.originator_port = static_cast<std::uint16_t>(peer->second);
    }
    auto id = runner_.conn().open(forward::x11_channel_type, o.encode());
    if (!id) {
        ::close(fd);
        return;
    }
    auto ch = std::make_shared<socket_channel>(fd);
    ch->on_refused = [this, cid = *id](std::uint32_t reason, std::string_view text) {
        env_.log->debug("channel " + std::to_string(cid) + ": x11 open failed: reason " + std::to_string(reason) +
                        ": " + printable(text));
    };
    channels_.add(*id, ch);
    runner_.flush();
}

} // namespace longhaul
