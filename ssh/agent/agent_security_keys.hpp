// ssh-agent's security keys (ssh-add -S): what agent_core's
// security_key_hooks need from the system. A provider's canonical path is
// realpath(3)'s; a signature loads the provider (once per path, in this
// process, as ssh does: see ssh/sk/sk_provider.hpp for why in-process) and
// signs as OpenSSH 9.2's agent does: the "Confirm user presence" notice
// (on stderr when it is a terminal, else through the askpass program where
// a display could show it), and when the authenticator wants a PIN, the
// PIN asked through askpass ("Enter PIN for TYPE key FP: "; no askpass: no
// PIN) and one retry.
#pragma once

#include "ssh/agent/agent_core.hpp"
#include "ssh/sk/sk_provider.hpp"

#include <map>
#include <string>

namespace longhaul {
class logger;
}

namespace longhaul::agent {

class agent_security_keys {
public:
    explicit agent_security_keys(logger& log) : log_(log) {}
    agent_security_keys(const agent_security_keys&) = delete;
    agent_security_keys& operator=(const agent_security_keys&) = delete;

    // Hooks that refer to this object: it must outlive the core using them.
    security_key_hooks hooks();

private:
    std::variant<bytes, std::string> sign(const security_key_identity& key, byte_span data,
                                          const std::string& notice_suffix);
    const sk_provider* provider(const std::string& path);

    logger& log_;
    std::map<std::string, sk_provider> loaded_;
};

} // namespace longhaul::agent
