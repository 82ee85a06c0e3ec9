// A channel joined to a tun or tap device (ssh -w, sshd's PermitTunnel):
// each read of the device is one packet (IFF_NO_PI: an IP packet, or an
// Ethernet frame for a tap device) and goes out as one CHANNEL_DATA
// message; each message from the peer is one write to the device. A tun
// device keeps no byte stream, so the boundaries are the data, as OpenSSH's
// "datagram" channels keep them. Point-to-point mode adds and strips the
// 4-byte address family header (channel/forward/tun_messages.hpp).
//
// A packet read while the peer's window or the output queue is full waits
// here, and the device is not read again until it is sent: the kernel's
// queue (txqueuelen) drops what overflows, as a congested link would. A
// packet larger than the peer's maximum packet size is dropped, and a
// write the device refuses for the moment (EAGAIN) loses its packet, as
// OpenSSH's channel_handle_wfd loses it, and so does one written while
// the interface is down (EIO), where OpenSSH ends the channel; IP carries
// on above all of these.
#pragma once

#include "channel/io/connection_runner.hpp"
#include "common/log.hpp"

#include <functional>
#include <memory>
#include <string>

namespace longhaul {

// Opens /dev/net/tun as OpenSSH's sys_tun_open does on Linux: IFF_TUN
// (point-to-point) or IFF_TAP (ethernet), with IFF_NO_PI, named tunN or
// tapN for `unit`, or the first free one the kernel picks for
// forward::tun_unit_any. Returns a non-blocking descriptor and the
// interface's name in `ifname`, or -1 with the reason in `error` (OpenSSH
// logs it at debug level).
int open_tun_device(std::uint32_t unit, bool point_to_point, std::string& ifname, std::string& error);

class tun_channel : public channel_handler, public std::enable_shared_from_this<tun_channel> {
public:
    // Takes ownership of `fd`, a device open_tun_device() opened.
    tun_channel(int fd, bool point_to_point, logger& log);
    ~tun_channel() override;
    tun_channel(const tun_channel&) = delete;
    tun_channel& operator=(const tun_channel&) = delete;

    // Starts reading the device: after runner.attach(), once the channel
    // is open (accepted here, or confirmed: on_open_confirmed does it).
    void start();
    // The program is ending: the device closed, nothing sent.
    void stop();

    // The peer confirmed the channel we opened.
    std::function<void()> on_confirmed;
    // The peer refused the channel we opened (reason, description).
    std::function<void(std::uint32_t reason, std::string_view text)> on_refused;

    void on_open_confirmed(byte_span type_specific) override;
    void on_open_failed(std::uint32_t reason, std::string_view text) override;
    void on_data(byte_span data, std::uint32_t extended) override;
    void on_close() override;
    void on_writable() override;

private:
    void pump();
    bool send_held();
    void wait_readable();
    void device_failed(const std::string& why);
    void close_device();

    int fd_;
    bool point_to_point_;
    logger& log_;
    // Room for the largest packet a tun device returns (64 KiB), after the
    // header's 4 bytes; held_ is the length of a message waiting to go.
    bytes buf_;
    std::size_t held_ = 0;
    bool started_ = false;
    bool waiting_ = false;
    bool close_sent_ = false;
    bool finished_ = false;
    struct watcher;
    std::unique_ptr<watcher> watcher_;
};

} // namespace longhaul
