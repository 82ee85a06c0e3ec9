// ssh-agent's identities: private keys (with their certificate, when one was
// added), comments and constraints, keyed by the public blob clients name
// them by (the certificate blob for a certified key, as OpenSSH's
// sshkey_equal compares a certificate and its key as different identities).
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "common/keys/private_key.hpp"
#include "ssh/agent/agent_destination.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace longhaul::agent {

using agent_clock = std::chrono::steady_clock;

// A FIDO security key: the agent signs through its provider (ssh-add -S).
struct security_key_identity {
    openssh_security_key key;
    // "internal" (any case) as given, else the provider's canonical path;
    // empty when the key came without one (it cannot sign then).
    std::string provider;
};

// A PKCS#11 token's key: the agent signs through the module it loaded
// (ssh-add -s), which ssh-add -e unloads with all its keys.
struct token_identity {
    public_key key;
    std::string provider; // the module's canonical path
};

struct stored_identity {
    std::variant<private_key, security_key_identity, token_identity> key;
    std::optional<certificate> cert;
    std::string comment;
    // When the key is removed (ssh-add -t, ssh-agent -t); none: kept.
    std::optional<agent_clock::time_point> deadline;
    // Each signature asks the user first (ssh-add -c).
    bool confirm = false;
    // ssh-add -h: the hops the key may be used on (none: anywhere).
    std::vector<dest_constraint> destinations;

    const public_key& public_part() const noexcept
    {
        if (const auto* sk = std::get_if<security_key_identity>(&key))
            return sk->key.key;
        if (const auto* t = std::get_if<token_identity>(&key))
            return t->key;
        return std::get<private_key>(key).public_part();
    }
    const security_key_identity* security_key() const noexcept { return std::get_if<security_key_identity>(&key); }
    const token_identity* token() const noexcept { return std::get_if<token_identity>(&key); }
    // What REQUEST_IDENTITIES lists and SIGN_REQUEST names.
    const bytes& blob() const noexcept { return cert ? cert->blob() : public_part().blob(); }
};

class keystore {
public:
    // OpenSSH has no limit of its own; its clients refuse more than 2048
    // identities (agent::max_identities), and an answer listing 2048 large
    // RSA certificates would pass agent::max_message, so adds stop here.
    static constexpr std::size_t max_keys = 1024;

    // Adds the identity, or replaces the one with the same blob (its
    // comment and constraints are the new ones, as ssh-add re-adding a key
    // expects). False when the store is full.
    bool add(stored_identity id);
    stored_identity* find(byte_span blob) noexcept;
    bool remove(byte_span blob);
    // Removes every key of the PKCS#11 module `provider`; returns how many.
    std::size_t remove_provider(const std::string& provider);
    void clear() noexcept { ids_.clear(); }

    // Removes the identities whose deadline is not after `now`; returns
    // how many went.
    std::size_t expire(agent_clock::time_point now);
    std::optional<agent_clock::time_point> next_deadline() const noexcept;

    const std::vector<stored_identity>& identities() const noexcept { return ids_; }
    std::size_t size() const noexcept { return ids_.size(); }

private:
    // In insertion order, which is the order ssh-add -l lists.
    std::vector<stored_identity> ids_;
};

} // namespace longhaul::agent
