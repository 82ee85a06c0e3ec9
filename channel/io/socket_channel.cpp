#include "channel/io/socket_channel.hpp"

#include "channel/io/connect_socket.hpp"
#include "channel/io/fd_pump.hpp"
#include "channel/io/socks_channel.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace longhaul {

socket_channel::socket_channel(int fd) : fd_(fd)
{
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    // What arrives from the channel is written as it comes: with Nagle on,
    // the tail of a response waits for the application's delayed ACK (40 ms
    // a 64 KiB exchange, contrib/bench/forward). OpenSSH sets it on every
    // forwarded socket too. A Unix socket refuses it, harmlessly.
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

socket_channel::socket_channel(int in_fd, int out_fd) : fd_(-1), in_fd_(in_fd), out_fd_(out_fd) {}

socket_channel::~socket_channel()
{
    if (from_socket_)
        from_socket_->stop();
    close_socket();
}

void socket_channel::close_socket()
{
    for (int* fd : {&fd_, &in_fd_, &out_fd_}) {
        if (*fd >= 0)
            ::close(*fd);
        *fd = -1;
    }
}

void socket_channel::start()
{
    if (started_ || finished_ || (fd_ < 0 && in_fd_ < 0))
        return;
    started_ = true;
    // Each pump owns a duplicate, so that either may close its own at its
    // end while this keeps the socket itself for shutdown(SHUT_WR): closing
    // one of several descriptors of a socket sends no FIN. The
    // two-descriptor form hands its own over.
    int rd = in_fd_, wr = out_fd_;
    in_fd_ = out_fd_ = -1;
    if (fd_ >= 0) {
        rd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 3);
        wr = ::fcntl(fd_, F_DUPFD_CLOEXEC, 3);
    }
    if (rd < 0 || wr < 0) {
        if (rd >= 0)
            ::close(rd);
        if (wr >= 0)
            ::close(wr);
        read_done_ = write_done_ = true;
        maybe_close();
        return;
    }
    std::weak_ptr<socket_channel> self = weak_from_this();
    to_socket_ = std::make_shared<fd_sink>(*runner, id, wr, true);
    to_socket_->on_drained = [self] {
        auto s = self.lock();
        if (!s)
            return;
        if (s->fd_ >= 0)
            ::shutdown(s->fd_, SHUT_WR);
        s->write_done_ = true;
        s->maybe_close();
    };
    to_socket_->on_error = [self](int) {
        // The socket stopped taking data (reset): nothing more can arrive either.
        if (auto s = self.lock()) {
            s->write_done_ = s->read_done_ = true;
            s->maybe_close();
        }
    };
    from_socket_ = std::make_shared<fd_source>(*runner, id, rd, 0, true);
    from_socket_->on_eof = [self](int error) {
        auto s = self.lock();
        if (!s)
            return;
        s->read_done_ = true;
        if (error != 0)
            s->write_done_ = true; // a reset socket takes nothing more
        else if (!s->close_sent_ && !s->closed_by_peer_)
            s->runner->conn().send_eof(s->id);
        s->runner->flush();
        s->maybe_close();
    };
    from_socket_->start();
}

void socket_channel::stop()
{
    finished_ = true;
    if (from_socket_)
        from_socket_->stop();
    to_socket_.reset(); // its pending wait holds only a weak reference
    close_socket();
}

void socket_channel::abandon()
{
    if (finished_ || abandoned_)
        return;
    abandoned_ = true;
    if (!started_)
        return; // on_open_confirmed closes it; a refusal ends it anyway
    if (from_socket_)
        from_socket_->stop();
    if (!read_done_ && !close_sent_ && !closed_by_peer_)
        runner->conn().send_eof(id);
    to_socket_.reset();
    read_done_ = write_done_ = true;
    close_socket();
    maybe_close();
}

void socket_channel::on_open_confirmed(byte_span)
{
    if (abandoned_) {
        read_done_ = write_done_ = true;
        close_socket();
        maybe_close();
        return;
    }
    if (before_start && !before_start()) {
        read_done_ = write_done_ = true;
        maybe_close();
        return;
    }
    start();
}

void socket_channel::on_open_failed(std::uint32_t reason, std::string_view text)
{
    if (on_refused)
        on_refused(reason, text); // may still write to the socket (a SOCKS failure reply)
    close_socket();
    finished_ = true;
    if (on_finished)
        on_finished();
}

void socket_channel::on_data(byte_span data, std::uint32_t extended)
{
    // Forwarded channels carry no extended data; OpenSSH drops it too.
    if (extended != 0 || !to_socket_) {
        runner->consumed(id, data.size());
        return;
    }
    to_socket_->write(data);
}

void socket_channel::on_eof()
{
    if (to_socket_)
        to_socket_->eof(); // on_drained shuts the write side
    else
        write_done_ = true;
}

void socket_channel::on_close()
{
    closed_by_peer_ = true;
    if (from_socket_)
        from_socket_->stop();
    read_done_ = true;
    // What arrived before the close still reaches the socket (OpenSSH
    // drains its output buffer too); on_drained then ends the channel.
    if (to_socket_ && !write_done_)
        to_socket_->eof();
    else
        write_done_ = true;
    maybe_close();
}

