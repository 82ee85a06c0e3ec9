#include "ssh/client_forwards.hpp"

#include "channel/forward/forward_messages.hpp"
#include "channel/forward/forward_policy.hpp"
#include "channel/forward/socks_server.hpp"
#include "channel/io/fd_pump.hpp"
#include "channel/io/listen_sockets.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/text.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

namespace asio = boost::asio;

namespace {

// OpenSSH's reason2txt().
std::string reason_text(std::uint32_t reason)
{
    switch (reason) {
    case 1: return "administratively prohibited";
    case 2: return "connect failed";
    case 3: return "unknown channel type";
    case 4: return "resource shortage";
    default: return "unknown reason";
    }
}

} // namespace

std::string open_failed_line(channel_id id, std::uint32_t reason, std::string_view text)
{
    return "channel " + std::to_string(id) + ": open failed: " + reason_text(reason) +
           (text.empty() ? "" : ": " + printable(text));
}

// A SOCKS client connection until its CONNECT is answered.
struct client_forwards::socks_handshake {
    socks_handshake(asio::io_context& io, int fd) : d(io, fd) {}
    ~socks_handshake()
    {
        boost::system::error_code ignored;
        if (d.is_open())
            d.close(ignored);
    }
    asio::posix::stream_descriptor d;
    forward::socks_server socks;
    bytes early; // stream bytes read with the request
    std::function<void()> read_more; // captures the handshake weakly
};

client_forwards::client_forwards(connection_runner& runner, logger& log, settings s)
    : runner_(runner), log_(log), settings_(s), channels_(runner)
{
}

client_forwards::~client_forwards() = default;

void client_forwards::stop()
{
    boost::system::error_code ignored;
    stop_listening();
    for (auto& [p, h] : handshakes_)
        if (h->d.is_open())
            h->d.close(ignored);
    channels_.stop_all();
}

void client_forwards::stop_listening()
{
    for (auto& l : listeners_)
        l.socket->close();
    listeners_.clear();
}

bool client_forwards::start_stdio(const std::string& host, int port, std::function<void(int)> on_done)
{
    const int in = private_nonblocking_fd(STDIN_FILENO, false);
    const int out = private_nonblocking_fd(STDOUT_FILENO, true);
    if (in < 0 || out < 0) {
        log_.error(std::string("stdio forwarding: ") + std::strerror(errno));
        if (in >= 0)
            ::close(in);
        if (out >= 0)
            ::close(out);
        return false;
    }
    auto refused = std::make_shared<bool>(false);
    auto ch = open_stdio(
        in, out, host, port,
        [this, refused, on_done](bool opened) {
            if (opened)
                return;
            log_.error("stdio forwarding failed");
            *refused = true;
            on_done(255);
        },
        [refused, on_done] {
            if (!*refused)
                on_done(0);
        });
    return ch != nullptr;
}

std::shared_ptr<socket_channel> client_forwards::open_stdio(int in, int out, const std::string& host, int port,
                                                            std::function<void(bool)> on_open,
                                                            std::function<void()> on_closed)
{
    // What OpenSSH's channel_connect_stdio_fwd sends: a socket path (-W
    // /path) as direct-streamlocal, else direct-tcpip from 127.0.0.1:65535.
    result<channel_id> id = errc::unsupported;
    if (port == port_streamlocal) {
        forward::direct_streamlocal_open req;
        req.path = host;
        req.originator = "127.0.0.1";
        req.originator_port = 65535;
        id = runner_.conn().open(forward::direct_streamlocal_type, req.encode());
    } else {
        forward::direct_tcpip_open req;
        req.host = host;
        req.port = static_cast<std::uint16_t>(port);
        req.originator = "127.0.0.1";
        req.originator_port = 65535;
        id = runner_.conn().open(forward::direct_tcpip_type, req.encode());
    }
    if (!id) {
        ::close(in);
        ::close(out);
        log_.error("stdio forwarding: cannot open a channel");
        return nullptr;
    }
    log_.debug("channel_connect_stdio_fwd: " + printable(host) + ":" + std::to_string(port));
    auto ch = std::make_shared<socket_channel>(in, out);
    auto refused = std::make_shared<bool>(false);
    ch->on_refused = [this, id = *id, refused, on_open](std::uint32_t reason, std::string_view text) {
        log_.info(open_failed_line(id, reason, text));
        *refused = true;
        on_open(false);
    };
    ch->before_start = [on_open] {
        on_open(true);
        return true;
    };
    ch->on_finished = [refused, on_closed] {
        if (!*refused)
            on_closed();
    };
    channels_.add(*id, ch);
    runner_.flush();
    return ch;
}

