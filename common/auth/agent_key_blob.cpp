#include "common/auth/agent_key_blob.hpp"

#include "common/wire.hpp"

namespace longhaul::agent {

namespace {

// Wipes a scratch buffer of key material on every return path.
struct wipe_on_exit {
    bytes& b;
    ~wipe_on_exit() { cleanse(b); }
};

// How many leading public fields of the plain encoding (after the type
// name) a certificate replaces: Ed25519 repeats its public key in the
// private fields, so none; ECDSA drops curve and Q; RSA drops n and e.
std::size_t public_fields(key_type t) noexcept
{
    switch (t) {
    case key_type::ed25519:
        return 0;
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521:
    case key_type::rsa:
        return 2;
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        return 0; // never serialized: no private_key holds a security key
    }
    return 0;
}

} // namespace

result<void> encode_private_key(wire_writer& w, const private_key& key, const certificate* cert)
{
    if (!cert)
        return key.serialize(w);
    if (!(cert->key() == key.public_part()))
        return errc::key_type_mismatch;
    bytes plain;
    wipe_on_exit guard{plain};
    wire_writer pw(plain);
    if (auto s = key.serialize(pw); !s)
        return s;
    wire_reader r(plain);
    r.text(64);
    // ECDSA's public fields are strings (curve, Q), RSA's mpints (n, e):
    // either way length-prefixed, so string() skips them.
    for (std::size_t i = 0; i < public_fields(key.type()); ++i)
        r.string();
    const byte_span private_fields = r.rest();
    if (!r.ok())
        return errc::crypto_error;
    w.string(cert->type_name()).string(cert->blob()).raw(private_fields);
    return {};
}

result<key_with_certificate> decode_private_key(wire_reader& r)
{
    wire_reader peek = r;
    const auto name = peek.text(64);
    if (!peek.ok())
        return errc::invalid_format;
    const auto certified = certificate_key_type(name);
    if (!certified) {
        auto key = private_key::deserialize(r);
        if (!key)
            return key.error();
        return key_with_certificate{std::move(*key), std::nullopt};
    }
    r = peek;
    auto cert = certificate::from_blob(r.string());
    if (!r.ok() || !cert || cert->type_name() != name)
        return errc::invalid_format;

    // Rebuild the plain encoding (public fields from the certified key, the
    // private ones from the message) and let private_key check it all.
    bytes plain;
    wipe_on_exit guard{plain};
    wire_writer pw(plain);
    pw.string(key_type_name(*certified));
    wire_reader pub(cert->key().blob());
    pub.text(64);
    switch (*certified) {
    case key_type::ed25519:
        pw.string(r.string(32)).string(r.string(64));
        break;
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        const byte_span curve = pub.string(32);
        const byte_span q = pub.string(256);
        pw.string(curve).string(q).mpint(r.mpint());
        break;
    }
    case key_type::rsa: {
        const byte_span e = pub.mpint();
        const byte_span n = pub.mpint();
        pw.mpint(n).mpint(e);
        for (int i = 0; i < 4; ++i)
            pw.mpint(r.mpint());
        break;
    }
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        // Signing through an authenticator is not implemented.
        return errc::security_key_unsupported;
    }
    if (!r.ok() || !pub.ok())
        return errc::invalid_format;
    wire_reader pr(plain);
    auto key = private_key::deserialize(pr);
    if (!key)
        return key.error();
    if (!pr.finish() || !(key->public_part() == cert->key()))
        return errc::invalid_format;
    return key_with_certificate{std::move(*key), std::move(*cert)};
}

} // namespace longhaul::agent