void socket_channel::on_writable()
{
    if (from_socket_)
        from_socket_->pump();
}

void socket_channel::maybe_close()
{
    if (finished_ || !read_done_ || !write_done_)
        return;
    if (!close_sent_) {
        close_sent_ = true;
        runner->conn().close(id);
        runner->flush();
    }
    if (closed_by_peer_ || !runner->conn().exists(id))
        finish();
}

void socket_channel::finish()
{
    if (finished_)
        return;
    finished_ = true;
    if (from_socket_)
        from_socket_->stop();
    close_socket();
    if (on_finished)
        on_finished();
}

namespace {

// Erases map[id] on the next turn of the event loop if it still holds `raw`.
template <class Map, class T>
void erase_later(boost::asio::io_context& io, Map& map, channel_id id, const T* raw)
{
    boost::asio::post(io, [&map, id, raw] {
        auto it = map.find(id);
        if (it != map.end() && it->second.get() == raw)
            map.erase(it);
    });
}

} // namespace

socket_channel_set::socket_channel_set(connection_runner& runner) : runner_(runner) {}

socket_channel_set::~socket_channel_set() = default;

void socket_channel_set::add(channel_id id, std::shared_ptr<socket_channel> ch)
{
    socket_channel* raw = ch.get();
    ch->on_finished = [this, id, raw, then = std::move(ch->on_finished)] {
        if (then)
            then();
        erase_later(runner_.io(), channels_, id, raw);
    };
    runner_.attach(id, ch);
    channels_[id] = std::move(ch);
}

void socket_channel_set::connect_and_accept(channel_id id, const std::string& host, int port,
                                            const std::string& path,
                                            std::function<void(const std::string&)> log_failure)
{
    auto done = [this, id, log_failure](int fd, const connect_failure& f) {
        // Not inside the attempt's own handler: it is erased afterwards.
        if (auto it = connecting_.find(id); it != connecting_.end())
            erase_later(runner_.io(), connecting_, id, it->second.get());
        if (fd >= 0)
            return accept_connected(id, fd);
        log_failure(f.log_line);
        runner_.conn().reject(id, open_failure_reason::connect_failed, f.reason);
        runner_.flush();
    };
    connecting_[id] = path.empty() ? connect_tcp(runner_.io(), host, port, done)
                                   : connect_unix(runner_.io(), path, done);
}

void socket_channel_set::accept_connected(channel_id id, int fd)
{
    auto ch = std::make_shared<socket_channel>(fd);
    runner_.conn().accept(id);
    add(id, ch);
    ch->start();
    runner_.flush();
}

void socket_channel_set::accept_socks(channel_id id, logger& log,
                                      std::function<bool(const forward::socks_request&)> permit,
                                      std::function<void(const std::string&)> log_failure)
{
    auto h = std::make_shared<socks_channel>(log);
    socks_channel* raw = h.get();
    h->on_finished = [this, id, raw] {
        // An attempt still connecting for it is abandoned too.
        if (auto it = connecting_.find(id); it != connecting_.end())
            erase_later(runner_.io(), connecting_, id, it->second.get());
        erase_later(runner_.io(), handshakes_, id, raw);
    };
    h->on_request = [this, id, raw, permit = std::move(permit),
                     log_failure = std::move(log_failure)](const forward::socks_request& r) {
        if (!permit(r))
            return raw->fail(forward::socks5_reply::not_allowed);
        auto done = [this, id, raw, log_failure](int fd, const connect_failure& f) {
            if (auto it = connecting_.find(id); it != connecting_.end())
                erase_later(runner_.io(), connecting_, id, it->second.get());
            auto hs = handshakes_.find(id);
            if (hs == handshakes_.end() || hs->second.get() != raw) {
                if (fd >= 0)
                    ::close(fd); // the channel ended while connecting
                return;
            }
            if (fd < 0) {
                log_failure(f.log_line);
                return raw->fail(forward::socks5_reply_for_open_failure(
                    static_cast<std::uint32_t>(open_failure_reason::connect_failed), f.reason));
            }
            auto early = raw->succeed();
            erase_later(runner_.io(), handshakes_, id, raw);
            if (!early) {
                ::close(fd);
                return;
            }
            // The socket's channel takes the id over (runner_.attach
            // replaces the handshake's handler), with what the client sent
            // after its request and its EOF if that came too.
            const bool eof = raw->eof_received();
            auto ch = std::make_shared<socket_channel>(fd);
            add(id, ch);
            ch->start();
            if (!early->empty())
                ch->on_data(*early, 0);
            if (eof)
                ch->on_eof();
            runner_.flush();
        };
        connecting_[id] = connect_tcp(runner_.io(), r.host, r.port, done);
    };
    runner_.conn().accept(id);
    runner_.attach(id, h);
    handshakes_[id] = std::move(h);
    runner_.flush();
}

void socket_channel_set::stop_all()
{
    connecting_.clear();
    for (auto& [id, h] : handshakes_)
        h->stop();
    for (auto& [id, ch] : channels_)
        ch->stop();
}

} // namespace longhaul