bool client_forwards::listen(const forward_spec& spec)
{
    asio::io_context& io = runner_.io();
    auto on_accept = [this, spec](int fd) { accepted(spec, fd); };
    if (spec.listen_path) {
        std::string error;
        const int fd = listen_unix(*spec.listen_path, settings_.stream_local_bind_mask,
                                   settings_.stream_local_bind_unlink, error);
        if (fd < 0) {
            log_.error(printable(error));
            log_.error("channel_setup_fwd_listener_streamlocal: cannot listen to path: " + printable(*spec.listen_path));
            return false;
        }
        listeners_.push_back({spec, std::make_unique<fd_listener>(io, fd, *spec.listen_path, on_accept)});
        return true;
    }
    auto bound = listen_tcp(bind_address_of(spec), spec.listen_port);
    for (const auto& e : bound.verbose)
        log_.verbose(printable(e));
    for (const auto& e : bound.errors)
        log_.error(printable(e));
    if (bound.fds.empty()) {
        log_.error("channel_setup_fwd_listener_tcpip: cannot listen to port: " + std::to_string(spec.listen_port));
        return false;
    }
    for (int fd : bound.fds)
        listeners_.push_back({spec, std::make_unique<fd_listener>(io, fd, std::string(), on_accept)});
    return true;
}

forward::bind_address client_forwards::bind_address_of(const forward_spec& spec) const
{
    return forward::forward_bind_address(
        spec.listen_host ? std::optional<std::string_view>(*spec.listen_host) : std::nullopt, true,
        settings_.gateway_ports ? forward::gateway_ports::yes : forward::gateway_ports::no);
}

bool client_forwards::cancel(const forward_spec& key, bool dynamic)
{
    auto matches = [&](const listener& l) {
        if (key.listen_path || l.spec.listen_path)
            return key.listen_path == l.spec.listen_path;
        return l.spec.listen_port == key.listen_port && l.spec.is_dynamic() == dynamic &&
               bind_address_of(l.spec) == bind_address_of(key);
    };
    bool found = false;
    for (auto it = listeners_.begin(); it != listeners_.end();) {
        if (matches(*it)) {
            it->socket->close();
            it = listeners_.erase(it);
            found = true;
        } else {
            ++it;
        }
    }
    return found;
}

void client_forwards::accepted(const forward_spec& spec, int fd)
{
    if (spec.is_dynamic())
        return start_socks(fd);
    const std::string host = spec.connect_host.value_or("");
    log_.debug("Connection to port " + std::to_string(spec.listen_port) + " forwarding to " + printable(host) +
               " port " + std::to_string(spec.connect_port) + " requested.");
    open_for(fd, host, spec.connect_port, spec.connect_path.value_or(""), nullptr);
}

void client_forwards::open_for(int fd, const std::string& host, int port, const std::string& path,
                               std::function<bool(channel_id, bool, std::uint32_t)> on_open)
{
    // As OpenSSH's port_open_helper: 127.0.0.1 port 65535 for a Unix socket.
    const auto [orig, orig_port] = peer_address(fd).value_or(std::make_pair(std::string("127.0.0.1"), 65535));
    bytes data;
    std::string_view type;
    if (!path.empty()) {
        forward::direct_streamlocal_open req;
        req.path = path;
        req.originator = orig;
        req.originator_port = static_cast<std::uint16_t>(orig_port);
        data = req.encode();
        type = forward::direct_streamlocal_type;
    } else {
        forward::direct_tcpip_open req;
        req.host = host;
        req.port = static_cast<std::uint16_t>(port);
        req.originator = orig;
        req.originator_port = static_cast<std::uint16_t>(orig_port);
        data = req.encode();
        type = forward::direct_tcpip_type;
    }
    auto id = runner_.conn().open(type, data);
    if (!id) {
        log_.error("cannot open a forwarding channel");
        if (on_open)
            on_open(0, false, 4);
        ::close(fd);
        return;
    }
    auto ch = std::make_shared<socket_channel>(fd);
    const channel_id cid = *id;
    ch->on_refused = [this, cid, on_open](std::uint32_t reason, std::string_view text) {
        log_.info(open_failed_line(cid, reason, text));
        if (on_open)
            on_open(cid, false, reason);
    };
    if (on_open)
        ch->before_start = [cid, on_open] { return on_open(cid, true, 0); };
    channels_.add(cid, ch);
    runner_.flush();
}

