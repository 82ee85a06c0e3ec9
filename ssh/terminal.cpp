#include "ssh/terminal.hpp"

#include "channel/messages.hpp"

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

namespace longhaul {

namespace {

// The one piece of process-wide state: the settings to restore, readable
// from signal handlers and atexit (which cannot reach an object).
struct saved_terminal {
    volatile sig_atomic_t valid = 0;
    int fd = -1;
    termios settings{};
};
saved_terminal g_saved;

void restore_saved() noexcept
{
    if (g_saved.valid) {
        tcsetattr(g_saved.fd, TCSADRAIN, &g_saved.settings);
        g_saved.valid = 0;
    }
}

void on_fatal_signal(int sig)
{
    restore_saved();
    std::signal(sig, SIG_DFL);
    raise(sig);
}

void install_restorers()
{
    static bool installed = false;
    if (installed)
        return;
    installed = true;
    std::atexit(restore_saved);
    for (int sig : {SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
        std::signal(sig, on_fatal_signal);
}

// termios speed constants to the baud numbers RFC 4254 sends.
std::uint32_t baud(speed_t s)
{
    struct entry {
        speed_t code;
        std::uint32_t baud;
    };
    for (auto [code, b] : {entry{B0, 0}, {B50, 50}, {B75, 75}, {B110, 110}, {B134, 134}, {B150, 150}, {B200, 200},
                           {B300, 300}, {B600, 600}, {B1200, 1200}, {B1800, 1800}, {B2400, 2400}, {B4800, 4800},
                           {B9600, 9600}, {B19200, 19200}, {B38400, 38400}, {B57600, 57600}, {B115200, 115200},
                           {B230400, 230400}})
        if (code == s)
            return b;
    return 38400;
}

} // namespace

std::optional<terminal_size> query_terminal_size(int fd)
{
    winsize ws{};
    if (ioctl(fd, TIOCGWINSZ, &ws) != 0)
        return std::nullopt;
    return terminal_size{ws.ws_col, ws.ws_row, ws.ws_xpixel, ws.ws_ypixel};
}

raw_terminal::raw_terminal(int fd) : fd_(fd) { enter(); }

raw_terminal::~raw_terminal() { leave(); }

void raw_terminal::enter()
{
    if (active_)
        return;
    termios tio{};
    if (tcgetattr(fd_, &tio) != 0)
        return;
    g_saved.fd = fd_;
    g_saved.settings = tio;
    g_saved.valid = 1;
    install_restorers();
    // As OpenSSH's enter_raw_mode: no input processing, no echo, no signals
    // from keys (the remote side gets ^C), output post-processing off.
    tio.c_iflag |= IGNPAR;
    tio.c_iflag &= ~(ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXANY | IXOFF | IUCLC);
    tio.c_lflag &= ~(ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHONL | IEXTEN);
    tio.c_oflag &= ~OPOST;
    tio.c_cc[VMIN] = 1;
    tio.c_cc[VTIME] = 0;
    if (tcsetattr(fd_, TCSADRAIN, &tio) == 0)
        active_ = true;
}

void raw_terminal::leave()
{
    if (!active_)
        return;
    restore_saved();
    active_ = false;
}

std::vector<std::uint8_t> encode_local_terminal_modes(int fd)
{
    termios tio{};
    std::vector<terminal_mode> modes;
    if (tcgetattr(fd, &tio) == 0) {
        // RFC 4254 §8 opcodes for the control characters and flags the
        // remote pty should copy.
        struct cc_map {
            std::uint8_t op;
            int index;
        };
        for (auto [op, idx] : {cc_map{1, VINTR}, {2, VQUIT}, {3, VERASE}, {4, VKILL}, {5, VEOF}, {6, VEOL},
                               {7, VEOL2}, {8, VSTART}, {9, VSTOP}, {10, VSUSP}, {12, VREPRINT}, {13, VWERASE},
                               {14, VLNEXT}, {18, VDISCARD}})
            modes.push_back({op, tio.c_cc[idx]});
        struct flag_map {
            std::uint8_t op;
            tcflag_t termios::*field;
            tcflag_t bit;
        };
        for (auto [op, field, bit] :
             {flag_map{30, &termios::c_iflag, IGNPAR}, {31, &termios::c_iflag, PARMRK}, {32, &termios::c_iflag, INPCK},
              {33, &termios::c_iflag, ISTRIP}, {34, &termios::c_iflag, INLCR}, {35, &termios::c_iflag, IGNCR},
              {36, &termios::c_iflag, ICRNL}, {37, &termios::c_iflag, IUCLC}, {38, &termios::c_iflag, IXON},
              {39, &termios::c_iflag, IXANY}, {40, &termios::c_iflag, IXOFF}, {41, &termios::c_iflag, IMAXBEL},
              {42, &termios::c_iflag, IUTF8}, {50, &termios::c_lflag, ISIG}, {51, &termios::c_lflag, ICANON},
              {53, &termios::c_lflag, ECHO}, {54, &termios::c_lflag, ECHOE}, {55, &termios::c_lflag, ECHOK},
              {56, &termios::c_lflag, ECHONL}, {57, &termios::c_lflag, NOFLSH}, {58, &termios::c_lflag, TOSTOP},
              {59, &termios::c_lflag, IEXTEN}, {60, &termios::c_lflag, ECHOCTL}, {61, &termios::c_lflag, ECHOKE},
              {62, &termios::c_lflag, PENDIN}, {70, &termios::c_oflag, OPOST}, {71, &termios::c_oflag, OLCUC},
              {72, &termios::c_oflag, ONLCR}, {73, &termios::c_oflag, OCRNL}, {74, &termios::c_oflag, ONOCR},
              {75, &termios::c_oflag, ONLRET}, {90, &termios::c_cflag, CS7}, {91, &termios::c_cflag, CS8},
              {92, &termios::c_cflag, PARENB}, {93, &termios::c_cflag, PARODD}})
            modes.push_back({op, (tio.*field & bit) ? 1u : 0u});
        modes.push_back({128, baud(cfgetispeed(&tio))}); // TTY_OP_ISPEED
        modes.push_back({129, baud(cfgetospeed(&tio))}); // TTY_OP_OSPEED
    }
    return encode_terminal_modes(modes);
}

} // namespace longhaul
