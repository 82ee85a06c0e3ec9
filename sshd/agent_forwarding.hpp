// sshd's agent forwarding (ssh -A): the session request
// auth-agent-req@openssh.com answered as OpenSSH 9.2's
// session_auth_agent_req answers it. Allowed only when AllowAgentForwarding
// is yes, DisableForwarding is no and the key that logged in permits it
// (no-agent-forwarding, restrict); granted once per connection. The socket
// is /tmp/ssh-XXXXXXXXXX/agent.<pid>, made by the process that serves the
// user (the user's own after privilege separation, inside a
// ChrootDirectory), in a directory only the user can enter; every program
// a session starts afterwards finds it in SSH_AUTH_SOCK. Each connection
// to it opens an auth-agent@openssh.com channel to the client, carried by
// a socket_channel; the client joins it to its own agent. The socket and
// its directory are removed when the connection ends.
#pragma once

#include "channel/io/socket_channel.hpp"

#include <memory>
#include <string>

namespace boost::asio {
class io_context;
}

namespace longhaul {

class fd_listener;
struct session_environment;

class agent_forwarding {
public:
    agent_forwarding(boost::asio::io_context& io, connection_runner& runner, const session_environment& env);
    ~agent_forwarding();
    agent_forwarding(const agent_forwarding&) = delete;
    agent_forwarding& operator=(const agent_forwarding&) = delete;

    // A session's auth-agent-req@openssh.com: true when the socket exists
    // now (made by this request); false when refused, asked before, or the
    // socket could not be made (the client is told why, as OpenSSH tells it).
    bool request(connection& conn);
    // SSH_AUTH_SOCK for the programs sessions start; empty when none.
    const std::string& socket_path() const noexcept { return path_; }

private:
    void accepted(int fd);
    void remove_directory() noexcept;

    boost::asio::io_context& io_;
    connection_runner& runner_;
    const session_environment& env_;
    socket_channel_set channels_;
    std::unique_ptr<fd_listener> listener_;
    std::string dir_;
    std::string path_;
    bool asked_ = false;
};

} // namespace longhaul