void client_forwards::start_socks(int fd)
{
    auto h = std::make_shared<socks_handshake>(runner_.io(), fd);
    handshakes_[h.get()] = h;
    auto drop = [this](socks_handshake* p) {
        asio::post(runner_.io(), [this, p] { handshakes_.erase(p); });
    };
    // Writes what the handshake has for the client; false if the socket failed.
    auto flush_out = [](socks_handshake& s) {
        while (!s.socks.output().empty()) {
            const auto out = s.socks.output();
            const ssize_t n = ::send(s.d.native_handle(), out.data(), out.size(), MSG_NOSIGNAL);
            if (n <= 0)
                return false; // a reply of a few bytes to a fresh socket: no room means a dead client
            s.socks.consume_output(static_cast<std::size_t>(n));
        }
        return true;
    };
    std::weak_ptr<socks_handshake> weak = h;
    h->read_more = [this, weak, drop, flush_out] {
        auto h = weak.lock();
        if (!h)
            return;
        h->d.async_wait(asio::posix::stream_descriptor::wait_read, [this, weak, drop,
                                                                    flush_out](const boost::system::error_code& ec) {
            auto h = weak.lock();
            if (!h || ec || !h->d.is_open())
                return;
            std::uint8_t buf[2048];
            const ssize_t n = ::read(h->d.native_handle(), buf, sizeof buf);
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return h->read_more();
            if (n <= 0)
                return drop(h.get()); // closed during the handshake
            const byte_span in(buf, static_cast<std::size_t>(n));
            const std::size_t used = h->socks.feed(in);
            if (!flush_out(*h))
                return drop(h.get());
            switch (h->socks.state()) {
            case forward::socks_state::handshake: return h->read_more();
            case forward::socks_state::refused:
                log_.debug("channel: dynamic forwarding refused: " + std::string(h->socks.error_message()));
                return drop(h.get());
            case forward::socks_state::request: break;
            }
            h->early.assign(in.begin() + static_cast<std::ptrdiff_t>(used), in.end());
            const auto& r = h->socks.request();
            log_.debug("Dynamic forwarding to " + printable(r.host) + " port " + std::to_string(r.port));
            // The descriptor passes to the channel; the handshake keeps
            // only what it needs to answer.
            const int fd = h->d.release();
            auto hs = h;
            open_for(fd, r.host, r.port, "",
                     [this, hs, fd, drop](channel_id id, bool ok, std::uint32_t reason) {
                         bool sent = false;
                         if (ok) {
                             hs->socks.reply_success();
                         } else {
                             hs->socks.reply_failure(reason == 2 ? forward::socks5_reply::connection_refused
                                                                 : forward::socks5_reply::not_allowed);
                         }
                         // The socket is the channel's now: write with its descriptor.
                         const auto out = hs->socks.output();
                         sent = out.empty() || ::send(fd, out.data(), out.size(), MSG_NOSIGNAL) ==
                                                   static_cast<ssize_t>(out.size());
                         if (ok && sent && !hs->early.empty()) {
                             connection& conn = runner_.conn();
                             sent = conn.send_capacity(id) >= hs->early.size() && bool(conn.send_data(id, hs->early));
                         }
                         drop(hs.get());
                         return ok && sent;
                     });
        });
    };
    if (!flush_out(*h))
        return drop(h.get());
    h->read_more();
}

} // namespace longhaul
