// What ssh-add prints about keys, byte for byte as OpenSSH 9.2's: the -l
// and -L lines for the agent's identities, the type names of its messages
// ("ED25519", "RSA-CERT"), and ssh_err()'s wording for agent failures.
#pragma once

#include "common/auth/agent_protocol.hpp"
#include "common/errc.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/fingerprint.hpp"

#include <optional>
#include <string>

namespace longhaul::add {

// A key as OpenSSH's struct sshkey holds it: plain, or certified.
struct shown_key {
    public_key key;                 // the plain key (a certificate's certified key)
    std::optional<certificate> cert;

    // What is sent to the agent to name it (REMOVE_IDENTITY, SIGN_REQUEST).
    const bytes& blob() const noexcept { return cert ? cert->blob() : key.blob(); }
};

// The agent's identity as a key; nullopt for types this build cannot read
// (OpenSSH's ssh-add skips those too).
std::optional<shown_key> identity_key(const agent::identity& id);

// sshkey_type(): "RSA", "ECDSA", "ED25519", with "-CERT" for certificates.
std::string key_type_label(const shown_key& k);

// -l: "256 SHA256:... comment (ED25519)" (no newline). A certificate's
// fingerprint and size are its certified key's, as OpenSSH computes them.
std::string fingerprint_line(const shown_key& k, const std::string& comment, fingerprint_hash h);

// -L: "ssh-ed25519 AAAA... comment" (no newline).
std::string public_line(const shown_key& k, const std::string& comment);

// Plain keys of types this build cannot use but an agent may hold (added
// by OpenSSH's ssh-add): DSA, and FIDO security keys. Their -l and -L
// lines come from the blob alone; nullopt for any other type (or a blob
// that does not parse).
std::optional<std::string> foreign_fingerprint_line(const agent::identity& id, fingerprint_hash h);
std::optional<std::string> foreign_public_line(const agent::identity& id);

// ssh_err()'s text for what an agent request can fail with.
std::string agent_error_text(errc e);

} // namespace longhaul::add
