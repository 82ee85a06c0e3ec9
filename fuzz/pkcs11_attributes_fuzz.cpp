// Fuzzes what a PKCS#11 module hands back (ssh/pkcs11/pkcs11_keys.hpp):
// the attributes a public key is made of and the answer of C_Sign.
//
// The first input byte picks a mode; the rest is a message sequence
// (fuzz_seeds.hpp's join_messages/split_messages):
//   0  RSA: CKA_MODULUS, CKA_PUBLIC_EXPONENT, then a C_Sign answer made
//      into a signature blob for each RSA algorithm and verified
//   1  ECDSA: CKA_EC_PARAMS, CKA_EC_POINT, then a C_Sign answer (r||s)
//      made into a blob and verified
//   2  a fixed-width padded text field (a token's label)
//   3  an X.509 certificate object: CKA_SUBJECT, CKA_VALUE
// Invariants: a key that is accepted round-trips through its blob (a
// certificate's is RSA or ECDSA, else the failure has words); a
// signature blob names the algorithm asked for and, for RSA, carries
// exactly the modulus' length.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR writes the attributes of a key of
// each type with a valid token answer over the fixed message, and a
// self-signed P-256 certificate with its subject.
#include "common/keys/private_key.hpp"
#include "common/wire.hpp"
#include "fuzz/fuzz_seeds.hpp"
#include "ssh/pkcs11/pkcs11_keys.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace longhaul;
using longhaul::fuzz::check;

namespace {

const bytes message{'s', 'i', 'g', 'n', 'e', 'd'};

void check_blob(const public_key& key, std::string_view alg, byte_span token_answer)
{
    auto blob = pkcs11::signature_blob(key, alg, token_answer);
    if (!blob)
        return;
    wire_reader r(*blob);
    check(r.text(64) == alg);
    const auto sig = r.string();
    check(r.ok() && r.remaining() == 0);
    if (key.type() == key_type::rsa)
        check(sig.size() == static_cast<std::size_t>(EVP_PKEY_get_size(key.evp())));
    (void)key.verify(alg, message, *blob);
}

void fuzz_rsa(const std::vector<bytes>& m)
{
    if (m.size() < 3)
        return;
    auto key = pkcs11::rsa_public_key(m[0], m[1]);
    if (!key)
        return;
    check(key->type() == key_type::rsa);
    check(public_key::from_blob(key->blob()).has_value());
    for (const char* alg : {"rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"}) {
        check(pkcs11::sign_input(*key, alg, message).has_value());
        check_blob(*key, alg, m[2]);
    }
}

void fuzz_ecdsa(const std::vector<bytes>& m)
{
    if (m.size() < 3)
        return;
    auto key = pkcs11::ecdsa_public_key(m[0], m[1]);
    if (!key)
        return;
    check(public_key::from_blob(key->blob()).has_value());
    const auto alg = key_type_name(key->type());
    check(pkcs11::sign_input(*key, alg, message).has_value());
    check_blob(*key, alg, m[2]);
}

void fuzz_certificate(const std::vector<bytes>& m)
{
    if (m.size() < 2)
        return;
    std::string why;
    auto got = pkcs11::x509_public_key(m[0], m[1], why);
    if (!got) {
        check(!why.empty());
        return;
    }
    const key_type t = got->key.type();
    check(t == key_type::rsa || t == key_type::ecdsa_p256 || t == key_type::ecdsa_p384 || t == key_type::ecdsa_p521);
    check(public_key::from_blob(got->key.blob()).has_value());
}

// --- seeds ---

bytes bn_param(EVP_PKEY* pkey, const char* name)
{
    BIGNUM* bn = nullptr;
    EVP_PKEY_get_bn_param(pkey, name, &bn);
    bytes out(static_cast<std::size_t>(BN_num_bytes(bn)));
    BN_bn2bin(bn, out.data());
    BN_free(bn);
    return out;
}

bytes raw_sign(const private_key& key, byte_span input, std::size_t field)
{
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(key.evp(), nullptr);
    EVP_PKEY_sign_init(ctx);
    if (field == 0)
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING);
    std::size_t n = 0;
    EVP_PKEY_sign(ctx, nullptr, &n, input.data(), input.size());
    bytes sig(n);
    EVP_PKEY_sign(ctx, sig.data(), &n, input.data(), input.size());
    EVP_PKEY_CTX_free(ctx);
    sig.resize(n);
    if (field == 0)
        return sig;
    const unsigned char* p = sig.data();
    ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
    bytes rs(2 * field);
    BN_bn2binpad(ECDSA_SIG_get0_r(es), rs.data(), static_cast<int>(field));
    BN_bn2binpad(ECDSA_SIG_get0_s(es), rs.data() + field, static_cast<int>(field));
    ECDSA_SIG_free(es);
    return rs;
}

