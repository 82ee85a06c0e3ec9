#include "ssh/agent/agent_session_bind.hpp"

#include "common/keys/certificate.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul::agent {

namespace {

// The host key of a binding: a plain key, or a host certificate's key
// (ssh binds with whatever the server's host key algorithm was), with the
// certificate kept for destination constraints naming its CA.
result<public_key> host_key_from_blob(byte_span blob, std::optional<certificate>& cert_out)
{
    auto key = public_key::from_blob(blob);
    if (key || key.error() != errc::unsupported)
        return key;
    auto cert = certificate::from_blob(blob);
    if (!cert)
        return cert.error();
    public_key k = cert->key();
    cert_out = std::move(*cert);
    return k;
}

} // namespace

result<session_binding> parse_session_bind(wire_reader& r, std::string& error)
{
    byte_span key_blob = r.string();
    byte_span sid = r.string();
    byte_span sig = r.string(max_signature_blob);
    bool forwarded = r.u8() != 0;
    if (!r.finish()) {
        error = "parse";
        return errc::malformed;
    }
    if (sid.size() > max_session_id) {
        error = "session ID too long";
        return errc::too_large;
    }
    std::optional<certificate> cert;
    auto key = host_key_from_blob(key_blob, cert);
    if (!key) {
        error = "parse key";
        return errc::malformed;
    }
    // The signature names its algorithm; it must be one of the key's
    // (OpenSSH verifies with no algorithm required, so any of them).
    wire_reader sr(sig);
    std::string alg(sr.text(256));
    auto alg_type = key_type_for_signature_algorithm(alg);
    if (!sr.ok() || !alg_type || *alg_type != key->type() || !key->verify(alg, sid, sig)) {
        error = "sshkey_verify for " + std::string(key->type_name()) + " " + key->fingerprint_sha256() + " failed";
        return errc::signature_invalid;
    }
    session_binding b;
    b.host_key_blob.assign(key_blob.begin(), key_blob.end());
    b.host_key = std::move(*key);
    b.host_cert = std::move(cert);
    b.session_id.assign(sid.begin(), sid.end());
    b.forwarded = forwarded;
    return b;
}

result<void> record_session_bind(connection_state& conn, session_binding b, std::string& error)
{
    if (conn.bindings.size() >= max_session_bindings) {
        error = "too many session IDs recorded";
        return errc::too_large;
    }
    for (const auto& old : conn.bindings) {
        if (!old.forwarded) {
            error = "attempt to bind session ID to socket previously bound for authentication attempt";
            return errc::protocol_error;
        }
        const bool sid_match = std::ranges::equal(old.session_id, b.session_id);
        if (sid_match && old.host_key == b.host_key)
            return {}; // already recorded
        if (sid_match) {
            error = "session ID recorded against different key";
            return errc::protocol_error;
        }
    }
    conn.bindings.push_back(std::move(b));
    return {};
}

} // namespace longhaul::agent
