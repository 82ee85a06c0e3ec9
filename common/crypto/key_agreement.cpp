// X25519 (RFC 8731) and ECDH on the NIST curves (RFC 5656) over OpenSSL EVP.
// Finite-field Diffie-Hellman lives in dh_agreement.cpp.
#include "common/crypto/key_agreement.hpp"

#include "common/crypto/evp_handles.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include <array>

namespace longhaul {

namespace {

using detail::bn_ctx_ptr;
using detail::bn_ptr;
using detail::ec_group_ptr;
using detail::ec_point_ptr;
using detail::param_bld_ptr;
using detail::params_ptr;
using detail::pkey_ctx_ptr;
using detail::pkey_ptr;

constexpr std::size_t x25519_size = 32;

// Runs EVP_PKEY_derive into a buffer of exactly `expected` bytes. The peer
// has already been validated by the caller, so OpenSSL's own peer check is
// skipped; `failure` is what a refusal by OpenSSL means for this algorithm.
result<secret_bytes> derive_fixed(EVP_PKEY* ours, EVP_PKEY* peer, std::size_t expected, errc failure)
{
    pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, ours, nullptr));
    if (!ctx || EVP_PKEY_derive_init(ctx.get()) != 1)
        return errc::crypto_error;
    if (EVP_PKEY_derive_set_peer_ex(ctx.get(), peer, 0) != 1)
        return failure;
    std::size_t len = 0;
    if (EVP_PKEY_derive(ctx.get(), nullptr, &len) != 1 || len != expected)
        return errc::crypto_error;
    secret_bytes out(len);
    if (EVP_PKEY_derive(ctx.get(), out.data(), &len) != 1)
        return failure;
    if (len != expected)
        return errc::crypto_error;
    return out;
}

bool all_zero(byte_span b) noexcept
{
    std::uint8_t acc = 0;
    for (auto c : b)
        acc |= c;
    return acc == 0;
}

// ---------------------------------------------------------------- X25519

class x25519_agreement final : public key_agreement {
public:
    explicit x25519_agreement(pkey_ptr key) : key_(std::move(key)) {}

    result<void> init()
    {
        std::size_t len = public_.size();
        if (EVP_PKEY_get_raw_public_key(key_.get(), public_.data(), &len) != 1 || len != public_.size())
            return errc::crypto_error;
        return {};
    }

    byte_span public_value() const noexcept override { return public_; }

    result<secret_bytes> derive(byte_span peer_public) override
    {
        if (peer_public.size() != x25519_size)
            return errc::invalid_argument;
        pkey_ptr peer(EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, peer_public.data(), peer_public.size()));
        if (!peer)
            return errc::invalid_argument;
        // OpenSSL refuses an all-zero output (a low-order peer point, RFC 7748
        // §6.1) and that is the only way a 32-byte peer value can fail, so a
        // refusal is the peer's fault.
        auto secret = derive_fixed(key_.get(), peer.get(), x25519_size, errc::invalid_argument);
        if (secret && all_zero(secret->span()))
            return errc::invalid_argument;
        return secret;
    }

private:
    pkey_ptr key_;
    std::array<std::uint8_t, x25519_size> public_{};
};

result<std::unique_ptr<key_agreement>> finish_x25519(pkey_ptr key)
{
    if (!key)
        return errc::crypto_error;
    auto agreement = std::make_unique<x25519_agreement>(std::move(key));
    if (auto r = agreement->init(); !r)
        return r.error();
    return std::unique_ptr<key_agreement>(std::move(agreement));
}

// ---------------------------------------------------------------- ECDH

struct curve_info {
    const char* name; // OpenSSL group name
    int nid;
    std::size_t field_bytes;
};

curve_info info(ecdh_curve curve) noexcept
{
    switch (curve) {
    case ecdh_curve::p256: return {"P-256", NID_X9_62_prime256v1, 32};
    case ecdh_curve::p384: return {"P-384", NID_secp384r1, 48};
    case ecdh_curve::p521: return {"P-521", NID_secp521r1, 66};
    }
    return {nullptr, NID_undef, 0};
}

// An uncompressed SEC1 point for the curve: RFC 5656 §3.1 requires support for
// this form only, and OpenSSH sends and accepts nothing else. The size check
// also turns away the one-byte encoding of the point at infinity.
bool is_uncompressed_point(byte_span point, const curve_info& curve) noexcept
{
    return point.size() == 1 + 2 * curve.field_bytes && point[0] == POINT_CONVERSION_UNCOMPRESSED;
}

class ecdh_agreement final : public key_agreement {
public:
    ecdh_agreement(curve_info curve, pkey_ptr key) : curve_(curve), key_(std::move(key)) {}

    result<void> init()
    {
        std::size_t len = 0;
        if (EVP_PKEY_get_octet_string_param(key_.get(), OSSL_PKEY_PARAM_PUB_KEY, nullptr, 0, &len) != 1)
            return errc::crypto_error;
        public_.resize(len);
        if (EVP_PKEY_get_octet_string_param(key_.get(), OSSL_PKEY_PARAM_PUB_KEY, public_.data(), public_.size(),
                                            &len) != 1 ||
            !is_uncompressed_point(public_, curve_))
            return errc::crypto_error;
        return {};
    }

