#include "ssh/client_agent_forwarding.hpp"

#include "channel/forward/forward_messages.hpp"
#include "common/auth/agent_client.hpp"
#include "ssh/client_config.hpp"

#include <chrono>
#include <cstdlib>

namespace longhaul {

namespace {

// "$NAME": the variable's value (empty when unset); anything else as is.
std::string from_environment(const std::string& value)
{
    if (value.size() < 2 || value[0] != '$')
        return value;
    const char* s = std::getenv(value.c_str() + 1);
    return s ? s : "";
}

} // namespace

std::string agent_socket_path(const client_config& cfg)
{
    const std::string setting = cfg.identity_agent.value_or("SSH_AUTH_SOCK");
    if (setting == "none")
        return {};
    if (setting == "SSH_AUTH_SOCK")
        return from_environment("$SSH_AUTH_SOCK");
    return from_environment(setting);
}

std::string agent_forwarding_socket(const client_config& cfg)
{
    if (!cfg.forward_agent.value_or(false))
        return {};
    // OpenSSH 9.2's check_agent_present: forwarding is asked for only when
    // the agent this ssh uses answers, even where ForwardAgent names
    // another socket.
    std::string sock = agent_socket_path(cfg);
    if (sock.empty() || !agent_client::connect(sock, std::chrono::seconds(5)))
        return {};
    if (cfg.forward_agent_sock_path)
        return from_environment(*cfg.forward_agent_sock_path);
    return sock;
}

void bind_agent(agent_client& agent, const agent_binding& binding, bool forwarding, logger& log, std::string_view who)
{
    if (binding.host_key.empty() || binding.session_id.empty() || binding.signature.empty())
        return;
    if (auto r = agent.bind_session(binding.host_key, binding.session_id, binding.signature, forwarding))
        log.debug(std::string(who) + ": bound agent to hostkey");
    else
        log.debug2(std::string(who) + ": ssh_agent_bind_hostkey: " + std::string(to_string(r.error())));
}

client_agent_forwarding::client_agent_forwarding(connection_runner& runner, logger& log)
    : log_(log), channels_(runner)
{
}

client_agent_forwarding::~client_agent_forwarding() = default;

void client_agent_forwarding::register_in(channel_type_table& table)
{
    table.add(std::string(forward::agent_channel_type),
              [this](connection& conn, channel_id id, std::string_view, byte_span) { open(conn, id); });
}

void client_agent_forwarding::open(connection& conn, channel_id id)
{
    if (socket_.empty()) {
        log_.error("Warning: ssh server tried agent forwarding.");
        log_.error("Warning: this is probably a break-in attempt by a malicious server.");
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    auto agent = agent_client::connect(socket_, std::chrono::seconds(5));
    if (!agent) {
        log_.debug("client_request_agent: ssh_get_authentication_socket: " + std::string(to_string(agent.error())));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    bind_agent(*agent, binding_, true, log_, "client_request_agent");
    channels_.accept_connected(id, agent->release());
}

void client_agent_forwarding::stop() { channels_.stop_all(); }

} // namespace longhaul
