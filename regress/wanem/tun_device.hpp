// A TUN device owned by this process, created inside a chosen network namespace.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <sys/types.h>

namespace wanem {

class tun_device {
public:
    // Creates (non-persistent) TUN device 'name' inside the namespace whose
    // nsfs file is ns_path ("" = the caller's). The device disappears when
    // the descriptor closes, so a crashed emulator leaves no device behind.
    // With offload, packets carry a virtio_net_hdr and the kernel may hand us
    // TCP super-packets of up to 64 KiB. Throws std::system_error.
    static tun_device create(const std::string& ns_path, const std::string& name, bool offload);

    tun_device() = default;
    tun_device(tun_device&& other) noexcept;
    tun_device& operator=(tun_device&& other) noexcept;
    tun_device(const tun_device&) = delete;
    tun_device& operator=(const tun_device&) = delete;
    ~tun_device();

    int fd() const { return fd_; }
    const std::string& name() const { return name_; }

    // Non-blocking; return the byte count, or -1 with errno (EAGAIN when empty).
    ssize_t read_packet(std::span<std::byte> buf) const;
    ssize_t write_packet(std::span<const std::byte> pkt) const;

private:
    int fd_ = -1;
    std::string name_;
};

} // namespace wanem
