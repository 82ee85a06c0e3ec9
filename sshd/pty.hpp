// Pseudo-terminals for sessions: allocation with the client's size and
// terminal modes, window changes, and ownership for the user.
#pragma once

#include "channel/messages.hpp"
#include "common/result.hpp"

#include <sys/types.h>

#include <string>

namespace longhaul {

class pty_pair {
public:
    pty_pair() = default;
    pty_pair(pty_pair&& o) noexcept;
    pty_pair& operator=(pty_pair&& o) noexcept;
    ~pty_pair();

    // openpty(). When running as root the slave is given to `uid` with the
    // tty group and mode 0620, as OpenSSH's pty_setowner does.
    static result<pty_pair> allocate(uid_t uid, gid_t gid, std::string& error);
    // A pair opened elsewhere (the root parent's, passed over the monitor
    // socket): takes ownership of both descriptors.
    static pty_pair adopt(int master, int slave, std::string name) noexcept;
    // The client's window size and terminal modes.
    void configure(const pty_request& req) const;

    int master() const noexcept { return master_; }
    int slave() const noexcept { return slave_; }
    const std::string& name() const noexcept { return name_; }
    // The parent closes its copy of the slave once the session child has it.
    void close_slave() noexcept;
    int release_master() noexcept;

private:
    int master_ = -1;
    int slave_ = -1;
    std::string name_;
};

void set_window_size(int fd, std::uint32_t cols, std::uint32_t rows, std::uint32_t width_px, std::uint32_t height_px);
// Applies RFC 4254 §8 modes to a terminal (unknown opcodes are ignored).
void apply_terminal_modes(int fd, byte_span encoded_modes);

} // namespace longhaul
