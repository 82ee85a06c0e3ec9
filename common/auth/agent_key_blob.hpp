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
#include "common/keys/private_key.hpp"

#include <optional>

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
// this build does not hold (DSA, security keys, XMSS).
result<key_with_certificate> decode_private_key(wire_reader& r);

} // namespace longhaul::agent
