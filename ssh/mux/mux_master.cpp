#include "ssh/mux/mux_master.hpp"

#include "ssh/mux/mux_socket.hpp"

#include <boost/asio/write.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

namespace longhaul::mux {

namespace asio = boost::asio;

passed_fds& passed_fds::operator=(passed_fds&& o) noexcept
{
    if (this != &o) {
        for (int fd : fds_)
            ::close(fd);
        fds_ = std::move(o.fds_);
        o.fds_.clear();
    }
    return *this;
}

passed_fds::~passed_fds()
{
    for (int fd : fds_)
        ::close(fd);
}

std::vector<int> passed_fds::release() noexcept
{
    std::vector<int> out = std::move(fds_);
    fds_.clear();
    return out;
}

control_client::control_client(asio::io_context& io, int fd, std::uint32_t id, logger& log)
    : sock_(io, fd), id_(id), log_(log)
{
}

control_client::~control_client()
{
    boost::system::error_code ignored;
    sock_.close(ignored);
}

void control_client::start()
{
    // The master speaks first (PROTOCOL.mux §1: each side sends its HELLO).
    send(hello{});
    wait_readable();
}

void control_client::wait_readable()
{
    if (waiting_ || closed_ || paused_)
        return;
    waiting_ = true;
    sock_.async_wait(asio::posix::stream_descriptor::wait_read,
                     [self = shared_from_this()](const boost::system::error_code& ec) {
                         self->waiting_ = false;
                         if (ec || self->closed_)
                             return;
                         self->on_readable();
                     });
}

void control_client::on_readable()
{
    while (!closed_ && !paused_) {
        const bool progressed = pending_ ? read_fds() : read_frame();
        if (!progressed)
            break;
    }
    wait_readable();
}

// Reads no further than the current frame: descriptors may follow it.
bool control_client::read_frame()
{
    std::uint8_t buf[4096];
    const std::size_t want = std::min(reader_.wanted(), sizeof buf);
    const ssize_t n = ::recv(sock_.native_handle(), buf, want, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return false;
    if (n <= 0) {
        if (n < 0)
            log_.debug2(std::string("mux client read: ") + std::strerror(errno));
        close();
        return false;
    }
    if (auto r = reader_.feed(byte_span(buf, static_cast<std::size_t>(n))); !r) {
        log_.error("mux_master_read_cb: bad message length from mux client");
        close();
        return false;
    }
    if (reader_.complete())
        dispatch();
    return true;
}

bool control_client::read_fds()
{
    const int fd = receive_fd(sock_.native_handle());
    if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return false;
        log_.error("failed to receive fd " + std::to_string(fds_.size()) + " from client");
        close();
        return false;
    }
    fds_.add(fd);
    if (fds_.size() < fds_wanted_)
        return true;
    message m = std::move(*pending_);
    pending_.reset();
    if (on_request)
        on_request(m, std::move(fds_));
    fds_ = passed_fds();
    return true;
}

void control_client::dispatch()
{
    auto decoded = decode(reader_.body());
    reader_.reset();
    if (!decoded) {
        log_.error("mux client: malformed message (" + std::string(to_string(decoded.error())) + ")");
        close();
        return;
    }
    message m = std::move(*decoded);
    if (!hello_seen_) {
        const auto* h = std::get_if<hello>(&m);
        if (h == nullptr) {
            log_.error("mux_master_process_msg: expected MUX_MSG_HELLO(0x00000001), received 0x" +
                       [&] {
                           char b[9];
                           std::snprintf(b, sizeof b, "%08x", static_cast<unsigned>(type_of(m)));
                           return std::string(b);
                       }());
            close();
            return;
        }
        if (h->version != protocol_version) {
            log_.error("mux_master_process_hello: unsupported multiplexing protocol version " +
                       std::to_string(h->version) + " (expected " + std::to_string(protocol_version) + ")");
            close();
            return;
        }
        for (const auto& [name, value] : h->extensions)
            log_.debug2("mux_master_process_hello: Unrecognised extension \"" + name + "\"");
        hello_seen_ = true;
        return;
    }
    if (std::holds_alternative<hello>(m)) {
        log_.error("mux client: HELLO sent twice");
        close();
        return;
    }
    const msg t = type_of(m);
    if (t == msg::new_session || t == msg::new_stdio_fwd) {
        pending_ = std::move(m);
        fds_wanted_ = t == msg::new_session ? 3 : 2;
        return;
    }
    if (on_request)
        on_request(m, passed_fds());
}

void control_client::resume()
{
    paused_ = false;
    // Frames already buffered in the socket wait for readiness, which is
    // still reported: level-triggered.
    wait_readable();
}

void control_client::send(const message& m)
{
    if (closed_)
        return;
    out_.push_back(frame(m));
    write_next();
}

void control_client::send_now(const message& m)
{
    if (closed_ || writing_ || !out_.empty())
        return send(m);
    const bytes f = frame(m);
    (void)!::send(sock_.native_handle(), f.data(), f.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void control_client::write_next()
{
    if (writing_ || closed_)
        return;
    if (out_.empty()) {
        if (close_when_written_)
            close();
        return;
    }
    writing_ = true;
    asio::async_write(sock_, asio::buffer(out_.front()),
                      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                          self->writing_ = false;
                          if (self->closed_)
                              return;
                          if (ec) {
                              self->close();
                              return;
                          }
                          self->out_.pop_front();
                          self->write_next();
                      });
}

void control_client::close_after_output()
{
    close_when_written_ = true;
    if (!writing_ && out_.empty())
        close();
}

void control_client::close()
{
    if (closed_)
        return;
    closed_ = true;
    boost::system::error_code ignored;
    sock_.cancel(ignored);
    sock_.close(ignored);
    out_.clear();
    if (on_closed) {
        auto cb = std::move(on_closed);
        on_closed = nullptr;
        cb();
    }
}

master_listener::master_listener(asio::io_context& io, int listen_fd, std::string path, logger& log)
    : io_(io), sock_(io, listen_fd), path_(std::move(path)), log_(log)
{
}

master_listener::~master_listener()
{
    stop();
}

void master_listener::start()
{
    accept_next();
}

void master_listener::accept_next()
{
    if (!listening_)
        return;
    sock_.async_wait(asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
        if (ec || !listening_)
            return;
        for (;;) {
            const int fd = ::accept4(sock_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
                    log_.error(std::string("accept: ") + std::strerror(errno));
                break;
            }
            const long uid = peer_uid(fd);
            if (uid < 0) {
                log_.error(std::string("getpeereid failed: ") + std::strerror(errno));
                ::close(fd);
                continue;
            }
            if (uid != 0 && static_cast<uid_t>(uid) != ::getuid()) {
                log_.error("multiplex uid mismatch: peer euid " + std::to_string(uid) + " != uid " +
                           std::to_string(::getuid()));
                ::close(fd);
                continue;
            }
            auto c = std::make_shared<control_client>(io_, fd, next_id_++, log_);
            if (on_client)
                on_client(c);
        }
        accept_next();
    });
}

void master_listener::stop()
{
    if (!listening_)
        return;
    listening_ = false;
    boost::system::error_code ignored;
    sock_.cancel(ignored);
    sock_.close(ignored);
    ::unlink(path_.c_str());
}

} // namespace longhaul::mux
