#include "common/keys/evp_util.hpp"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/param_build.h>

#include <array>
#include <cstring>

namespace longhaul::detail {

namespace {

constexpr std::array<ec_curve, 3> curves = {{
    {key_type::ecdsa_p256, "nistp256", "P-256", 32, hash_alg::sha256},
    {key_type::ecdsa_p384, "nistp384", "P-384", 48, hash_alg::sha384},
    {key_type::ecdsa_p521, "nistp521", "P-521", 66, hash_alg::sha512},
}};

// Builds an EVP_PKEY of `algorithm` from params; callers validate.
result<std::shared_ptr<EVP_PKEY>> from_params(const char* algorithm, OSSL_PARAM_BLD* bld, int selection)
{
    params_ptr params(OSSL_PARAM_BLD_to_param(bld));
    pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_name(nullptr, algorithm, nullptr));
    EVP_PKEY* raw = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &raw, selection, params.get()) != 1) {
        clear_openssl_errors();
        return errc::invalid_format;
    }
    return adopt(raw);
}

bool public_check(EVP_PKEY* pkey)
{
    pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey, nullptr));
    const bool ok = ctx && EVP_PKEY_public_check(ctx.get()) == 1;
    if (!ok)
        clear_openssl_errors();
    return ok;
}

bool pairwise_check(EVP_PKEY* pkey)
{
    pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey, nullptr));
    const bool ok = ctx && EVP_PKEY_pairwise_check(ctx.get()) == 1;
    if (!ok)
        clear_openssl_errors();
    return ok;
}

result<bn_ptr> get_bn(EVP_PKEY* pkey, const char* name)
{
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(pkey, name, &bn) != 1 || bn == nullptr) {
        clear_openssl_errors();
        return errc::invalid_format;
    }
    return bn_ptr(bn);
}

bool is_odd(byte_span magnitude) noexcept { return !magnitude.empty() && (magnitude.back() & 1) != 0; }

int compare_magnitudes(byte_span a, byte_span b) noexcept
{
    while (!a.empty() && a[0] == 0)
        a = a.subspan(1);
    while (!b.empty() && b[0] == 0)
        b = b.subspan(1);
    if (a.size() != b.size())
        return a.size() < b.size() ? -1 : 1;
    const int c = a.empty() ? 0 : std::memcmp(a.data(), b.data(), a.size());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

result<void> check_rsa_public(byte_span e, byte_span n)
{
    const std::size_t bits = magnitude_bits(n);
    if (bits < rsa_min_bits || bits > rsa_max_bits)
        return errc::invalid_format;
    // e must be odd and at least 3 (1 would make "signatures" the message
    // itself), and below n.
    if (!is_odd(e) || magnitude_bits(e) < 2 || compare_magnitudes(e, n) >= 0)
        return errc::invalid_format;
    return {};
}

} // namespace

std::shared_ptr<EVP_PKEY> adopt(EVP_PKEY* p) { return std::shared_ptr<EVP_PKEY>(p, EVP_PKEY_free); }

void clear_openssl_errors() noexcept { ERR_clear_error(); }

bn_ptr bn_from(byte_span magnitude)
{
    bn_ptr bn(BN_bin2bn(magnitude.data(), static_cast<int>(magnitude.size()), nullptr));
    if (!bn)
        throw std::bad_alloc();
    BN_set_flags(bn.get(), BN_FLG_CONSTTIME);
    return bn;
}

secret_bytes bn_to_bytes(const BIGNUM* bn)
{
    secret_bytes out(static_cast<std::size_t>(BN_num_bytes(bn)));
    if (!out.empty())
        BN_bn2bin(bn, out.data());
    return out;
}

std::size_t magnitude_bits(byte_span magnitude) noexcept
{
    while (!magnitude.empty() && magnitude[0] == 0)
        magnitude = magnitude.subspan(1);
    if (magnitude.empty())
        return 0;
    std::size_t top = 0;
    for (unsigned v = magnitude[0]; v != 0; v >>= 1)
        ++top;
    return (magnitude.size() - 1) * 8 + top;
}

const ec_curve* ec_curve_for(key_type t) noexcept
{
    // An sk-ecdsa key is a P-256 key underneath.
    if (t == key_type::sk_ecdsa_p256)
        t = key_type::ecdsa_p256;
    for (const auto& c : curves)
        if (c.type == t)
            return &c;
    return nullptr;
}

result<std::shared_ptr<EVP_PKEY>> ed25519_public(byte_span pub)
{
    if (pub.size() != 32)
        return errc::invalid_format;
    EVP_PKEY* raw = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, pub.data(), pub.size());
    if (raw == nullptr) {
        clear_openssl_errors();
        return errc::invalid_format;
    }
    return adopt(raw);
}

