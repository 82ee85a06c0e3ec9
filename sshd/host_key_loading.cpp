#include "sshd/host_key_loading.hpp"

#include "common/keys/key_file.hpp"
#include "sshd/auth_policy.hpp"
#include "sshd/host_key_agent.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace longhaul {

namespace {

// sshd refuses a private host key others can read, as OpenSSH's key loader does.
bool host_key_permissions_ok(const std::string& path, logger& log)
{
    auto warning = private_key_permission_warning(path);
    for (const auto& line : warning)
        log.error(line);
    return warning.empty();
}

} // namespace

bool accept_host_key(const server_config& cfg, const std::string& name, private_key key, host_keys& out, logger& log)
{
    // RequiredRSASize covers the server's own keys too (OpenSSH's
    // sshkey_check_rsa_length() at start-up).
    if (!rsa_size_allowed(key.public_part(), cfg.required_rsa_size)) {
        log.error("Host key " + name + ": Invalid key length");
        return false;
    }
    log.debug("private host key #" + std::to_string(out.keys.size()) + ": " + std::string(key.public_part().type_name()) +
              " " + key.public_part().fingerprint_sha256());
    out.keys.push_back(std::make_shared<const private_key>(std::move(key)));
    return true;
}

bool accept_agent_host_key(const server_config& cfg, const std::string& name, public_key key, host_keys& out,
                           logger& log)
{
    if (!rsa_size_allowed(key, cfg.required_rsa_size)) {
        log.error("Host key " + name + ": Invalid key length");
        return false;
    }
    log.debug("agent host key #" + std::to_string(out.keys.size() + out.agent_keys.size()) + ": " +
              std::string(key.type_name()) + " " + key.fingerprint_sha256());
    out.agent_keys.push_back(std::move(key));
    return true;
}

std::string reachable_host_key_agent(const server_config& cfg, logger& log)
{
    if (cfg.host_key_agent.empty())
        return {};
    const std::string socket = host_key_agent_socket(cfg.host_key_agent, std::getenv("SSH_AUTH_SOCK"));
    if (socket.empty()) {
        log.error("Could not connect to agent \"" + cfg.host_key_agent + "\": agent not present");
        return {};
    }
    errno = 0;
    auto c = agent_client::connect(socket, std::chrono::seconds(10));
    if (!c) {
        const int saved = errno;
        log.error("Could not connect to agent \"" + cfg.host_key_agent + "\": " +
                  (saved != 0 ? std::string(std::strerror(saved)) : std::string(to_string(c.error()))));
        return {};
    }
    return socket;
}

host_keys load_host_keys(const server_config& cfg, bool have_agent, logger& log)
{
    host_keys out;
    for (const auto& path : cfg.host_key_files) {
        std::optional<private_key> key;
        std::optional<secret_bytes> key_file;
        if (!host_key_permissions_ok(path, log)) {
            log.error("Unable to load host key \"" + path + "\": bad permissions");
        } else if (auto file = read_key_file(path); !file) {
            if (file.error() != errc::io_error)
                log.error("Unable to load host key \"" + path + "\": " + std::string(to_string(file.error())));
        } else if (auto k = parse_private_key(as_string_view(file->span()), std::nullopt); !k) {
            log.error("Unable to load host key \"" + path + "\": " + std::string(to_string(k.error())));
        } else {
            key.emplace(std::move(*k));
            key_file.emplace(std::move(*file));
        }
        std::optional<public_key> pub;
        if (!key && have_agent)
            if (auto p = load_host_public_key(path))
                pub.emplace(std::move(*p));
        switch (choose_host_key_source(key.has_value(), pub.has_value(), have_agent)) {
        case host_key_source::private_key:
            if (accept_host_key(cfg, path, std::move(*key), out, log))
                out.files.push_back(std::move(*key_file));
            break;
        case host_key_source::agent:
            log.debug("will rely on agent for hostkey " + path);
            accept_agent_host_key(cfg, path, std::move(*pub), out, log);
            break;
        case host_key_source::unusable:
            // After the reason above, when there was one (as OpenSSH).
            log.error("Unable to load host key: " + path);
            break;
        }
    }
    return out;
}

} // namespace longhaul
