// The local terminal: raw mode for interactive sessions, restored on every
// exit path (normal return, exit(), fatal signals), and the window size.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace longhaul {

struct terminal_size {
    std::uint32_t cols = 0, rows = 0, width_px = 0, height_px = 0;
};

std::optional<terminal_size> query_terminal_size(int fd);

// Puts the terminal on `fd` into raw mode (as OpenSSH's enter_raw_mode) for
// the object's lifetime. The saved settings are also restored by an atexit
// handler and by the fatal-signal handlers this installs, because a user
// whose shell is left in raw mode after a crash cannot type to recover.
class raw_terminal {
public:
    explicit raw_terminal(int fd);
    ~raw_terminal();
    raw_terminal(const raw_terminal&) = delete;
    raw_terminal& operator=(const raw_terminal&) = delete;

    bool active() const noexcept { return active_; }
    // Restores cooked mode (before suspending with ~^Z) / re-enters raw mode.
    void leave();
    void enter();

private:
    int fd_;
    bool active_ = false;
};

// The terminal's local encoded modes for "pty-req" (RFC 4254 §8), read from `fd`.
std::vector<std::uint8_t> encode_local_terminal_modes(int fd);

} // namespace longhaul
