// ssh-agent's socket side: a poll loop over the listening socket and its
// clients, each with bounded buffers, feeding whole requests to the core.
// Only the agent's own user (and root) may connect, as in OpenSSH.
#pragma once

#include "common/log.hpp"
#include "ssh/agent/agent_core.hpp"

#include <csignal>
#include <cstddef>
#include <optional>
#include <sys/types.h>
#include <vector>

namespace longhaul::agent {

class agent_server {
public:
    // More clients wait in the listen backlog (OpenSSH bounds its clients
    // by its descriptor limit).
    static constexpr std::size_t max_clients = 128;

    // listen_fd: a listening Unix socket (non-blocking not needed).
    // watch_parent: with a command (ssh-agent cmd), the agent exits once
    // its parent (which ran the command) is gone; -1 for none.
    agent_server(agent_core& core, logger& log, int listen_fd, pid_t watch_parent);
    ~agent_server();
    agent_server(const agent_server&) = delete;
    agent_server& operator=(const agent_server&) = delete;

    // Serves until `stop` becomes non-zero (set from a signal handler; the
    // signals in `stop_signals` are blocked outside ppoll so none is lost)
    // or the watched parent is gone. Returns false for the latter.
    bool run(volatile std::sig_atomic_t& stop, const sigset_t& stop_signals);

private:
    struct client {
        int fd = -1;
        bytes in;
        bytes out;
        std::size_t out_sent = 0;
        connection_state conn;
        // A reply held back (failed unlock) until then.
        std::optional<agent_clock::time_point> hold_until;
    };

    void accept_client();
    // False when the client is to be closed.
    bool read_client(client& c, agent_clock::time_point now);
    bool write_client(client& c, agent_clock::time_point now);
    // Answers the request buffered in c.in, if whole and no reply is
    // still going out; false when the client is to be closed.
    bool process_pending(client& c, agent_clock::time_point now);
    void close_client(client& c);

    agent_core& core_;
    logger& log_;
    int listen_fd_;
    pid_t watch_parent_;
    std::vector<client> clients_;
};

} // namespace longhaul::agent
