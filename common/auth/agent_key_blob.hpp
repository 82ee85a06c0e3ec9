// The key part of ssh-agent's ADD_IDENTITY (PROTOCOL.agent, OpenSSH's
// sshkey_private_serialize): a plain key in OpenSSH's private key encoding
// (private_key::serialize), or a certified key as
//
//   string cert type ("ssh-ed25519-cert-v01@openssh.com", ...)
//   string certificate blob
//   the key's private fields without its public ones:
//     Ed25519: string pk, string sk;  ECDSA: mpint d;  RSA: mpint d, iqmp, p, q
//
// ssh-add writes it, ssh-agent reads it. The comment that follows it in the
// message is not part of it.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "common/keys/private_key.hpp"

#include <optional>
#include <variant>

namespace longhaul {
class wire_reader;
class wire_writer;
} // namespace longhaul

namespace longhaul::agent {

struct key_with_certificate {
    private_key key;
    std::optional<certificate> cert;
};

// Appends the encoding of `key`, certified by `cert` when it is not null
// (`cert` must certify `key`: key_type_mismatch otherwise). The output holds
// secrets: the caller wipes it.
result<void> encode_private_key(wire_writer& w, const private_key& key, const certificate* cert);

// Reads one such encoding. invalid_format for anything malformed or for a
// certificate whose key is not the private key's; unsupported for key types
// this build does not hold (DSA, XMSS); security_key_unsupported for a
// security key (decode_identity reads those).
result<key_with_certificate> decode_private_key(wire_reader& r);

// A FIDO security key (PROTOCOL.u2f): no secret, what the authenticator
// needs to sign. After the type name:
//
//   sk-ssh-ed25519@openssh.com          string pk, SK
//   sk-ecdsa-sha2-nistp256@openssh.com  string "nistp256", string Q, SK
//   sk-ssh-ed25519-cert-v01@...         string certificate, string pk, SK
//   sk-ecdsa-sha2-nistp256-cert-v01@... string certificate, SK
//
// where SK is string application, byte flags, string key handle, string
// reserved (empty when written, not checked when read, as OpenSSH). The
// ECDSA certificate form carries no curve or Q: the certificate has them.
result<void> encode_security_key(wire_writer& w, const openssh_security_key& key, const certificate* cert);

// What ADD_IDENTITY carries: a private key or a security key, with its
// certificate when it is one. The key record's comment is left empty (the
// message's comment follows the key).
struct identity_with_certificate {
    std::variant<private_key, openssh_security_key> key;
    std::optional<certificate> cert;
};
result<identity_with_certificate> decode_identity(wire_reader& r);

} // namespace longhaul::agent
