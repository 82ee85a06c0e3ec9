#include "common/keys/public_key.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/evp_util.hpp"
#include "common/wire.hpp"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

namespace longhaul {

namespace {

using detail::clear_openssl_errors;

// The blob of a key from its components, in canonical form.
bytes ed25519_blob(byte_span pub)
{
    bytes out;
    wire_writer(out).string(key_type_name(key_type::ed25519)).string(pub);
    return out;
}

bytes ecdsa_blob(key_type t, byte_span q)
{
    bytes out;
    wire_writer(out).string(key_type_name(t)).string(detail::ec_curve_for(t)->ssh_name).string(q);
    return out;
}

// Security keys: the plain key's fields, then the application.
bytes sk_ed25519_blob(byte_span pub, std::string_view application)
{
    bytes out;
    wire_writer(out).string(key_type_name(key_type::sk_ed25519)).string(pub).string(application);
    return out;
}

bytes sk_ecdsa_blob(byte_span q, std::string_view application)
{
    bytes out;
    wire_writer(out)
        .string(key_type_name(key_type::sk_ecdsa_p256))
        .string(detail::ec_curve_for(key_type::sk_ecdsa_p256)->ssh_name)
        .string(q)
        .string(application);
    return out;
}

bytes rsa_blob(byte_span e, byte_span n)
{
    bytes out;
    wire_writer(out).string(key_type_name(key_type::rsa)).mpint(e).mpint(n);
    return out;
}

} // namespace

// One EVP_DigestVerify over data; md is null for Ed25519 (which hashes
// internally).
bool detail::evp_verify(EVP_PKEY* pkey, const EVP_MD* md, byte_span sig, byte_span data)
{
    detail::md_ctx_ptr ctx(EVP_MD_CTX_new());
    const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, md, nullptr, pkey) == 1 &&
                    EVP_DigestVerify(ctx.get(), sig.data(), sig.size(), data.data(), data.size()) == 1;
    if (!ok)
        clear_openssl_errors();
    return ok;
}

bool detail::verify_ecdsa(EVP_PKEY* pkey, key_type t, byte_span sig, byte_span data)
{
    const detail::ec_curve* curve = detail::ec_curve_for(t);
    // RFC 5656 §3.1.2: string(mpint r || mpint s) inside the signature.
    wire_reader r(sig);
    const byte_span sig_r = r.mpint(curve->field_bytes);
    const byte_span sig_s = r.mpint(curve->field_bytes);
    if (!r.finish() || sig_r.empty() || sig_s.empty())
        return false;

    detail::ecdsa_sig_ptr ecdsa(ECDSA_SIG_new());
    if (!ecdsa)
        return false;
    auto bn_r = detail::bn_from(sig_r), bn_s = detail::bn_from(sig_s);
    if (ECDSA_SIG_set0(ecdsa.get(), bn_r.get(), bn_s.get()) != 1)
        return false;
    bn_r.release();
    bn_s.release();

    unsigned char* der = nullptr;
    const int der_len = i2d_ECDSA_SIG(ecdsa.get(), &der);
    if (der_len <= 0) {
        clear_openssl_errors();
        return false;
    }
    const bool ok = evp_verify(pkey, evp_md(curve->hash), byte_span(der, static_cast<std::size_t>(der_len)), data);
    OPENSSL_free(der);
    return ok;
}

namespace {

using detail::evp_verify;
using detail::verify_ecdsa;

bool verify_rsa(EVP_PKEY* pkey, std::string_view sig_alg, byte_span sig, byte_span data)
{
    const hash_alg h = sig_alg == "rsa-sha2-512"   ? hash_alg::sha512
                       : sig_alg == "rsa-sha2-256" ? hash_alg::sha256
                                                   : hash_alg::sha1;
    const int modulus_bytes = EVP_PKEY_get_size(pkey);
    if (modulus_bytes <= 0 || sig.size() > static_cast<std::size_t>(modulus_bytes))
        return false;
    // Some implementations strip leading zero bytes of the signature value;
    // OpenSSH restores them, and so do we.
    bytes padded(static_cast<std::size_t>(modulus_bytes), 0);
    std::copy(sig.begin(), sig.end(), padded.end() - static_cast<std::ptrdiff_t>(sig.size()));

    detail::md_ctx_ptr ctx(EVP_MD_CTX_new());
    EVP_PKEY_CTX* pctx = nullptr;
    const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), &pctx, evp_md(h), nullptr, pkey) == 1 &&
                    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1 &&
                    EVP_DigestVerify(ctx.get(), padded.data(), padded.size(), data.data(), data.size()) == 1;
    if (!ok)
        clear_openssl_errors();
    return ok;
}

} // namespace

