#include "common/transport/host_key_algorithms.hpp"

#include "common/name_list.hpp"
#include "common/transport/algorithms.hpp"

#include <algorithm>

namespace longhaul {

std::string default_certificate_host_key_algorithms()
{
    return "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
           "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
           "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com";
}

bool supported_certificate_host_key_algorithm(std::string_view name) noexcept
{
    const auto plain = certificate_signature_algorithm(name);
    return plain && name_list_contains(supported_host_key_algorithms(), *plain);
}

std::string_view host_key_signature_algorithm(std::string_view alg) noexcept
{
    return certificate_signature_algorithm(alg).value_or(alg);
}

result<key_type> host_key_type_for_algorithm(std::string_view alg) noexcept
{
    return key_type_for_signature_algorithm(host_key_signature_algorithm(alg));
}

const certificate* certificate_for_key(const std::vector<certificate>& certificates, const public_key& key) noexcept
{
    const certificate* found = nullptr;
    for (const auto& c : certificates)
        if (c.key() == key)
            found = &c;
    return found;
}

std::string server_host_key_algorithm_order(const std::vector<const public_key*>& keys,
                                            const std::vector<certificate>& certificates, std::string_view allowed)
{
    std::vector<std::string> out;
    auto add = [&](std::string_view name) {
        if (name_list_contains(allowed, name) && std::find(out.begin(), out.end(), name) == out.end())
            out.emplace_back(name);
    };
    for (const public_key* k : keys) {
        if (k == nullptr || k->empty())
            continue;
        for (auto alg : signature_algorithms_for(k->type()))
            add(alg);
        if (certificate_for_key(certificates, *k) == nullptr)
            continue;
        for (auto alg : signature_algorithms_for(k->type()))
            if (auto cert_alg = certificate_algorithm_for(alg))
                add(*cert_alg);
    }
    std::string joined;
    for (const auto& n : out) {
        if (!joined.empty())
            joined += ',';
        joined += n;
    }
    return joined;
}

} // namespace longhaul
