// Finite-field Diffie-Hellman (RFC 4253 §8, RFC 8268, RFC 4419) over OpenSSL
// EVP: fixed MODP groups and groups sent by a group-exchange server alike.
#include "common/crypto/key_agreement.hpp"

#include "common/crypto/evp_handles.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <bit>

namespace longhaul {

namespace {

using detail::bn_ctx_ptr;
using detail::bn_ptr;
using detail::param_bld_ptr;
using detail::params_ptr;
using detail::pkey_ctx_ptr;
using detail::pkey_ptr;

constexpr std::size_t min_modulus_bits = 1024;
constexpr std::size_t max_modulus_bits = 16384;
// OpenSSH never uses a shorter exponent (dh_gen_key: 2 * max(need, 256)); it
// also stays above OpenSSL's floor of twice the group's strength for the
// named RFC 3526 groups (400 bits for group 18).
constexpr int min_private_bits = 512;

// Compares two magnitudes without leading zeros: <0, 0, >0.
int compare(byte_span a, byte_span b) noexcept
{
    if (a.size() != b.size())
        return a.size() < b.size() ? -1 : 1;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

// p - 1 for an odd p: only the last byte changes.
bytes minus_one_odd(byte_span p)
{
    bytes out(p.begin(), p.end());
    out.back() &= 0xfe;
    return out;
}

// OpenSSH's dh_pub_is_valid: 1 < y < p-1, which excludes the elements of
// order 1 and 2, and at least four bits set, so that a peer (or a broken
// generator) cannot offer a value whose logarithm base 2 is obvious.
// `y` and `p_minus_1` are without leading zeros.
bool public_value_valid(byte_span y, byte_span p_minus_1) noexcept
{
    static constexpr std::uint8_t one[] = {1};
    if (compare(y, one) <= 0 || compare(y, p_minus_1) >= 0)
        return false;
    int bits_set = 0;
    for (auto c : y)
        bits_set += std::popcount(c);
    return bits_set >= 4;
}

result<void> check_group(byte_span p, byte_span g)
{
    const std::size_t bits = magnitude_bits(p);
    if (bits < min_modulus_bits || bits > max_modulus_bits || (p.back() & 1) == 0)
        return errc::invalid_argument;
    static constexpr std::uint8_t one[] = {1};
    if (compare(g, one) <= 0 || compare(g, minus_one_odd(p)) >= 0)
        return errc::invalid_argument;
    return {};
}

bn_ptr to_bn(byte_span magnitude)
{
    return bn_ptr(BN_bin2bn(magnitude.data(), static_cast<int>(magnitude.size()), nullptr));
}

result<bytes> bn_to_bytes(const BIGNUM* bn)
{
    bytes out(static_cast<std::size_t>(BN_num_bytes(bn)));
    if (BN_bn2bin(bn, out.data()) != static_cast<int>(out.size()))
        return errc::crypto_error;
    return out;
}

// Imports p, g and optionally a public and a private value as an EVP_PKEY.
result<pkey_ptr> import_dh(byte_span p, byte_span g, byte_span pub, const BIGNUM* priv)
{
    bn_ptr bp = to_bn(p), bg = to_bn(g);
    bn_ptr bpub = pub.empty() ? bn_ptr() : to_bn(pub);
    if (!bp || !bg || (!pub.empty() && !bpub))
        return errc::crypto_error;
    param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_FFC_P, bp.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_FFC_G, bg.get()) != 1 ||
        (bpub && OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, bpub.get()) != 1) ||
        (priv && OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, priv) != 1))
        return errc::crypto_error;
    params_ptr params(OSSL_PARAM_BLD_to_param(bld.get()));
    pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "DH", nullptr));
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1)
        return errc::crypto_error;
    const int selection = priv ? EVP_PKEY_KEYPAIR : bpub ? EVP_PKEY_PUBLIC_KEY : EVP_PKEY_KEY_PARAMETERS;
    EVP_PKEY* raw = nullptr;
    if (EVP_PKEY_fromdata(ctx.get(), &raw, selection, params.get()) != 1)
        return errc::crypto_error;
    return pkey_ptr(raw);
}

class dh_agreement final : public key_agreement {
public:
    dh_agreement(byte_span p, byte_span g, pkey_ptr key, bytes pub)
        : p_(p.begin(), p.end()), g_(g.begin(), g.end()), p_minus_1_(minus_one_odd(p)), key_(std::move(key)),
          public_(std::move(pub))
    {
    }

    byte_span public_value() const noexcept override { return public_; }

