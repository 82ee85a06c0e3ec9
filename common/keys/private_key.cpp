#include "common/keys/private_key.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/evp_util.hpp"
#include "common/wire.hpp"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

namespace longhaul {

namespace {

using detail::clear_openssl_errors;

result<bytes> evp_sign(EVP_PKEY* pkey, const EVP_MD* md, byte_span data, bool rsa)
{
    detail::md_ctx_ptr ctx(EVP_MD_CTX_new());
    EVP_PKEY_CTX* pctx = nullptr;
    std::size_t len = 0;
    if (!ctx || EVP_DigestSignInit(ctx.get(), &pctx, md, nullptr, pkey) != 1 ||
        (rsa && EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1) ||
        EVP_DigestSign(ctx.get(), nullptr, &len, data.data(), data.size()) != 1) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    bytes sig(len);
    if (EVP_DigestSign(ctx.get(), sig.data(), &len, data.data(), data.size()) != 1) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    sig.resize(len);
    return sig;
}

// ECDSA: OpenSSL gives DER; SSH wants string(mpint r || mpint s).
result<bytes> der_to_ssh_ecdsa(byte_span der)
{
    const unsigned char* p = der.data();
    detail::ecdsa_sig_ptr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())));
    if (!sig) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    const auto r = detail::bn_to_bytes(ECDSA_SIG_get0_r(sig.get()));
    const auto s = detail::bn_to_bytes(ECDSA_SIG_get0_s(sig.get()));
    bytes out;
    wire_writer(out).mpint(r).mpint(s);
    return out;
}

result<std::shared_ptr<EVP_PKEY>> generate_evp(key_type t, int bits)
{
    EVP_PKEY* raw = nullptr;
    switch (t) {
    case key_type::ed25519:
        raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
        break;
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        const int curve_bits = t == key_type::ecdsa_p256 ? 256 : t == key_type::ecdsa_p384 ? 384 : 521;
        if (bits != 0 && bits != curve_bits)
            return errc::invalid_argument;
        raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", detail::ec_curve_for(t)->group_name);
        break;
    }
    case key_type::rsa: {
        if (bits == 0)
            bits = 3072;
        if (bits < static_cast<int>(detail::rsa_min_bits) || bits > static_cast<int>(detail::rsa_max_bits))
            return errc::invalid_argument;
        raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(bits));
        break;
    }
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        // Enrolment needs an authenticator (a provider library).
        return errc::security_key_unsupported;
    }
    if (raw == nullptr) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    return detail::adopt(raw);
}

} // namespace

result<private_key> private_key::from_parts(std::shared_ptr<EVP_PKEY> pkey, std::string comment)
{
    auto pub = public_key::from_evp(pkey.get());
    if (!pub)
        return pub.error();
    return private_key(std::move(*pub), std::move(pkey), std::move(comment));
}

result<private_key> private_key::generate(key_type t, int bits)
{
    auto pkey = generate_evp(t, bits);
    if (!pkey)
        return pkey.error();
    return from_evp(pkey->get());
}

result<private_key> private_key::from_evp(EVP_PKEY* pkey, std::string comment)
{
    const auto type = detail::key_type_of(pkey);
    if (!type)
        return type.error();
    // Every private key goes through the same builders as the OpenSSH
    // format's fields, so all sources get the same consistency checks.
    result<std::shared_ptr<EVP_PKEY>> built = errc::invalid_format;
    switch (*type) {
    case key_type::ed25519: {
        auto seed = detail::ed25519_raw_seed(pkey);
        auto pub = detail::ed25519_raw_public(pkey);
        if (!seed || !pub)
            return errc::invalid_format;
        built = detail::ed25519_private(*seed, *pub);
        break;
    }
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        auto q = detail::ec_point(pkey, *type);
        auto d = detail::ec_private_scalar(pkey);
        if (!q || !d)
            return errc::invalid_format;
        built = detail::ec_private(*type, *q, *d);
        break;
    }
    case key_type::rsa: {
        auto parts = detail::rsa_components(pkey, true);
        if (!parts)
            return parts.error();
        built = detail::rsa_private(parts->n, parts->e, parts->d, parts->iqmp, parts->p, parts->q);
        break;
    }
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        return errc::unsupported; // key_type_of never gives these
    }
    if (!built)
        return built.error();
    return from_parts(std::move(*built), std::move(comment));
}