result<std::shared_ptr<EVP_PKEY>> ed25519_private(byte_span seed, byte_span pub)
{
    if (seed.size() != 32 || pub.size() != 32)
        return errc::invalid_format;
    EVP_PKEY* raw = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size());
    if (raw == nullptr) {
        clear_openssl_errors();
        return errc::invalid_format;
    }
    auto pkey = adopt(raw);
    auto derived = ed25519_raw_public(pkey.get());
    if (!derived || !equal_constant_time(*derived, pub))
        return errc::invalid_format;
    return pkey;
}

result<std::shared_ptr<EVP_PKEY>> ec_public(key_type t, byte_span q)
{
    const ec_curve* curve = ec_curve_for(t);
    // Only the uncompressed form (RFC 5656 §3.1 via SEC1 2.3.3), which also
    // excludes the one-byte encoding of the point at infinity.
    if (curve == nullptr || q.size() != 1 + 2 * curve->field_bytes || q[0] != 0x04)
        return errc::invalid_format;
    param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve->group_name, 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, q.data(), q.size()) != 1)
        return errc::crypto_error;
    auto pkey = from_params("EC", bld.get(), EVP_PKEY_PUBLIC_KEY);
    if (!pkey)
        return pkey.error();
    // Full validation: on the curve, coordinates in range, order * Q = O.
    if (!public_check(pkey->get()))
        return errc::invalid_format;
    return pkey;
}

result<std::shared_ptr<EVP_PKEY>> ec_private(key_type t, byte_span q, byte_span d)
{
    const ec_curve* curve = ec_curve_for(t);
    if (curve == nullptr || q.size() != 1 + 2 * curve->field_bytes || q[0] != 0x04 || d.size() > curve->field_bytes)
        return errc::invalid_format;
    // A scalar much shorter than the order is a broken generator; OpenSSH
    // refuses those too.
    const std::size_t order_bits = t == key_type::ecdsa_p521 ? 521 : curve->field_bytes * 8;
    if (magnitude_bits(d) <= order_bits / 2)
        return errc::invalid_format;
    auto priv = bn_from(d);
    param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve->group_name, 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, q.data(), q.size()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, priv.get()) != 1)
        return errc::crypto_error;
    auto pkey = from_params("EC", bld.get(), EVP_PKEY_KEYPAIR);
    if (!pkey)
        return pkey.error();
    // Public point valid, scalar in [1, n-1], and Q = d * G.
    if (!pairwise_check(pkey->get()))
        return errc::invalid_format;
    return pkey;
}

result<std::shared_ptr<EVP_PKEY>> rsa_public(byte_span e, byte_span n)
{
    if (auto r = check_rsa_public(e, n); !r)
        return r.error();
    auto bn_n = bn_from(n), bn_e = bn_from(e);
    param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1)
        return errc::crypto_error;
    return from_params("RSA", bld.get(), EVP_PKEY_PUBLIC_KEY);
}

result<std::shared_ptr<EVP_PKEY>> rsa_private(byte_span n, byte_span e, byte_span d, byte_span iqmp, byte_span p,
                                              byte_span q)
{
    if (auto r = check_rsa_public(e, n); !r)
        return r.error();
    if (magnitude_bits(p) < 2 || magnitude_bits(q) < 2 || compare_magnitudes(d, n) >= 0 ||
        compare_magnitudes(p, n) >= 0 || compare_magnitudes(q, n) >= 0)
        return errc::invalid_format;

    bn_ctx_ptr ctx(BN_CTX_secure_new());
    auto bn_n = bn_from(n), bn_e = bn_from(e), bn_d = bn_from(d), bn_iqmp = bn_from(iqmp), bn_p = bn_from(p),
         bn_q = bn_from(q);
    bn_ptr pm1(BN_new()), qm1(BN_new()), dmp1(BN_new()), dmq1(BN_new()), t(BN_new());
    if (!ctx || !pm1 || !qm1 || !dmp1 || !dmq1 || !t)
        throw std::bad_alloc();
    for (BIGNUM* b : {dmp1.get(), dmq1.get(), t.get()})
        BN_set_flags(b, BN_FLG_CONSTTIME);

    // OpenSSH files carry d, p, q and q^-1 mod p; derive the CRT exponents
    // and check that the parts belong together (n = pq, e*d = 1 mod p-1 and
    // q-1, q*iqmp = 1 mod p), so a corrupted file cannot yield a key that
    // signs garbage.
    bool ok = BN_mul(t.get(), bn_p.get(), bn_q.get(), ctx.get()) == 1 && BN_cmp(t.get(), bn_n.get()) == 0 &&
              BN_sub(pm1.get(), bn_p.get(), BN_value_one()) == 1 &&
              BN_sub(qm1.get(), bn_q.get(), BN_value_one()) == 1 &&
              BN_mod(dmp1.get(), bn_d.get(), pm1.get(), ctx.get()) == 1 &&
              BN_mod(dmq1.get(), bn_d.get(), qm1.get(), ctx.get()) == 1 &&
              BN_mod_mul(t.get(), bn_e.get(), dmp1.get(), pm1.get(), ctx.get()) == 1 && BN_is_one(t.get()) &&
              BN_mod_mul(t.get(), bn_e.get(), dmq1.get(), qm1.get(), ctx.get()) == 1 && BN_is_one(t.get()) &&
              BN_cmp(bn_iqmp.get(), bn_p.get()) < 0 &&
              BN_mod_mul(t.get(), bn_iqmp.get(), bn_q.get(), bn_p.get(), ctx.get()) == 1 && BN_is_one(t.get());
    if (!ok) {
        clear_openssl_errors();
        return errc::invalid_format;
    }

    param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_D, bn_d.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_FACTOR1, bn_p.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_FACTOR2, bn_q.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_EXPONENT1, dmp1.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_EXPONENT2, dmq1.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_COEFFICIENT1, bn_iqmp.get()) != 1)
        return errc::crypto_error;
    return from_params("RSA", bld.get(), EVP_PKEY_KEYPAIR);
}