    result<secret_bytes> derive(byte_span peer_public) override
    {
        const byte_span y = strip_leading_zeros(peer_public);
        if (!public_value_valid(y, p_minus_1_))
            return errc::invalid_argument;
        auto peer = import_dh(p_, g_, y, nullptr);
        if (!peer)
            return peer.error();

        pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
        if (!ctx || EVP_PKEY_derive_init(ctx.get()) != 1)
            return errc::crypto_error;
        // Fixed-length output keeps OpenSSL's computation free of a
        // data-dependent length; the magnitude is cut out afterwards.
        unsigned int pad = 1;
        OSSL_PARAM params[] = {OSSL_PARAM_construct_uint(OSSL_EXCHANGE_PARAM_PAD, &pad), OSSL_PARAM_construct_end()};
        // OpenSSL's own peer validation would raise y to the power q, a full
        // 8191-bit exponentiation for group 18 (about 100 ms): the checks above
        // are the ones OpenSSH makes, and with a safe prime the subgroup of
        // order q is all that remains once 1 and p-1 are excluded.
        if (EVP_PKEY_CTX_set_params(ctx.get(), params) != 1 ||
            EVP_PKEY_derive_set_peer_ex(ctx.get(), peer->get(), 0) != 1)
            return errc::crypto_error;
        std::size_t len = 0;
        if (EVP_PKEY_derive(ctx.get(), nullptr, &len) != 1 || len != p_.size())
            return errc::crypto_error;
        secret_bytes padded(len);
        if (EVP_PKEY_derive(ctx.get(), padded.data(), &len) != 1 || len != p_.size())
            return errc::crypto_error;
        const byte_span k = strip_leading_zeros(padded.span());
        // y^x mod p with 1 < y < p-1 cannot be 0 for prime p; a zero here
        // means p was not prime after all.
        if (k.empty())
            return errc::invalid_argument;
        return secret_bytes(k);
    }

private:
    bytes p_;
    bytes g_;
    bytes p_minus_1_;
    pkey_ptr key_;
    bytes public_;
};

result<bytes> public_of(EVP_PKEY* key)
{
    BIGNUM* raw = nullptr;
    if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PUB_KEY, &raw) != 1)
        return errc::crypto_error;
    bn_ptr pub(raw);
    return bn_to_bytes(pub.get());
}

} // namespace

result<std::unique_ptr<key_agreement>> make_dh_agreement(const dh_group& group, int private_bits)
{
    const byte_span p = strip_leading_zeros(group.p), g = strip_leading_zeros(group.g);
    if (auto r = check_group(p, g); !r)
        return r.error();
    if (private_bits < min_private_bits || static_cast<std::size_t>(private_bits) >= magnitude_bits(p))
        return errc::invalid_argument;

    auto domain = import_dh(p, g, {}, nullptr);
    if (!domain)
        return domain.error();
    const bytes p_minus_1 = minus_one_odd(p);
    // A valid key fails OpenSSH's check with odds of about 2^-2000; OpenSSH
    // gives up at once, a few retries cost nothing.
    for (int attempt = 0; attempt < 4; ++attempt) {
        pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, domain->get(), nullptr));
        if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1)
            return errc::crypto_error;
        // The length must go on the generation context: OpenSSL 3.0 ignores
        // a length imported with the domain parameters and would otherwise
        // use bits(p)-1 for groups it does not know by name.
        OSSL_PARAM params[] = {OSSL_PARAM_construct_int(OSSL_PKEY_PARAM_DH_PRIV_LEN, &private_bits),
                               OSSL_PARAM_construct_end()};
        EVP_PKEY* raw = nullptr;
        if (EVP_PKEY_CTX_set_params(ctx.get(), params) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1)
            return errc::crypto_error;
        pkey_ptr key(raw);
        auto pub = public_of(key.get());
        if (!pub)
            return pub.error();
        if (!public_value_valid(*pub, p_minus_1))
            continue;
        return std::unique_ptr<key_agreement>(
            std::make_unique<dh_agreement>(p, g, std::move(key), std::move(*pub)));
    }
    return errc::crypto_error;
}

result<std::unique_ptr<key_agreement>> make_dh_agreement_from_private(const dh_group& group, byte_span x)
{
    const byte_span p = strip_leading_zeros(group.p), g = strip_leading_zeros(group.g);
    if (auto r = check_group(p, g); !r)
        return r.error();
    const byte_span xm = strip_leading_zeros(x);
    static constexpr std::uint8_t one[] = {1};
    if (compare(xm, one) <= 0 || magnitude_bits(xm) >= magnitude_bits(p))
        return errc::invalid_argument;

    // A secure BIGNUM so that OSSL_PARAM_BLD keeps x in memory it wipes.
    bn_ptr bx(BN_secure_new());
    bn_ptr bp = to_bn(p), bg = to_bn(g), by(BN_new());
    bn_ctx_ptr bctx(BN_CTX_secure_new());
    if (!bx || !bp || !bg || !by || !bctx || BN_bin2bn(xm.data(), static_cast<int>(xm.size()), bx.get()) == nullptr)
        return errc::crypto_error;
    BN_set_flags(bx.get(), BN_FLG_CONSTTIME);
    if (BN_mod_exp_mont_consttime(by.get(), bg.get(), bx.get(), bp.get(), bctx.get(), nullptr) != 1)
        return errc::crypto_error;
    auto pub = bn_to_bytes(by.get());
    if (!pub)
        return pub.error();
    if (!public_value_valid(*pub, minus_one_odd(p)))
        return errc::invalid_argument;
    auto key = import_dh(p, g, *pub, bx.get());
    if (!key)
        return key.error();
    return std::unique_ptr<key_agreement>(std::make_unique<dh_agreement>(p, g, std::move(*key), std::move(*pub)));
}

} // namespace longhaul
