// sshd's forwarding switches as the session layer reads them: agent
// forwarding from AllowAgentForwarding, DisableForwarding and the key's
// options (OpenSSH 9.2's session_auth_agent_req).
#include "sshd/authorized_keys.hpp"
#include "sshd/forward_settings.hpp"
#include "sshd/server_session.hpp"
#include "sshd/sshd_config.hpp"

#include <doctest/doctest.h>

#include <memory>

using namespace longhaul;

TEST_CASE("agent_forwarding_enabled: AllowAgentForwarding, DisableForwarding, the key's options")
{
    server_config config;
    session_environment env;
    env.config = &config;
    CHECK(agent_forwarding_enabled(env)); // OpenSSH's default: yes
    config.allow_agent_forwarding = false;
    CHECK_FALSE(agent_forwarding_enabled(env));
    config.allow_agent_forwarding = true;
    config.disable_forwarding = true;
    CHECK_FALSE(agent_forwarding_enabled(env));
    config.disable_forwarding = false;

    authorized_key_match key;
    env.key = std::make_shared<const authorized_key_match>(key);
    CHECK(agent_forwarding_enabled(env));
    key.options.permit_agent_forwarding = false; // no-agent-forwarding, restrict
    env.key = std::make_shared<const authorized_key_match>(key);
    CHECK_FALSE(agent_forwarding_enabled(env));
}