    byte_span public_value() const noexcept override { return public_; }

    result<secret_bytes> derive(byte_span peer_public) override
    {
        if (!is_uncompressed_point(peer_public, curve_))
            return errc::invalid_argument;
        // Importing decodes the point, which fails unless both coordinates are
        // below the field prime and the point lies on the curve.
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>(curve_.name), 0),
            OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
                                              const_cast<std::uint8_t*>(peer_public.data()),
                                              peer_public.size()),
            OSSL_PARAM_construct_end(),
        };
        pkey_ctx_ptr import(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
        if (!import || EVP_PKEY_fromdata_init(import.get()) != 1)
            return errc::crypto_error;
        EVP_PKEY* raw = nullptr;
        if (EVP_PKEY_fromdata(import.get(), &raw, EVP_PKEY_PUBLIC_KEY, params) != 1)
            return errc::invalid_argument;
        pkey_ptr peer(raw);
        // SP 800-56A full public key validation: on the curve, not infinity,
        // order n (trivially so with cofactor 1, but stated rather than assumed).
        pkey_ctx_ptr check(EVP_PKEY_CTX_new_from_pkey(nullptr, peer.get(), nullptr));
        if (!check)
            return errc::crypto_error;
        if (EVP_PKEY_public_check(check.get()) != 1)
            return errc::invalid_argument;
        return derive_fixed(key_.get(), peer.get(), curve_.field_bytes, errc::invalid_argument);
    }

private:
    curve_info curve_;
    pkey_ptr key_;
    bytes public_;
};

result<std::unique_ptr<key_agreement>> finish_ecdh(const curve_info& curve, pkey_ptr key)
{
    auto agreement = std::make_unique<ecdh_agreement>(curve, std::move(key));
    if (auto r = agreement->init(); !r)
        return r.error();
    return std::unique_ptr<key_agreement>(std::move(agreement));
}

// Q = d * G through the EC_POINT arithmetic, which OpenSSL 3.0 keeps outside
// the deprecated EC_KEY API: importing a private scalar alone does not give
// the public point.
result<bytes> ec_public_point(const curve_info& curve, const BIGNUM* d)
{
    ec_group_ptr group(EC_GROUP_new_by_curve_name(curve.nid));
    bn_ctx_ptr ctx(BN_CTX_new());
    if (!group || !ctx)
        return errc::crypto_error;
    const BIGNUM* order = EC_GROUP_get0_order(group.get());
    if (BN_is_zero(d) || BN_is_negative(d) || BN_cmp(d, order) >= 0)
        return errc::invalid_argument;
    ec_point_ptr q(EC_POINT_new(group.get()));
    if (!q || EC_POINT_mul(group.get(), q.get(), d, nullptr, nullptr, ctx.get()) != 1)
        return errc::crypto_error;
    bytes out(1 + 2 * curve.field_bytes);
    if (EC_POINT_point2oct(group.get(), q.get(), POINT_CONVERSION_UNCOMPRESSED, out.data(), out.size(), ctx.get()) !=
        out.size())
        return errc::crypto_error;
    return out;
}

} // namespace

std::size_t ecdh_field_bytes(ecdh_curve curve) noexcept { return info(curve).field_bytes; }

result<std::unique_ptr<key_agreement>> make_x25519_agreement()
{
    return finish_x25519(pkey_ptr(EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519")));
}

result<std::unique_ptr<key_agreement>> make_x25519_agreement_from_private(byte_span private_key)
{
    if (private_key.size() != x25519_size)
        return errc::invalid_argument;
    return finish_x25519(
        pkey_ptr(EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, private_key.data(), private_key.size())));
}

result<std::unique_ptr<key_agreement>> make_ecdh_agreement(ecdh_curve curve)
{
    const curve_info ci = info(curve);
    if (ci.name == nullptr)
        return errc::invalid_argument;
    pkey_ptr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", ci.name));
    if (!key)
        return errc::crypto_error;
    return finish_ecdh(ci, std::move(key));
}

result<std::unique_ptr<key_agreement>> make_ecdh_agreement_from_private(ecdh_curve curve, byte_span scalar)
{
    const curve_info ci = info(curve);
    if (ci.name == nullptr || scalar.empty() || scalar.size() > ci.field_bytes)
        return errc::invalid_argument;
    // A secure BIGNUM: OSSL_PARAM_BLD then keeps the scalar in memory that
    // OSSL_PARAM_free wipes.
    bn_ptr d(BN_secure_new());
    if (!d || BN_bin2bn(scalar.data(), static_cast<int>(scalar.size()), d.get()) == nullptr)
        return errc::crypto_error;
    auto point = ec_public_point(ci, d.get());
    if (!point)
        return point.error();

    param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, ci.name, 0) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, d.get()) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point->data(), point->size()) != 1)
        return errc::crypto_error;
    params_ptr params(OSSL_PARAM_BLD_to_param(bld.get()));
    pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1)
        return errc::crypto_error;
    EVP_PKEY* raw = nullptr;
    if (EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_KEYPAIR, params.get()) != 1)
        return errc::crypto_error;
    return finish_ecdh(ci, pkey_ptr(raw));
}

} // namespace longhaul
