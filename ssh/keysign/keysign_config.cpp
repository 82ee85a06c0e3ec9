#include "ssh/keysign/keysign_config.hpp"

#include "ssh/client_config.hpp"

#include <unistd.h>

namespace longhaul {

config_environment keysign_environment(std::string system_config)
{
    config_environment env = config_environment::from_system();
    // No user file, and relative Includes in the system file resolve under
    // its own directory: the user must not be able to turn the helper on.
    env.user_config.clear();
    env.user_dir.clear();
    env.check_permissions = false;
    env.system_config = std::move(system_config);
    const auto slash = env.system_config.rfind('/');
    env.system_dir = slash == std::string::npos ? "." : env.system_config.substr(0, slash);
    return env;
}

keysign_settings read_keysign_settings(const config_environment& env, const log_sink& log)
{
    keysign_settings s;
    if (::access(env.system_config.c_str(), F_OK) != 0)
        return s;
    client_config cfg;
    config_request req;
    req.host_arg = "";
    load_client_config(cfg, req, env, log);
    s.enabled = cfg.enable_ssh_keysign.value_or(false);
    s.fingerprint = static_cast<fingerprint_hash>(cfg.fingerprint_hash.value_or(key_fingerprint_hash::sha256));
    return s;
}

} // namespace longhaul
