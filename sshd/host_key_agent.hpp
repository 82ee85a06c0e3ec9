// HostKeyAgent: host keys whose private half sshd does not hold. Their
// public halves come from the HostKey files (the file itself when it is a
// public key, else FILE.pub) and every signature they make, in the key
// exchange and its re-exchanges, is asked of an ssh-agent, as OpenSSH's
// sshd does. Private keys that load are still used directly.
#pragma once

#include "common/auth/agent_client.hpp"
#include "common/bytes.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// The value of HostKeyAgent that means "the SSH_AUTH_SOCK environment
// variable's socket".
inline constexpr std::string_view host_key_agent_from_environment = "SSH_AUTH_SOCK";

// The socket HostKeyAgent names: `configured` itself, or for the literal
// "SSH_AUTH_SOCK" the environment's value (`environment`, null when
// unset). Empty when there is none.
std::string host_key_agent_socket(const std::string& configured, const char* environment);

enum class host_key_source { private_key, agent, unusable };

// Who serves one HostKey: its private key when that loaded, else the agent
// when sshd has one and the public half loaded, else nobody (sshd then
// skips the key, as OpenSSH does).
host_key_source choose_host_key_source(bool private_loaded, bool public_loaded, bool have_agent) noexcept;

// The public half of HostKey `path`: the file itself when it is a public
// key (HostKey naming the .pub), else `path`.pub.
result<public_key> load_host_public_key(const std::string& path);

// One connection's link to the agent. It connects on the first signature
// and keeps that connection for the connection's later ones (re-keys), as
// OpenSSH's connection process does: one socket per connection rather
// than one per signature, and an agent restarted meanwhile is reached
// again on the next signature because a failure drops the link.
class host_key_agent_signer {
public:
    explicit host_key_agent_signer(std::string socket) : socket_(std::move(socket)) {}

    // A signature blob (string algorithm, string signature) by the agent,
    // for rsa-sha2-256/512 with the matching SIGN_REQUEST flag. `error`
    // says why when it fails (no agent, refused, wrong algorithm).
    result<bytes> sign(const public_key& key, std::string_view sig_alg, byte_span data, std::string& error);

    // Closes the link and forgets the socket: the user's process must
    // neither keep the root monitor's connection nor open one of its own.
    void forget() noexcept
    {
        conn_.reset();
        socket_.clear();
    }

private:
    std::string socket_;
    std::optional<agent_client> conn_;
};

} // namespace longhaul