result<key_type> key_type_of(EVP_PKEY* pkey)
{
    if (pkey == nullptr)
        return errc::invalid_argument;
    if (EVP_PKEY_is_a(pkey, "ED25519"))
        return key_type::ed25519;
    if (EVP_PKEY_is_a(pkey, "RSA"))
        return key_type::rsa;
    if (EVP_PKEY_is_a(pkey, "EC")) {
        char name[64] = {};
        std::size_t len = 0;
        if (EVP_PKEY_get_group_name(pkey, name, sizeof(name), &len) != 1) {
            clear_openssl_errors();
            return errc::unsupported; // explicit curve parameters
        }
        const std::string_view n(name, len);
        if (n == "prime256v1" || n == "P-256")
            return key_type::ecdsa_p256;
        if (n == "secp384r1" || n == "P-384")
            return key_type::ecdsa_p384;
        if (n == "secp521r1" || n == "P-521")
            return key_type::ecdsa_p521;
    }
    return errc::unsupported;
}

result<rsa_parts> rsa_components(EVP_PKEY* pkey, bool with_private)
{
    rsa_parts out;
    const std::pair<const char*, secret_bytes*> pub[] = {{OSSL_PKEY_PARAM_RSA_N, &out.n}, {OSSL_PKEY_PARAM_RSA_E, &out.e}};
    for (auto [name, dest] : pub) {
        auto bn = get_bn(pkey, name);
        if (!bn)
            return bn.error();
        *dest = bn_to_bytes(bn->get());
    }
    if (!with_private)
        return out;
    const std::pair<const char*, secret_bytes*> priv[] = {{OSSL_PKEY_PARAM_RSA_D, &out.d},
                                                          {OSSL_PKEY_PARAM_RSA_FACTOR1, &out.p},
                                                          {OSSL_PKEY_PARAM_RSA_FACTOR2, &out.q},
                                                          {OSSL_PKEY_PARAM_RSA_COEFFICIENT1, &out.iqmp}};
    for (auto [name, dest] : priv) {
        auto bn = get_bn(pkey, name);
        if (!bn)
            return bn.error();
        *dest = bn_to_bytes(bn->get());
    }
    // A multi-prime key has more factors than OpenSSH's format can carry.
    BIGNUM* third = nullptr;
    if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_FACTOR3, &third) == 1 && third != nullptr) {
        BN_clear_free(third);
        return errc::unsupported;
    }
    clear_openssl_errors();
    return out;
}

result<bytes> ec_point(EVP_PKEY* pkey, key_type t)
{
    const ec_curve* curve = ec_curve_for(t);
    if (curve == nullptr)
        return errc::invalid_argument;
    auto x = get_bn(pkey, OSSL_PKEY_PARAM_EC_PUB_X);
    auto y = get_bn(pkey, OSSL_PKEY_PARAM_EC_PUB_Y);
    if (!x || !y)
        return errc::invalid_format;
    const int n = static_cast<int>(curve->field_bytes);
    bytes q(1 + 2 * curve->field_bytes);
    q[0] = 0x04;
    if (BN_bn2binpad(x->get(), q.data() + 1, n) != n || BN_bn2binpad(y->get(), q.data() + 1 + n, n) != n)
        return errc::invalid_format;
    return q;
}

result<secret_bytes> ec_private_scalar(EVP_PKEY* pkey)
{
    auto d = get_bn(pkey, OSSL_PKEY_PARAM_PRIV_KEY);
    if (!d)
        return d.error();
    return bn_to_bytes(d->get());
}

result<bytes> ed25519_raw_public(EVP_PKEY* pkey)
{
    bytes out(32);
    std::size_t len = out.size();
    if (EVP_PKEY_get_raw_public_key(pkey, out.data(), &len) != 1 || len != 32) {
        clear_openssl_errors();
        return errc::invalid_format;
    }
    return out;
}

result<secret_bytes> ed25519_raw_seed(EVP_PKEY* pkey)
{
    secret_bytes out(32);
    std::size_t len = out.size();
    if (EVP_PKEY_get_raw_private_key(pkey, out.data(), &len) != 1 || len != 32) {
        clear_openssl_errors();
        return errc::invalid_format;
    }
    return out;
}

} // namespace longhaul::detail
