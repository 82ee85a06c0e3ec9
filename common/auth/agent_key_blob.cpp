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

// Bounds on a security key's fields (the message itself is at most
// 256 KiB): real key handles are a few hundred bytes at most.
constexpr std::size_t max_sk_application = 1024;
constexpr std::size_t max_sk_key_handle = 64 * 1024;

// The security key's public fields after its type name: Ed25519 string pk;
// ECDSA string curve, string Q (PROTOCOL.u2f), bounded as public_key's parser
// bounds them.
void copy_sk_public_fields(wire_reader& r, wire_writer& w, key_type t)
{
    if (t == key_type::sk_ecdsa_p256)
        w.string(r.string(32));
    w.string(r.string(256));
}

// SK after the public fields: flags, key handle, reserved.
result<void> read_sk_fields(wire_reader& r, openssh_security_key& out)
{
    out.flags = r.u8();
    out.key_handle = to_bytes(r.string(max_sk_key_handle));
    (void)r.string(max_sk_key_handle); // reserved
    if (!r.ok())
        return errc::invalid_format;
    return {};
}

// After the type name (and, for a certified key, the certificate): the
// key's public fields (a certified ECDSA key's come from its certificate),
// its application, then SK. A certified key's fields must be the
// certificate's key.
result<identity_with_certificate> decode_security_key(wire_reader& r, key_type t, std::optional<certificate> cert)
{
    bytes blob;
    wire_writer b(blob);
    b.string(key_type_name(t));
    if (cert && t == key_type::sk_ecdsa_p256) {
        wire_reader pub(cert->key().blob());
        pub.text(64);
        copy_sk_public_fields(pub, b, t);
        if (!pub.ok())
            return errc::invalid_format;
    } else {
        copy_sk_public_fields(r, b, t);
    }
    b.string(r.string(max_sk_application));
    if (!r.ok())
        return errc::invalid_format;
    auto key = public_key::from_blob(blob);
    if (!key || (cert && !(*key == cert->key())))
        return errc::invalid_format;
    openssh_security_key sk;
    sk.key = std::move(*key);
    if (auto f = read_sk_fields(r, sk); !f)
        return f.error();
    return identity_with_certificate{std::move(sk), std::move(cert)};
}

} // namespace

result<void> encode_security_key(wire_writer& w, const openssh_security_key& key, const certificate* cert)
{
    const key_type t = key.key.type();
    if (!is_security_key(t))
        return errc::key_type_mismatch;
    wire_reader pub(key.key.blob());
    pub.text(64);
    if (!cert) {
        // The public blob's fields as they are (application included).
        w.string(key_type_name(t)).raw(pub.rest());
    } else {
        if (!(cert->key() == key.key))
            return errc::key_type_mismatch;
        w.string(cert->type_name()).string(cert->blob());
        if (t == key_type::sk_ed25519)
            w.string(pub.string(256));
        w.string(key.key.application());
    }
    w.u8(key.flags).string(key.key_handle).string(std::string_view{});
    return {};
}

result<identity_with_certificate> decode_identity(wire_reader& r)
{
    wire_reader peek = r;
    const auto name = peek.text(64);
    if (!peek.ok())
        return errc::invalid_format;
    const auto certified = certificate_key_type(name);
    if (certified && is_security_key(*certified)) {
        r = peek;
        auto cert = certificate::from_blob(r.string());
        if (!r.ok() || !cert || cert->type_name() != name)
            return errc::invalid_format;
        return decode_security_key(r, *certified, std::move(*cert));
    }
    for (key_type t : {key_type::sk_ed25519, key_type::sk_ecdsa_p256})
        if (name == key_type_name(t)) {
            r = peek;
            return decode_security_key(r, t, std::nullopt);
        }
    auto k = decode_private_key(r);
    if (!k)
        return k.error();
    return identity_with_certificate{std::move(k->key), std::move(k->cert)};
}

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
