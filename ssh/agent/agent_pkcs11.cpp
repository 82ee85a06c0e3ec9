#include "ssh/agent/agent_pkcs11.hpp"

#include "common/log.hpp"

namespace longhaul::agent {

pkcs11_hooks agent_pkcs11::hooks()
{
    pkcs11_hooks h;
    h.load = [this](const std::string& path, const secret_bytes& pin) -> std::optional<std::vector<token_key>> {
        if (loaded_.count(path) != 0) {
            log_.debug("pkcs11_add_provider: provider already registered: " + path);
            return std::nullopt;
        }
        pkcs11_provider::options opt;
        opt.interactive = false;
        auto p = pkcs11_provider::load(path, std::move(opt), log_, &pin);
        if (!p)
            return std::nullopt;
        std::vector<token_key> keys;
        for (const auto& k : p->keys())
            keys.push_back({k.key, k.label});
        // A module without keys is not kept (OpenSSH unloads it too).
        if (keys.empty())
            return std::nullopt;
        loaded_.emplace(path, std::move(p));
        return keys;
    };
    h.unload = [this](const std::string& path) { return loaded_.erase(path) != 0; };
    h.sign = [this](const std::string& path, const public_key& key, std::string_view alg,
                    byte_span data) -> std::optional<bytes> {
        auto it = loaded_.find(path);
        if (it == loaded_.end())
            return std::nullopt;
        for (const auto& k : it->second->keys())
            if (k.key == key)
                return it->second->sign(k, alg, data);
        return std::nullopt;
    };
    return h;
}

} // namespace longhaul::agent
