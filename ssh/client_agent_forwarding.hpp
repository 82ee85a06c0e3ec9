// ssh's agent forwarding (-A, ForwardAgent): the server's
// auth-agent@openssh.com opens, each joined to a new connection to the
// local agent (ForwardAgent's socket path, else $SSH_AUTH_SOCK), as
// OpenSSH 9.2's client_request_agent does. Without forwarding asked for,
// an open is refused with OpenSSH's warning of a break-in attempt; an
// agent that cannot be reached refuses it too ("open failed"). The
// session asks for the forwarding itself (client_session,
// auth-agent-req@openssh.com). Every agent connection, ssh's own and the
// forwarded ones, is first bound to the server's host key
// (session-bind@openssh.com), so keys an agent holds for some
// destinations only (ssh-add -h) work as they do with OpenSSH's ssh.
#pragma once

#include "channel/channel_types.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/bytes.hpp"
#include "common/log.hpp"

#include <string>
#include <string_view>

namespace longhaul {

class agent_client;
struct client_config;

// The host a connection authenticates to, as session-bind@openssh.com
// tells an agent: its host key, the session id and the host's signature
// of it (transport::server_host_key, session_id, server_signature).
struct agent_binding {
    bytes host_key;
    bytes session_id;
    bytes signature;
};

// OpenSSH's ssh_agent_bind_hostkey and its log lines, `who` being the
// caller's name ("get_agent_identities", "client_request_agent"); an agent
// without the extension is used unbound, as OpenSSH uses it.
void bind_agent(agent_client& agent, const agent_binding& binding, bool forwarding, logger& log,
                std::string_view who);

// The agent this ssh uses, as OpenSSH's ssh sets SSH_AUTH_SOCK from
// IdentityAgent: "none" is no agent, a path (or "$VAR") that one, unset or
// "SSH_AUTH_SOCK" the environment's; empty when there is none.
std::string agent_socket_path(const client_config& cfg);
// The socket forwarded agent connections go to: ForwardAgent's path (or
// "$VAR"), else the agent above; empty when forwarding is off or the agent
// above does not answer (OpenSSH 9.2's check_agent_present, which looks at
// that one even when ForwardAgent names another: the session does not ask
// then).
std::string agent_forwarding_socket(const client_config& cfg);

class client_agent_forwarding {
public:
    client_agent_forwarding(connection_runner& runner, logger& log);
    ~client_agent_forwarding();
    client_agent_forwarding(const client_agent_forwarding&) = delete;
    client_agent_forwarding& operator=(const client_agent_forwarding&) = delete;

    // Forwarding was asked for: the server's opens reach `socket`, each
    // connection bound (as forwarded) to `binding`'s host first.
    void enable(std::string socket, agent_binding binding)
    {
        socket_ = std::move(socket);
        binding_ = std::move(binding);
    }
    // auth-agent@openssh.com.
    void register_in(channel_type_table& table);
    // The client is ending: forwarded agent connections closed.
    void stop();

private:
    void open(connection& conn, channel_id id);

    logger& log_;
    std::string socket_;
    agent_binding binding_;
    socket_channel_set channels_;
};

} // namespace longhaul
