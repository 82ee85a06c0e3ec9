#include "sshd/pty.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace longhaul {

pty_pair::pty_pair(pty_pair&& o) noexcept
    : master_(std::exchange(o.master_, -1)), slave_(std::exchange(o.slave_, -1)), name_(std::move(o.name_))
{
}

pty_pair& pty_pair::operator=(pty_pair&& o) noexcept
{
    if (this != &o) {
        this->~pty_pair();
        new (this) pty_pair(std::move(o));
    }
    return *this;
}

pty_pair::~pty_pair()
{
    if (master_ >= 0)
        ::close(master_);
    close_slave();
}

void pty_pair::close_slave() noexcept
{
    if (slave_ >= 0)
        ::close(slave_);
    slave_ = -1;
}

int pty_pair::release_master() noexcept { return std::exchange(master_, -1); }

result<pty_pair> pty_pair::allocate(uid_t uid, gid_t gid, std::string& error)
{
    pty_pair p;
    char name[256] = {};
    if (openpty(&p.master_, &p.slave_, name, nullptr, nullptr) != 0) {
        error = std::string("openpty: ") + std::strerror(errno);
        return errc::io_error;
    }
    p.name_ = name;
    // Not inherited by the programs of other sessions.
    (void)::fcntl(p.master_, F_SETFD, FD_CLOEXEC);
    (void)::fcntl(p.slave_, F_SETFD, FD_CLOEXEC);
    if (geteuid() == 0) {
        gid_t tty_gid = gid;
        if (const group* g = getgrnam("tty"))
            tty_gid = g->gr_gid;
        const mode_t mode = tty_gid != gid ? 0620 : 0600;
        if (fchown(p.slave_, uid, tty_gid) != 0 || fchmod(p.slave_, mode) != 0) {
            error = "chown " + p.name_ + ": " + std::strerror(errno);
            return errc::io_error;
        }
    }
    return p;
}

pty_pair pty_pair::adopt(int master, int slave, std::string name) noexcept
{
    pty_pair p;
    p.master_ = master;
    p.slave_ = slave;
    p.name_ = std::move(name);
    return p;
}

void pty_pair::configure(const pty_request& req) const
{
    set_window_size(slave_, req.cols, req.rows, req.width_px, req.height_px);
    apply_terminal_modes(slave_, req.modes);
}

void set_window_size(int fd, std::uint32_t cols, std::uint32_t rows, std::uint32_t width_px, std::uint32_t height_px)
{
    winsize ws{};
    ws.ws_col = static_cast<unsigned short>(std::min<std::uint32_t>(cols, 0xffff));
    ws.ws_row = static_cast<unsigned short>(std::min<std::uint32_t>(rows, 0xffff));
    ws.ws_xpixel = static_cast<unsigned short>(std::min<std::uint32_t>(width_px, 0xffff));
    ws.ws_ypixel = static_cast<unsigned short>(std::min<std::uint32_t>(height_px, 0xffff));
    ioctl(fd, TIOCSWINSZ, &ws);
}

void apply_terminal_modes(int fd, byte_span encoded_modes)
{
    auto modes = decode_terminal_modes(encoded_modes);
    termios tio{};
    if (!modes || tcgetattr(fd, &tio) != 0)
        return;
    auto set_flag = [](tcflag_t& field, tcflag_t bit, std::uint32_t v) {
        if (v)
            field |= bit;
        else
            field &= ~bit;
    };
    for (const auto& m : *modes) {
        const std::uint32_t v = m.value;
        const auto cc = static_cast<cc_t>(v > 255 ? 255 : v);
        switch (m.opcode) {
        case 1: tio.c_cc[VINTR] = cc; break;
        case 2: tio.c_cc[VQUIT] = cc; break;
        case 3: tio.c_cc[VERASE] = cc; break;
        case 4: tio.c_cc[VKILL] = cc; break;
        case 5: tio.c_cc[VEOF] = cc; break;
        case 6: tio.c_cc[VEOL] = cc; break;
        case 7: tio.c_cc[VEOL2] = cc; break;
        case 8: tio.c_cc[VSTART] = cc; break;
        case 9: tio.c_cc[VSTOP] = cc; break;
        case 10: tio.c_cc[VSUSP] = cc; break;
        case 12: tio.c_cc[VREPRINT] = cc; break;
        case 13: tio.c_cc[VWERASE] = cc; break;
        case 14: tio.c_cc[VLNEXT] = cc; break;
        case 18: tio.c_cc[VDISCARD] = cc; break;
        case 30: set_flag(tio.c_iflag, IGNPAR, v); break;
        case 31: set_flag(tio.c_iflag, PARMRK, v); break;
        case 32: set_flag(tio.c_iflag, INPCK, v); break;
        case 33: set_flag(tio.c_iflag, ISTRIP, v); break;
        case 34: set_flag(tio.c_iflag, INLCR, v); break;
        case 35: set_flag(tio.c_iflag, IGNCR, v); break;
        case 36: set_flag(tio.c_iflag, ICRNL, v); break;
        case 37: set_flag(tio.c_iflag, IUCLC, v); break;
        case 38: set_flag(tio.c_iflag, IXON, v); break;
        case 39: set_flag(tio.c_iflag, IXANY, v); break;
        case 40: set_flag(tio.c_iflag, IXOFF, v); break;
        case 41: set_flag(tio.c_iflag, IMAXBEL, v); break;
        case 42: set_flag(tio.c_iflag, IUTF8, v); break;
        case 50: set_flag(tio.c_lflag, ISIG, v); break;
        case 51: set_flag(tio.c_lflag, ICANON, v); break;
        case 53: set_flag(tio.c_lflag, ECHO, v); break;
        case 54: set_flag(tio.c_lflag, ECHOE, v); break;
        case 55: set_flag(tio.c_lflag, ECHOK, v); break;
        case 56: set_flag(tio.c_lflag, ECHONL, v); break;
        case 57: set_flag(tio.c_lflag, NOFLSH, v); break;
        case 58: set_flag(tio.c_lflag, TOSTOP, v); break;
        case 59: set_flag(tio.c_lflag, IEXTEN, v); break;
        case 60: set_flag(tio.c_lflag, ECHOCTL, v); break;
        case 61: set_flag(tio.c_lflag, ECHOKE, v); break;
        case 62: set_flag(tio.c_lflag, PENDIN, v); break;
        case 70: set_flag(tio.c_oflag, OPOST, v); break;
        case 71: set_flag(tio.c_oflag, OLCUC, v); break;
        case 72: set_flag(tio.c_oflag, ONLCR, v); break;
        case 73: set_flag(tio.c_oflag, OCRNL, v); break;
        case 74: set_flag(tio.c_oflag, ONOCR, v); break;
        case 75: set_flag(tio.c_oflag, ONLRET, v); break;
        case 90: set_flag(tio.c_cflag, CS7, v); break;
        case 91: set_flag(tio.c_cflag, CS8, v); break;
        case 92: set_flag(tio.c_cflag, PARENB, v); break;
        case 93: set_flag(tio.c_cflag, PARODD, v); break;
        default: break; // speeds and unknown opcodes
        }
    }
    tcsetattr(fd, TCSANOW, &tio);
}

} // namespace longhaul
