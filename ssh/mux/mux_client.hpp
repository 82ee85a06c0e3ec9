// The mux client: ssh using a master's connection through ControlPath,
// as OpenSSH's ssh does it (its muxclient()): the HELLO exchange, the
// -O commands (check, exit, stop) and a passenger session, whose stdin,
// stdout and stderr go to the master over SCM_RIGHTS. Blocking I/O: the
// client has nothing else to do while it waits.
#pragma once

#include "common/log.hpp"
#include "ssh/mux/mux_messages.hpp"
#include "ssh/mux/mux_socket.hpp"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

namespace longhaul::mux {

class mux_client {
public:
    mux_client(control_socket sock, logger& log) : sock_(std::move(sock)), log_(log) {}

    // Both HELLOs; false (logged) when the master speaks another version.
    bool hello_exchange();
    // -O check: the master's pid, or nullopt (logged as OpenSSH's fatal).
    std::optional<std::uint32_t> alive_check();
    // -O exit and -O stop: true when the master accepted (or went away
    // before answering an exit); false, logged, otherwise.
    bool terminate();
    bool stop_listening();

    // OPEN_FWD or CLOSE_FWD (request.type) for one forward, described as
    // OpenSSH's format_forward() does (`description`). True when the master
    // did it; false, logged as OpenSSH's error, when it refused. A port the
    // master allocated (-R 0) is logged, and printed on stdout when
    // `print_port` (-O forward).
    bool forward(forward_request request, const std::string& description, bool print_port);
    // NEW_STDIO_FWD with our descriptors 0 and 1 (-W through a master):
    // 0 once the master opened it and later closed our connection (the
    // forward is over), 255 after OpenSSH's fatal line when it refused.
    // nullopt: the master's reply could not be read (ssh connects itself).
    std::optional<int> run_stdio_forward(const std::string& host, std::uint32_t port);

    struct session_hooks {
        // Called with true once the session is open when a tty was asked
        // for, with false when it ends or the remote tty failed.
        std::function<void(bool raw)> set_raw;
        // "Shared connection to HOST closed." when non-empty (tty sessions).
        std::string closed_message;
    };
    // NEW_SESSION with our descriptors 0, 1, 2, then the exit status the
    // master reports (255 when it reports none or we are signalled).
    // nullopt: the master refused or failed the session, logged; ssh then
    // connects by itself, as OpenSSH's does.
    std::optional<int> run_session(new_session request, const session_hooks& hooks);

private:
    // The next reply; nullopt (logged with `what`) at EOF or on error.
    std::optional<message> reply(const char* what);
    bool check_id(std::uint32_t id, const char* what);
    // SIGHUP, SIGINT and SIGTERM end the wait for the master; SIGWINCH goes
    // on to it.
    void catch_signals();
    // Our descriptors after a request that passes them (SCM_RIGHTS, one per
    // message); false after OpenSSH's fatal line.
    bool send_fds(std::initializer_list<int> fds, const char* fn);

    control_socket sock_;
    logger& log_;
    std::uint32_t request_id_ = 0;
    std::uint32_t master_pid_ = 0;
};

} // namespace longhaul::mux