result<private_key> private_key::deserialize(wire_reader& r)
{
    const auto name = r.text(64);
    if (!r.ok())
        return errc::invalid_format;
    const auto type = key_type_from_name(name);
    if (!type)
        return errc::unsupported;

    result<std::shared_ptr<EVP_PKEY>> built = errc::invalid_format;
    switch (*type) {
    case key_type::ed25519: {
        const byte_span pk = r.string(32);
        const byte_span sk = r.string(64);
        // sk is seed || pk; both copies of pk must agree.
        if (!r.ok() || pk.size() != 32 || sk.size() != 64 || !equal_constant_time(sk.subspan(32), pk))
            return errc::invalid_format;
        built = detail::ed25519_private(sk.first(32), pk);
        break;
    }
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        const detail::ec_curve* curve = detail::ec_curve_for(*type);
        const auto curve_name = r.text(32);
        const byte_span q = r.string(1 + 2 * curve->field_bytes);
        const byte_span d = r.mpint(curve->field_bytes);
        if (!r.ok() || curve_name != curve->ssh_name)
            return errc::invalid_format;
        built = detail::ec_private(*type, q, d);
        break;
    }
    case key_type::rsa: {
        const byte_span n = r.mpint(), e = r.mpint(), d = r.mpint(), iqmp = r.mpint(), p = r.mpint(), q = r.mpint();
        if (!r.ok())
            return errc::invalid_format;
        built = detail::rsa_private(n, e, d, iqmp, p, q);
        break;
    }
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        // The record holds a key handle for an authenticator, not a
        // private key; signing through a provider is not implemented.
        return errc::security_key_unsupported;
    }
    if (!built)
        return built.error();
    return from_parts(std::move(*built), {});
}

result<void> private_key::serialize(wire_writer& w) const
{
    EVP_PKEY* pkey = pkey_.get();
    // Every component is fetched before anything is written, so a failure
    // leaves the output untouched.
    switch (type()) {
    case key_type::ed25519: {
        auto seed = detail::ed25519_raw_seed(pkey);
        auto pub = detail::ed25519_raw_public(pkey);
        if (!seed || !pub)
            return errc::crypto_error;
        w.string(public_.type_name()).string(*pub);
        // sk = seed || pk, written in place rather than joined in a copy.
        w.u32(64).raw(*seed).raw(*pub);
        return {};
    }
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        auto q = detail::ec_point(pkey, type());
        auto d = detail::ec_private_scalar(pkey);
        if (!q || !d)
            return errc::crypto_error;
        w.string(public_.type_name()).string(detail::ec_curve_for(type())->ssh_name).string(*q).mpint(*d);
        return {};
    }
    case key_type::rsa: {
        auto parts = detail::rsa_components(pkey, true);
        if (!parts)
            return errc::crypto_error;
        w.string(public_.type_name()).mpint(parts->n).mpint(parts->e).mpint(parts->d).mpint(parts->iqmp);
        w.mpint(parts->p).mpint(parts->q);
        return {};
    }
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        break; // no private_key of these types exists
    }
    return errc::unsupported;
}

result<bytes> private_key::sign(std::string_view sig_alg, byte_span data) const
{
    const auto wanted = key_type_for_signature_algorithm(sig_alg);
    if (!wanted || *wanted != type())
        return errc::key_type_mismatch;

    result<bytes> sig = errc::crypto_error;
    switch (type()) {
    case key_type::ed25519:
        sig = evp_sign(pkey_.get(), nullptr, data, false);
        break;
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        auto der = evp_sign(pkey_.get(), evp_md(detail::ec_curve_for(type())->hash), data, false);
        if (!der)
            return der.error();
        sig = der_to_ssh_ecdsa(*der);
        break;
    }
    case key_type::rsa: {
        const hash_alg h = sig_alg == "rsa-sha2-512"   ? hash_alg::sha512
                           : sig_alg == "rsa-sha2-256" ? hash_alg::sha256
                                                       : hash_alg::sha1;
        sig = evp_sign(pkey_.get(), evp_md(h), data, true);
        break;
    }
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        return errc::security_key_unsupported;
    }
    if (!sig)
        return sig.error();
    bytes out;
    wire_writer(out).string(sig_alg).string(*sig);
    return out;
}

} // namespace longhaul
