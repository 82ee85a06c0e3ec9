#include "sshd/forward_settings.hpp"

#include "sshd/server_session.hpp"

namespace longhaul {

namespace {

forward::forwarding_allowed allowed(forwarding_mode m)
{
    switch (m) {
    case forwarding_mode::no: return forward::forwarding_allowed::no;
    case forwarding_mode::yes: return forward::forwarding_allowed::yes;
    case forwarding_mode::local: return forward::forwarding_allowed::local;
    case forwarding_mode::remote: return forward::forwarding_allowed::remote;
    }
    return forward::forwarding_allowed::no;
}

std::optional<permission_lists> lists(const session_environment& env, const std::vector<std::string>& admin_values,
                                      const std::vector<std::string>& key_values, forward::permission_kind kind,
                                      const char* admin_name, const char* key_name)
{
    std::string why;
    auto admin = forward::parse_permission_list(admin_values, kind, admin_name, why);
    auto user = admin ? forward::parse_permission_list(key_values, kind, key_name, why) : std::nullopt;
    if (!admin || !user) {
        env.log->error("forwarding permissions unreadable: " + why);
        return std::nullopt;
    }
    return std::make_pair(std::move(*admin), std::move(*user));
}

const std::vector<std::string> no_values;

} // namespace

forward::forwarding_settings forwarding_settings_of(const session_environment& env)
{
    forward::forwarding_settings s;
    s.tcp = allowed(env.config->allow_tcp_forwarding);
    s.streamlocal = allowed(env.config->allow_stream_local_forwarding);
    s.disable_forwarding = env.config->disable_forwarding;
    s.key_permits_forwarding = !env.key || env.key->options.permit_port_forwarding;
    return s;
}

bool agent_forwarding_enabled(const session_environment& env)
{
    return env.config->allow_agent_forwarding && !env.config->disable_forwarding &&
           (!env.key || env.key->options.permit_agent_forwarding);
}

std::optional<permission_lists> open_permission_lists(const session_environment& env)
{
    return lists(env, env.config->permit_open, env.key ? env.key->options.permit_open : no_values,
                 forward::permission_kind::open, "PermitOpen", "permitopen");
}

std::optional<permission_lists> listen_permission_lists(const session_environment& env)
{
    return lists(env, env.config->permit_listen, env.key ? env.key->options.permit_listen : no_values,
                 forward::permission_kind::listen, "PermitListen", "permitlisten");
}

} // namespace longhaul
