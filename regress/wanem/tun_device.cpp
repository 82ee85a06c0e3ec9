#include "tun_device.hpp"

#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace wanem {

namespace {

[[noreturn]] void fail(const std::string& what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

class fd_guard {
public:
    explicit fd_guard(int fd) : fd_(fd) {}
    ~fd_guard()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    fd_guard(const fd_guard&) = delete;
    fd_guard& operator=(const fd_guard&) = delete;
    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_;
};

// Switches this thread into a namespace for the guard's lifetime. A TUN
// device belongs to the namespace its /dev/net/tun descriptor was opened in,
// so opening inside the target namespace is all it takes; no "ip link set
// netns" dance, and nothing to move back on failure.
class netns_scope {
public:
    explicit netns_scope(const std::string& ns_path)
    {
        if (ns_path.empty())
            return;
        fd_guard target(::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
        if (target.get() < 0)
            fail("open " + ns_path);
        original_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (original_ < 0)
            fail("open /proc/self/ns/net");
        if (::setns(target.get(), CLONE_NEWNET) != 0) {
            int e = errno;
            ::close(original_);
            errno = e;
            fail("setns " + ns_path);
        }
    }
    ~netns_scope()
    {
        if (original_ < 0)
            return;
        // Failing to return would leave the second device in the wrong
        // namespace; there is no sane way to continue.
        if (::setns(original_, CLONE_NEWNET) != 0)
            std::terminate();
        ::close(original_);
    }
    netns_scope(const netns_scope&) = delete;
    netns_scope& operator=(const netns_scope&) = delete;

private:
    int original_ = -1;
};

} // namespace

tun_device tun_device::create(const std::string& ns_path, const std::string& name, bool offload)
{
    if (name.empty() || name.size() >= IFNAMSIZ)
        throw std::system_error(EINVAL, std::generic_category(), "bad device name '" + name + "'");
    netns_scope in_ns(ns_path);

    fd_guard fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0)
        fail("open /dev/net/tun");

    ifreq ifr{};
    std::memcpy(ifr.ifr_name, name.data(), name.size());
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI | (offload ? IFF_VNET_HDR : 0);
    if (::ioctl(fd.get(), TUNSETIFF, &ifr) != 0)
        fail("TUNSETIFF " + name);

    if (offload) {
        // The legacy 10-byte virtio_net_hdr is what we parse; say so rather
        // than rely on the default.
        int hdr_size = 10;
        if (::ioctl(fd.get(), TUNSETVNETHDRSZ, &hdr_size) != 0)
            fail("TUNSETVNETHDRSZ " + name);
        // TCP segmentation and checksums are left to whoever finally needs
        // them: the receiving stack accepts super-packets with partial
        // checksums, so most packets cross the emulator as 64 KiB units.
        // No UFO/USO: UDP arrives as MTU-sized datagrams.
        unsigned flags = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6;
        if (::ioctl(fd.get(), TUNSETOFFLOAD, flags) != 0)
            fail("TUNSETOFFLOAD " + name);
    }

    tun_device dev;
    dev.fd_ = fd.release();
    dev.name_ = name;
    return dev;
}

tun_device::tun_device(tun_device&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), name_(std::move(other.name_))
{
}

tun_device& tun_device::operator=(tun_device&& other) noexcept
{
    if (this != &other) {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        name_ = std::move(other.name_);
    }
    return *this;
}

tun_device::~tun_device()
{
    if (fd_ >= 0)
        ::close(fd_);
}

ssize_t tun_device::read_packet(std::span<std::byte> buf) const
{
    return ::read(fd_, buf.data(), buf.size());
}

ssize_t tun_device::write_packet(std::span<const std::byte> pkt) const
{
    return ::write(fd_, pkt.data(), pkt.size());
}

} // namespace wanem
