// sshd's host keys at start-up: the HostKey files' private keys and, with
// HostKeyAgent, the public halves of those an agent signs with, each
// checked and logged as OpenSSH 9.2's sshd does (apart from main.cpp,
// which is the process model).
#pragma once

#include "common/keys/private_key.hpp"
#include "common/log.hpp"
#include "common/bytes.hpp"
#include "sshd/sshd_config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace longhaul {

struct host_keys {
    std::vector<std::shared_ptr<const private_key>> keys;
    std::vector<secret_bytes> files; // as read, for the connection processes (rexec_state)
    std::vector<public_key> agent_keys; // HostKeyAgent's, public halves
};

// rsa_size_allowed and the debug line, for keys from files and from the state.
bool accept_host_key(const server_config& cfg, const std::string& name, private_key key, host_keys& out, logger& log);
// The same for a key the agent signs with.
bool accept_agent_host_key(const server_config& cfg, const std::string& name, public_key key, host_keys& out,
                           logger& log);
// HostKeyAgent's socket when sshd can reach the agent now (OpenSSH checks
// once at start-up and otherwise ignores the agent); empty otherwise.
std::string reachable_host_key_agent(const server_config& cfg, logger& log);
// Every HostKey, in order: its private key when it loads, else (have_agent)
// its public half for the agent; the rest are logged and skipped.
host_keys load_host_keys(const server_config& cfg, bool have_agent, logger& log);

} // namespace longhaul