result<public_key> public_key::from_blob(byte_span blob)
{
    wire_reader r(blob);
    const auto name = r.text(64);
    if (!r.ok())
        return errc::invalid_format;
    const auto type = key_type_from_name(name);
    if (!type)
        return errc::unsupported;

    switch (*type) {
    case key_type::ed25519: {
        const byte_span pub = r.string(32);
        if (!r.finish())
            return errc::invalid_format;
        auto pkey = detail::ed25519_public(pub);
        if (!pkey)
            return pkey.error();
        return public_key(*type, ed25519_blob(pub), std::move(*pkey));
    }
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        const detail::ec_curve* curve = detail::ec_curve_for(*type);
        const auto curve_name = r.text(32);
        const byte_span q = r.string(1 + 2 * curve->field_bytes);
        if (!r.finish() || curve_name != curve->ssh_name)
            return errc::invalid_format;
        auto pkey = detail::ec_public(*type, q);
        if (!pkey)
            return pkey.error();
        return public_key(*type, ecdsa_blob(*type, q), std::move(*pkey));
    }
    case key_type::rsa: {
        const byte_span e = r.mpint();
        const byte_span n = r.mpint();
        if (!r.finish())
            return errc::invalid_format;
        auto pkey = detail::rsa_public(e, n);
        if (!pkey)
            return pkey.error();
        return public_key(*type, rsa_blob(e, n), std::move(*pkey));
    }
    case key_type::sk_ed25519: {
        const byte_span pub = r.string(32);
        // The application is not interpreted (OpenSSH accepts any); it is
        // bounded, and a NUL inside would make it differ from what a C
        // implementation hashes, so that is refused.
        const auto application = r.text(max_sk_application);
        if (!r.finish() || application.find('\0') != std::string_view::npos)
            return errc::invalid_format;
        auto pkey = detail::ed25519_public(pub);
        if (!pkey)
            return pkey.error();
        return public_key(*type, sk_ed25519_blob(pub, application), std::move(*pkey), std::string(application));
    }
    case key_type::sk_ecdsa_p256: {
        const detail::ec_curve* curve = detail::ec_curve_for(*type);
        const auto curve_name = r.text(32);
        const byte_span q = r.string(1 + 2 * curve->field_bytes);
        const auto application = r.text(max_sk_application);
        if (!r.finish() || curve_name != curve->ssh_name || application.find('\0') != std::string_view::npos)
            return errc::invalid_format;
        auto pkey = detail::ec_public(*type, q);
        if (!pkey)
            return pkey.error();
        return public_key(*type, sk_ecdsa_blob(q, application), std::move(*pkey), std::string(application));
    }
    }
    return errc::unsupported;
}

result<public_key> public_key::from_evp(EVP_PKEY* pkey)
{
    const auto type = detail::key_type_of(pkey);
    if (!type)
        return type.error();
    // Rebuilt from the blob so the result holds a public-only, validated key.
    switch (*type) {
    case key_type::ed25519: {
        auto pub = detail::ed25519_raw_public(pkey);
        if (!pub)
            return pub.error();
        return from_blob(ed25519_blob(*pub));
    }
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: {
        auto q = detail::ec_point(pkey, *type);
        if (!q)
            return q.error();
        return from_blob(ecdsa_blob(*type, *q));
    }
    case key_type::rsa: {
        auto parts = detail::rsa_components(pkey, false);
        if (!parts)
            return parts.error();
        return from_blob(rsa_blob(parts->e, parts->n));
    }
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        // An EVP_PKEY carries no application; key_type_of never says "sk".
        break;
    }
    return errc::unsupported;
}

bool rsa_size_allowed(const public_key& key, int required_bits) noexcept
{
    constexpr int openssh_minimum = 1024; // SSH_RSA_MINIMUM_MODULUS_SIZE
    return key.type() != key_type::rsa || (key.bits() >= openssh_minimum && key.bits() >= required_bits);
}

int public_key::bits() const noexcept
{
    switch (type_) {
    case key_type::ed25519: return 256;
    case key_type::ecdsa_p256: return 256;
    case key_type::ecdsa_p384: return 384;
    case key_type::ecdsa_p521: return 521;
    case key_type::rsa: return pkey_ ? EVP_PKEY_get_bits(pkey_.get()) : 0;
    case key_type::sk_ed25519: return 256;
    case key_type::sk_ecdsa_p256: return 256;
    }
    return 0;
}

result<void> public_key::verify(std::string_view sig_alg, byte_span data, byte_span signature_blob,
                                sk_signature_details* sk) const
{
    if (is_security_key(type_))
        return verify_sk(sig_alg, data, signature_blob, sk);
    const auto wanted = key_type_for_signature_algorithm(sig_alg);
    if (!wanted || *wanted != type_ || !pkey_ || signature_blob.size() > max_signature_blob)
        return errc::signature_invalid;

    wire_reader r(signature_blob);
    const auto name = r.text(64);
    const byte_span sig = r.string();
    if (!r.finish() || name != sig_alg)
        return errc::signature_invalid;

    bool ok = false;
    switch (type_) {
    case key_type::ed25519:
        ok = sig.size() == 64 && evp_verify(pkey_.get(), nullptr, sig, data);
        break;
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521:
        ok = verify_ecdsa(pkey_.get(), type_, sig, data);
        break;
    case key_type::rsa:
        ok = verify_rsa(pkey_.get(), sig_alg, sig, data);
        break;
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256:
        break; // verify_sk above
    }
    if (!ok)
        return errc::signature_invalid;
    return {};
}

std::string public_key::fingerprint_sha256() const
{
    return "SHA256:" + base64_encode(digest(hash_alg::sha256, blob_), false);
}

std::string public_key::fingerprint_md5() const
{
    const bytes d = digest(hash_alg::md5, blob_);
    std::string out = "MD5:";
    const std::string hex = to_hex(d);
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        if (i != 0)
            out.push_back(':');
        out.append(hex, i, 2);
    }
    return out;
}

} // namespace longhaul
