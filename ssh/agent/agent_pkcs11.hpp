// ssh-agent's PKCS#11 modules (ssh-add -s / -e): what agent_core's
// pkcs11_hooks need. A module is loaded into the agent's own process
// (OpenSSH 9.2 runs it in ssh-pkcs11-helper) only after the core's checks
// (canonical path allowed by -P, not over a forwarded agent), never
// interactively: the PIN is the one ssh-add sent, used to log in as each
// token's session opens.
#pragma once

#include "ssh/agent/agent_core.hpp"
#include "ssh/pkcs11/pkcs11_provider.hpp"

#include <map>
#include <memory>
#include <string>

namespace longhaul::agent {

class agent_pkcs11 {
public:
    explicit agent_pkcs11(logger& log) : log_(log) {}
    agent_pkcs11(const agent_pkcs11&) = delete;
    agent_pkcs11& operator=(const agent_pkcs11&) = delete;

    // Hooks that refer to this object: it must outlive the core using them.
    pkcs11_hooks hooks();

private:
    logger& log_;
    std::map<std::string, std::unique_ptr<pkcs11_provider>> loaded_;
};

} // namespace longhaul::agent
