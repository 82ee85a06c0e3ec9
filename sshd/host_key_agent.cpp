#include "sshd/host_key_agent.hpp"

#include "common/keys/key_lines.hpp"
#include "common/wire.hpp"

#include <cerrno>
#include <cstring>

namespace longhaul {

std::string host_key_agent_socket(const std::string& configured, const char* environment)
{
    if (configured == host_key_agent_from_environment)
        return environment != nullptr ? std::string(environment) : std::string();
    return configured;
}

host_key_source choose_host_key_source(bool private_loaded, bool public_loaded, bool have_agent) noexcept
{
    if (private_loaded)
        return host_key_source::private_key;
    if (public_loaded && have_agent)
        return host_key_source::agent;
    return host_key_source::unusable;
}

result<public_key> load_host_public_key(const std::string& path)
{
    auto line = load_public_key_file(path);
    if (!line)
        line = load_public_key_file(path + ".pub");
    if (!line)
        return line.error();
    return std::move(line->key);
}

result<bytes> host_key_agent_signer::sign(const public_key& key, std::string_view sig_alg, byte_span data,
                                          std::string& error)
{
    if (!conn_) {
        if (socket_.empty()) {
            error = "Unable to get agent socket: agent not present";
            return errc::io_error;
        }
        errno = 0;
        auto c = agent_client::connect(socket_);
        if (!c) {
            const int saved = errno;
            error = "Unable to get agent socket: " +
                    (saved != 0 ? std::string(std::strerror(saved)) : std::string(to_string(c.error())));
            return c.error();
        }
        conn_.emplace(std::move(*c));
    }
    auto sig = conn_->sign(key.blob(), data, agent::sign_flags_for(sig_alg));
    if (!sig) {
        // The stream cannot be trusted after a failed exchange; a refusal
        // leaves it usable, but reconnecting costs little and is simpler.
        conn_.reset();
        error = "agent sign: " + std::string(to_string(sig.error()));
        return sig.error();
    }
    // An agent that ignored the flags (ssh-rsa for rsa-sha2-256) would
    // fail the client's check: say so here, where the cause is known.
    wire_reader r(*sig);
    const std::string_view made = r.text();
    if (!r.ok() || made != sig_alg) {
        error = "agent sign: the agent signed with " + std::string(made) + " instead of " + std::string(sig_alg);
        return errc::crypto_error;
    }
    return sig;
}

} // namespace longhaul
