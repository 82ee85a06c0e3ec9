// The master's multiplexing state (ssh/client_mux.cpp and
// ssh/client_mux_forwards.cpp): its ControlPath listener, each mux client
// with the session or stdio forward it asked for, and ControlPersist.
#pragma once

#include "channel/io/socket_channel.hpp"
#include "ssh/mux/mux_master.hpp"
#include "ssh/session.hpp"

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <map>
#include <memory>

namespace longhaul::detail {

struct mux_master_state {
    struct peer {
        std::shared_ptr<mux::control_client> control;
        // One of these at most (OpenSSH: "Multiple sessions not supported").
        std::shared_ptr<client_session> session;
        std::shared_ptr<socket_channel> stdio; // NEW_STDIO_FWD (ssh -W through the master)
        bool control_closed = false;
        bool session_done = false; // the session's or the stdio forward's channel is over
        bool busy() const { return (session || stdio) && !session_done; }
    };
    std::unique_ptr<mux::master_listener> listener;
    std::map<std::uint32_t, peer> peers;
    bool persist = false;                    // ControlPersist
    int persist_timeout = 0;                 // seconds, 0: forever
    bool exit_when_idle = false;             // STOP_LISTENING under ControlPersist
    std::unique_ptr<boost::asio::steady_timer> persist_timer;
};

} // namespace longhaul::detail
