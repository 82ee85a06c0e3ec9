#include "channel/io/tun_channel.hpp"

#include "channel/forward/tun_messages.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace longhaul {

namespace asio = boost::asio;

namespace {

// A tun device's largest packet: the MTU can be set up to 65535.
constexpr std::size_t max_device_packet = 65536;
// Packets per wake-up before yielding to other channels and events.
constexpr int max_tun_packets_per_turn = 64;

} // namespace

int open_tun_device(std::uint32_t unit, bool point_to_point, std::string& ifname, std::string& error)
{
    if (unit != forward::tun_unit_any && unit > forward::tun_unit_max) {
        error = "invalid tunnel id " + std::to_string(unit);
        return -1;
    }
    const int fd = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        error = std::string("failed to open tunnel control interface: ") + std::strerror(errno);
        return -1;
    }
    ifreq ifr{};
    ifr.ifr_flags = static_cast<short>((point_to_point ? IFF_TUN : IFF_TAP) | IFF_NO_PI);
    // "any": no name, and the kernel takes the first free tunN or tapN.
    if (unit != forward::tun_unit_any)
        std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s%u", point_to_point ? "tun" : "tap", unit);
    if (::ioctl(fd, TUNSETIFF, &ifr) < 0) {
        error = "failed to configure tunnel (mode " + std::to_string(point_to_point ? 1 : 2) +
                "): " + std::strerror(errno);
        ::close(fd);
        return -1;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    ifname.assign(ifr.ifr_name, ::strnlen(ifr.ifr_name, sizeof ifr.ifr_name));
    return fd;
}

// Readiness of the device; Asio must not close the descriptor, ours.
struct tun_channel::watcher {
    watcher(asio::io_context& io, int fd) : d(io, fd) {}
    ~watcher() { d.release(); }
    asio::posix::stream_descriptor d;
};

tun_channel::tun_channel(int fd, bool point_to_point, logger& log)
    : fd_(fd), point_to_point_(point_to_point), log_(log), buf_(forward::tun_af_header_size + max_device_packet)
{
}

tun_channel::~tun_channel() { close_device(); }

void tun_channel::close_device()
{
    if (watcher_) {
        boost::system::error_code ignored;
        watcher_->d.cancel(ignored);
    }
    watcher_.reset();
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

void tun_channel::start()
{
    if (started_ || finished_ || fd_ < 0)
        return;
    started_ = true;
    watcher_ = std::make_unique<watcher>(runner->io(), fd_);
    pump();
}

void tun_channel::stop()
{
    finished_ = true;
    close_device();
}

void tun_channel::on_open_confirmed(byte_span)
{
    if (finished_)
        return;
    start();
    if (on_confirmed)
        on_confirmed();
}

void tun_channel::on_open_failed(std::uint32_t reason, std::string_view text)
{
    finished_ = true;
    close_device();
    if (on_refused)
        on_refused(reason, text);
}

void tun_channel::wait_readable()
{
    if (waiting_ || !watcher_)
        return;
    waiting_ = true;
    watcher_->d.async_wait(asio::posix::stream_descriptor::wait_read,
                           [self = weak_from_this()](const boost::system::error_code& ec) {
                               auto s = self.lock();
                               if (!s)
                                   return;
                               s->waiting_ = false;
                               if (!ec)
                                   s->pump();
                           });
}

// The held message goes out whole or not at all: false while it waits
// for the window (on_writable) or the output queue (wake_when_drained).
bool tun_channel::send_held()
{
    connection& conn = runner->conn();
    if (!conn.exists(id))
        return false;
    if (held_ > conn.info(id).remote_max_packet) {
        log_.debug("channel " + std::to_string(id) + ": dropped a packet of " + std::to_string(held_) +
                   " bytes, over the peer's maximum packet size");
        held_ = 0;
        return true;
    }
    if (runner->congested()) {
        runner->wake_when_drained(id);
        return false;
    }
    if (conn.send_capacity(id) < held_)
        return false;
    (void)conn.send_data(id, byte_span(buf_.data(), held_));
    held_ = 0;
    return true;
}

void tun_channel::pump()
{
    if (!started_ || finished_ || close_sent_ || fd_ < 0)
        return;
    const std::size_t header = point_to_point_ ? forward::tun_af_header_size : 0;
    for (int turn = 0; turn < max_tun_packets_per_turn; ++turn) {
        if (held_ > 0 && !send_held())
            return;
        const ssize_t n = ::read(fd_, buf_.data() + header, buf_.size() - header);
        if (n > 0) {
            if (point_to_point_)
                forward::put_af_header(buf_.data(), byte_span(buf_.data() + header, static_cast<std::size_t>(n)));
            held_ = header + static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            runner->flush();
            return wait_readable();
        }
        // The interface was deleted (EBADFD, EIO) or the read failed.
        return device_failed(n == 0 ? std::string("end of file") : std::string(std::strerror(errno)));
    }
    runner->flush();
    asio::post(runner->io(), [self = weak_from_this()] {
        if (auto s = self.lock())
            s->pump();
    });
}

void tun_channel::on_writable() { pump(); }

void tun_channel::on_data(byte_span data, std::uint32_t extended)
{
    if (extended != 0 || fd_ < 0 || close_sent_) {
        runner->consumed(id, data.size());
        return;
    }
    byte_span packet = data;
    if (point_to_point_) {
        auto p = forward::strip_af_header(data);
        if (!p) {
            // OpenSSH's outfilter stops the channel on such a message.
            runner->consumed(id, data.size());
            return device_failed("a message too short for its address family");
        }
        packet = *p;
    }
    for (;;) {
        const ssize_t n = ::write(fd_, packet.data(), packet.size());
        // Written; or lost, as a full queue (EAGAIN) or a link that is down
        // (EIO: the interface is not up yet, or was taken down) loses it.
        // OpenSSH ends the channel on EIO, so a packet that arrives before
        // the far end's interface is configured breaks the tunnel.
        if (n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EIO)
            break;
        if (errno == EINTR)
            continue;
        // A packet the kernel refuses (EINVAL: not IP) ends the channel, as
        // OpenSSH's write failure does.
        runner->consumed(id, data.size());
        return device_failed(std::string("write: ") + std::strerror(errno));
    }
    runner->consumed(id, data.size());
}

void tun_channel::device_failed(const std::string& why)
{
    log_.debug("channel " + std::to_string(id) + ": tunnel device: " + why);
    if (watcher_) {
        boost::system::error_code ignored;
        watcher_->d.cancel(ignored);
    }
    held_ = 0;
    if (!close_sent_ && runner->conn().exists(id)) {
        close_sent_ = true;
        runner->conn().send_eof(id);
        runner->conn().close(id);
        runner->flush();
    }
}

void tun_channel::on_close()
{
    if (!close_sent_ && runner->conn().exists(id)) {
        close_sent_ = true;
        runner->conn().close(id);
        runner->flush();
    }
    finished_ = true;
    close_device();
}

} // namespace longhaul
