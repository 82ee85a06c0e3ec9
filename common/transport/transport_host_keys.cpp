// The server's host keys in the transport core: which algorithms it
// offers and which key (and, with HostCertificate, which certificate)
// answers a negotiated algorithm. Apart from transport.cpp to keep that
// file to its state machine.
#include "common/transport/host_key_algorithms.hpp"
#include "common/transport/transport.hpp"

#include "common/name_list.hpp"

namespace longhaul {

std::string transport::our_host_key_algorithms() const
{
    if (is_client())
        return config_.host_key_algorithms;
    if (!config_.host_certificates.empty())
        return server_host_key_algorithm_order(host_key_list(), config_.host_certificates,
                                               config_.host_key_algorithms);
    std::vector<std::string_view> out;
    for (auto alg : split_name_list(config_.host_key_algorithms))
        if (host_key_for(alg).key != nullptr)
            out.push_back(alg);
    return join_name_list(out);
}

std::vector<const public_key*> transport::host_key_list() const
{
    std::vector<const public_key*> keys;
    if (config_.host_key_signer) {
        for (const auto& k : config_.host_public_keys)
            keys.push_back(&k);
    } else {
        for (const auto& k : config_.host_keys)
            if (k)
                keys.push_back(&k->public_part());
    }
    return keys;
}

transport::host_key_ref transport::host_key_for(std::string_view alg) const
{
    if (is_certificate_algorithm(alg)) {
        // The first key of the type that has a certificate: the key signs,
        // the certificate is K_S.
        auto type = host_key_type_for_algorithm(alg);
        if (!type || !supported_certificate_host_key_algorithm(alg))
            return {};
        if (config_.host_key_signer) {
            for (const auto& k : config_.host_public_keys)
                if (!k.empty() && k.type() == *type)
                    if (const certificate* c = certificate_for_key(config_.host_certificates, k))
                        return {&k, nullptr, c};
            return {};
        }
        for (const auto& k : config_.host_keys)
            if (k && k->type() == *type)
                if (const certificate* c = certificate_for_key(config_.host_certificates, k->public_part()))
                    return {&k->public_part(), k.get(), c};
        return {};
    }
    auto type = key_type_for_signature_algorithm(alg);
    if (!type)
        return {};
    // A signer elsewhere replaces the local keys altogether: the sandboxed
    // child has none, and must not offer what it cannot have signed.
    if (config_.host_key_signer) {
        for (const auto& k : config_.host_public_keys)
            if (!k.empty() && k.type() == *type)
                return {&k, nullptr};
        return {};
    }
    for (const auto& k : config_.host_keys)
        if (k && k->type() == *type)
            return {&k->public_part(), k.get()};
    return {};
}

} // namespace longhaul
