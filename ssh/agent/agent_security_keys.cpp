#include "ssh/agent/agent_security_keys.hpp"

#include "common/log.hpp"
#include "ssh/known_hosts.hpp"
#include "ssh/prompt/prompt.hpp"
#include "ssh/sk_sign.hpp"

#include <strings.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace longhaul::agent {

namespace {

// OpenSSH's read_passphrase(RP_USE_ASKPASS) in the agent: the askpass
// program where a display could show it, else an empty answer.
std::optional<std::string> ask_pin(const std::string& prompt)
{
    if (!askpass_displayable(false))
        return std::string();
    auto answer = run_askpass(prompt, askpass_program());
    if (!answer)
        return std::string();
    return std::string(as_string_view(answer->span()));
}

} // namespace

security_key_hooks agent_security_keys::hooks()
{
    security_key_hooks h;
    h.canonical_path = [](const std::string& path, std::string& error) -> std::optional<std::string> {
        char buf[PATH_MAX];
        if (::realpath(path.c_str(), buf) == nullptr) {
            error = std::strerror(errno);
            return std::nullopt;
        }
        return std::string(buf);
    };
    h.sign = [this](const security_key_identity& key, byte_span data, const std::string& suffix) {
        return sign(key, data, suffix);
    };
    return h;
}

const sk_provider* agent_security_keys::provider(const std::string& path)
{
    if (auto it = loaded_.find(path); it != loaded_.end())
        return &it->second;
    auto loaded = sk_provider::load(path);
    if (auto* f = std::get_if<sk_failure>(&loaded)) {
        if (!f->cause.empty())
            log_.error(f->cause);
        log_.error(f->message);
        return nullptr;
    }
    return &loaded_.emplace(path, std::move(std::get<sk_provider>(loaded))).first->second;
}

std::variant<bytes, std::string> agent_security_keys::sign(const security_key_identity& key, byte_span data,
                                                           const std::string& notice_suffix)
{
    if (key.provider.empty()) {
        log_.error("No FIDO SecurityKeyProvider specified");
        return std::string("invalid format");
    }
    if (strcasecmp(key.provider.c_str(), "internal") == 0) {
        log_.error("SecurityKeyProvider internal: not supported yet (add the key with ssh-add -S LIBRARY)");
        return std::string("feature not supported");
    }
    const sk_provider* p = provider(key.provider);
    if (p == nullptr)
        return std::string("invalid format");
    const std::string short_type(key_type_short_name(key.key.key.type()));
    const std::string fp = key_fingerprint_text(key.key.key, key_fingerprint_hash::sha256);
    sk_sign_options o;
    o.notice_suffix = notice_suffix;
    o.log_context = "process_sign_request2";
    o.read_pin = [&] {
        const bool touch = (key.key.flags & sk_flag_user_presence) != 0;
        return ask_pin("Enter PIN" + std::string(touch ? " and confirm user presence " : " ") + "for " + short_type +
                       " key " + fp + ": ");
    };
    return sign_with_security_key(*p, key.key, data, o, log_);
}

} // namespace longhaul::agent