void write_seeds(const std::string& dir)
{
    auto rsa = private_key::generate(key_type::rsa, 2048);
    const auto& rpub = rsa->public_part();
    bytes in = fuzz::join_messages({bn_param(rsa->evp(), OSSL_PKEY_PARAM_RSA_N),
                                    bn_param(rsa->evp(), OSSL_PKEY_PARAM_RSA_E),
                                    raw_sign(*rsa, *pkcs11::sign_input(rpub, "rsa-sha2-512", message), 0)});
    fuzz::write_seed(dir, "rsa", fuzz::with_prefix({0}, in));
    const struct {
        key_type type;
        bytes oid;
        std::size_t field;
        const char* name;
    } curves[] = {
        {key_type::ecdsa_p256, {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}, 32, "p256"},
        {key_type::ecdsa_p384, {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22}, 48, "p384"},
        {key_type::ecdsa_p521, {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23}, 66, "p521"},
    };
    for (const auto& c : curves) {
        auto key = private_key::generate(c.type);
        std::size_t n = 0;
        EVP_PKEY_get_octet_string_param(key->evp(), OSSL_PKEY_PARAM_PUB_KEY, nullptr, 0, &n);
        bytes point(n);
        EVP_PKEY_get_octet_string_param(key->evp(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), n, &n);
        bytes der{0x04};
        if (point.size() >= 0x80)
            der.push_back(0x81);
        der.push_back(static_cast<std::uint8_t>(point.size()));
        der.insert(der.end(), point.begin(), point.end());
        const auto digest = pkcs11::sign_input(key->public_part(), key_type_name(c.type), message);
        bytes seed = fuzz::join_messages({c.oid, der, raw_sign(*key, *digest, c.field)});
        fuzz::write_seed(dir, c.name, fuzz::with_prefix({1}, seed));
    }
    {
        auto key = private_key::generate(key_type::ecdsa_p256);
        X509* cert = X509_new();
        X509_NAME* name = X509_get_subject_name(cert);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("alice"), -1, -1,
                                   0);
        X509_set_issuer_name(cert, name);
        X509_gmtime_adj(X509_getm_notBefore(cert), 0);
        X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
        X509_set_pubkey(cert, key->evp());
        X509_sign(cert, key->evp(), EVP_sha256());
        unsigned char* der = nullptr;
        const int n = i2d_X509(cert, &der);
        bytes value(der, der + n);
        OPENSSL_free(der);
        der = nullptr;
        const int m = i2d_X509_NAME(name, &der);
        bytes subject(der, der + m);
        OPENSSL_free(der);
        X509_free(cert);
        fuzz::write_seed(dir, "certificate", fuzz::with_prefix({3}, fuzz::join_messages({subject, value})));
    }
    const std::string label = "test token                      ";
    fuzz::write_seed(dir, "label", fuzz::with_prefix({2}, as_bytes(label)));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const byte_span in(data + 1, size - 1);
    switch (data[0] % 4) {
    case 0: fuzz_rsa(fuzz::split_messages(in, 3)); break;
    case 1: fuzz_ecdsa(fuzz::split_messages(in, 3)); break;
    case 3: fuzz_certificate(fuzz::split_messages(in, 2)); break;
    default: {
        const std::string text = pkcs11::padded_text(in.data(), in.size());
        check(text.size() < in.size() || in.empty());
        break;
    }
    }
    return 0;
}
