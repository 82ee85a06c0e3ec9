// PKCS#11's pure half (ssh/pkcs11/pkcs11_keys.hpp): keys from a token's
// attributes, what C_Sign is handed, and the SSH signature blob made of
// its answer. A "token" is played by OpenSSL here: it signs the C_Sign
// input with the raw mechanisms (CKM_RSA_PKCS pads the DigestInfo it is
// given; CKM_ECDSA signs the digest and answers r||s), and the blob must
// verify with the SSH public key.
#include "ssh/pkcs11/pkcs11_keys.hpp"

#include "common/keys/private_key.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <memory>
#include <utility>

using namespace longhaul;

namespace {

bytes bn_param(EVP_PKEY* pkey, const char* name)
{
    BIGNUM* bn = nullptr;
    REQUIRE(EVP_PKEY_get_bn_param(pkey, name, &bn) == 1);
    bytes out(static_cast<std::size_t>(BN_num_bytes(bn)));
    BN_bn2bin(bn, out.data());
    BN_free(bn);
    return out;
}

bytes octet_string(byte_span point)
{
    bytes der{0x04};
    if (point.size() >= 0x80)
        der.push_back(0x81);
    der.push_back(static_cast<std::uint8_t>(point.size()));
    der.insert(der.end(), point.begin(), point.end());
    return der;
}

bytes ec_point_of(EVP_PKEY* pkey)
{
    std::size_t n = 0;
    REQUIRE(EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, nullptr, 0, &n) == 1);
    bytes point(n);
    REQUIRE(EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, point.data(), n, &n) == 1);
    return point;
}

const bytes p256_oid{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
const bytes p384_oid{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22};
const bytes p521_oid{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23};

// What a token answers to C_Sign: raw PKCS#1 v1.5 over the input, or r||s.
bytes token_sign(const private_key& key, byte_span input, std::size_t field_bytes)
{
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new(key.evp(), nullptr),
                                                                     EVP_PKEY_CTX_free);
    REQUIRE(EVP_PKEY_sign_init(ctx.get()) == 1);
    if (field_bytes == 0)
        REQUIRE(EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_PADDING) == 1);
    std::size_t n = 0;
    REQUIRE(EVP_PKEY_sign(ctx.get(), nullptr, &n, input.data(), input.size()) == 1);
    bytes sig(n);
    REQUIRE(EVP_PKEY_sign(ctx.get(), sig.data(), &n, input.data(), input.size()) == 1);
    sig.resize(n);
    if (field_bytes == 0)
        return sig;
    const unsigned char* p = sig.data();
    ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
    REQUIRE(es != nullptr);
    bytes rs(2 * field_bytes);
    BN_bn2binpad(ECDSA_SIG_get0_r(es), rs.data(), static_cast<int>(field_bytes));
    BN_bn2binpad(ECDSA_SIG_get0_s(es), rs.data() + field_bytes, static_cast<int>(field_bytes));
    ECDSA_SIG_free(es);
    return rs;
}

const bytes message{'s', 'e', 's', 's', 'i', 'o', 'n'};

} // namespace

TEST_CASE("pkcs11: an RSA key from modulus and exponent, signatures with every RSA algorithm")
{
    auto key = private_key::generate(key_type::rsa, 2048);
    REQUIRE(key);
    const bytes n = bn_param(key->evp(), OSSL_PKEY_PARAM_RSA_N);
    const bytes e = bn_param(key->evp(), OSSL_PKEY_PARAM_RSA_E);
    auto pub = pkcs11::rsa_public_key(n, e);
    REQUIRE(pub);
    CHECK(*pub == key->public_part());
    // Leading zero bytes (some tokens keep them) change nothing.
    bytes padded_n{0, 0};
    padded_n.insert(padded_n.end(), n.begin(), n.end());
    auto again = pkcs11::rsa_public_key(padded_n, e);
    REQUIRE(again);
    CHECK(*again == *pub);

    for (const char* alg : {"rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"}) {
        CAPTURE(alg);
        auto input = pkcs11::sign_input(*pub, alg, message);
        REQUIRE(input);
        auto blob = pkcs11::signature_blob(*pub, alg, token_sign(*key, *input, 0));
        REQUIRE(blob);
        CHECK(pub->verify(alg, message, *blob));
        // The signature of another algorithm's DigestInfo does not pass.
        const char* other = std::string_view(alg) == "rsa-sha2-512" ? "rsa-sha2-256" : "rsa-sha2-512";
        auto wrong = pkcs11::signature_blob(*pub, alg, token_sign(*key, *pkcs11::sign_input(*pub, other, message), 0));
        REQUIRE(wrong);
        CHECK_FALSE(pub->verify(alg, message, *wrong));
    }
    // The DigestInfo of SHA-256 (RFC 8017 9.2, note 1) and the hash after it.
    auto input = pkcs11::sign_input(*pub, "rsa-sha2-256", message);
    REQUIRE(input);
    CHECK(input->size() == 19 + 32);
    CHECK(to_hex(byte_span(*input).first(19)) == "3031300d060960864801650304020105000420");
    CHECK_FALSE(pkcs11::sign_input(*pub, "ecdsa-sha2-nistp256", message));
    CHECK_FALSE(pkcs11::sign_input(*pub, "rsa-sha2-1024", message));
}

TEST_CASE("pkcs11: an RSA signature shorter than the modulus is padded, a longer one refused")
{
    auto key = private_key::generate(key_type::rsa, 2048);
    REQUIRE(key);
    const auto& pub = key->public_part();
    // A signature whose value has a leading zero byte comes back one byte
    // short from some tokens; OpenSSH pads it to the modulus' length.
    auto blob = pkcs11::signature_blob(pub, "rsa-sha2-256", bytes(255, 0x11));
    REQUIRE(blob);
    wire_reader r(*blob);
    CHECK(r.text(64) == "rsa-sha2-256");
    const auto sig = r.string();
    CHECK(sig.size() == 256);
    CHECK(sig[0] == 0);
    CHECK(sig[1] == 0x11);
    CHECK_FALSE(pkcs11::signature_blob(pub, "rsa-sha2-256", bytes(257, 0x11)));
    CHECK_FALSE(pkcs11::signature_blob(pub, "rsa-sha2-256", bytes()));
    CHECK_FALSE(pkcs11::rsa_public_key(bytes(), bn_param(key->evp(), OSSL_PKEY_PARAM_RSA_E)));
    CHECK_FALSE(pkcs11::rsa_public_key(bytes(4000, 0xff), bytes{1, 0, 1}));
    // An even exponent is no RSA key.
    CHECK_FALSE(pkcs11::rsa_public_key(bn_param(key->evp(), OSSL_PKEY_PARAM_RSA_N), bytes{1, 0, 0}));
}

TEST_CASE("pkcs11: ECDSA keys of the three curves from EC_PARAMS and EC_POINT, and their signatures")
{
    struct curve_case {
        key_type type;
        const bytes& oid;
        std::size_t field;
        const char* alg;
    };
    for (const curve_case c : {curve_case{key_type::ecdsa_p256, p256_oid, 32, "ecdsa-sha2-nistp256"},
                               curve_case{key_type::ecdsa_p384, p384_oid, 48, "ecdsa-sha2-nistp384"},
                               curve_case{key_type::ecdsa_p521, p521_oid, 66, "ecdsa-sha2-nistp521"}}) {
        CAPTURE(c.alg);
        auto key = private_key::generate(c.type);
        REQUIRE(key);
        const bytes point = ec_point_of(key->evp());
        auto pub = pkcs11::ecdsa_public_key(c.oid, octet_string(point));
        REQUIRE(pub);
        CHECK(*pub == key->public_part());
        auto digest = pkcs11::sign_input(*pub, c.alg, message);
        REQUIRE(digest);
        CHECK(digest->size() == (c.field == 66 ? 64 : c.field));
        auto blob = pkcs11::signature_blob(*pub, c.alg, token_sign(*key, *digest, c.field));
        REQUIRE(blob);
        CHECK(pub->verify(c.alg, message, *blob));
        // r||s of the wrong size, and another curve's algorithm.
        CHECK_FALSE(pkcs11::signature_blob(*pub, c.alg, bytes(2 * c.field - 2, 1)));
        CHECK_FALSE(pkcs11::signature_blob(*pub, c.alg, bytes(2 * c.field + 1, 1)));
        CHECK_FALSE(pkcs11::sign_input(*pub, "rsa-sha2-256", message));
        // The raw point without its OCTET STRING, or with another curve's OID.
        CHECK_FALSE(pkcs11::ecdsa_public_key(c.oid, point));
        CHECK_FALSE(pkcs11::ecdsa_public_key(c.type == key_type::ecdsa_p256 ? p384_oid : p256_oid,
                                             octet_string(point)));
        // A point off the curve.
        bytes off = point;
        off.back() ^= 1;
        CHECK_FALSE(pkcs11::ecdsa_public_key(c.oid, octet_string(off)));
    }
}

TEST_CASE("pkcs11: malformed EC attributes are refused")
{
    auto key = private_key::generate(key_type::ecdsa_p256);
    REQUIRE(key);
    const bytes point = ec_point_of(key->evp());
    const bytes der = octet_string(point);
    // An unknown curve (secp256k1) is unsupported, not malformed.
    const bytes k1{0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a};
    CHECK(pkcs11::ecdsa_public_key(k1, der).error() == errc::unsupported);
    CHECK(pkcs11::ecdsa_public_key(bytes(), der).error() == errc::unsupported);
    CHECK_FALSE(pkcs11::ecdsa_public_key(p256_oid, bytes()));
    // Lengths that disagree with the value, a long form where the short one
    // fits (not DER), a truncated long form.
    bytes shortlen = der;
    shortlen[1] = static_cast<std::uint8_t>(point.size() - 1);
    CHECK_FALSE(pkcs11::ecdsa_public_key(p256_oid, shortlen));
    bytes longform{0x04, 0x81, static_cast<std::uint8_t>(point.size())};
    longform.insert(longform.end(), point.begin(), point.end());
    CHECK_FALSE(pkcs11::ecdsa_public_key(p256_oid, longform));
    CHECK_FALSE(pkcs11::ecdsa_public_key(p256_oid, bytes{0x04, 0x82, 0x01}));
    bytes trailing = der;
    trailing.push_back(0);
    CHECK_FALSE(pkcs11::ecdsa_public_key(p256_oid, trailing));
    // A compressed point (02/03) is not what OpenSSH accepts either.
    bytes compressed{0x04, 33, 0x02};
    compressed.insert(compressed.end(), point.begin() + 1, point.begin() + 33);
    CHECK_FALSE(pkcs11::ecdsa_public_key(p256_oid, compressed));
}

TEST_CASE("pkcs11: a token's padded text as OpenSSH's rmspace leaves it")
{
    const unsigned char label[32] = {'t', 'e', 's', 't', ' ', 't', 'o', 'k', 'e', 'n', ' ', ' ', ' ', ' ', ' ', ' ',
                                     ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
    CHECK(pkcs11::padded_text(label, sizeof label) == "test token");
    // A field full to its last byte loses that byte, as in OpenSSH's lines
    // (SoftHSM's 16-digit serial shows 15 digits there).
    const unsigned char serial[16] = {'4', 'a', 'b', '0', '5', 'b', 'a', '6', '9', '2', '9', '7', 'e', 'c', '0', '0'};
    CHECK(pkcs11::padded_text(serial, sizeof serial) == "4ab05ba69297ec0");
    const unsigned char nul[8] = {'a', 'b', 0, 'c', ' ', ' ', ' ', ' '};
    CHECK(pkcs11::padded_text(nul, sizeof nul) == "ab");
    CHECK(pkcs11::padded_text(nul, 0).empty());
}

namespace {

// A self-signed certificate for `key` with subject C=DE, CN=alice: its DER
// and the subject's DER (CKA_VALUE and CKA_SUBJECT).
std::pair<bytes, bytes> make_certificate(EVP_PKEY* key)
{
    std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
    REQUIRE(cert);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "C", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("DE"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("alice"), -1, -1, 0);
    X509_set_issuer_name(cert.get(), name);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
    REQUIRE(X509_set_pubkey(cert.get(), key) == 1);
    const bool ed = EVP_PKEY_get_base_id(key) == EVP_PKEY_ED25519;
    REQUIRE(X509_sign(cert.get(), key, ed ? nullptr : EVP_sha256()) > 0);
    unsigned char* der = nullptr;
    const int n = i2d_X509(cert.get(), &der);
    REQUIRE(n > 0);
    bytes cert_der(der, der + n);
    OPENSSL_free(der);
    der = nullptr;
    const int m = i2d_X509_NAME(name, &der);
    REQUIRE(m > 0);
    bytes subject_der(der, der + m);
    OPENSSL_free(der);
    return {cert_der, subject_der};
}

} // namespace

TEST_CASE("pkcs11: the key of an X.509 certificate object, labelled with its subject")
{
    for (key_type t : {key_type::ecdsa_p256, key_type::ecdsa_p384, key_type::rsa}) {
        auto key = private_key::generate(t, t == key_type::rsa ? 2048 : 0);
        REQUIRE(key);
        const auto [cert, subject] = make_certificate(key->evp());
        std::string why;
        auto got = pkcs11::x509_public_key(subject, cert, why);
        REQUIRE(got);
        CHECK(got->key == key->public_part());
        CHECK(got->subject == "/C=DE/CN=alice");
        // A subject that does not parse still gives the key.
        auto unnamed = pkcs11::x509_public_key(bytes{0x30, 0x05}, cert, why);
        REQUIRE(unnamed);
        CHECK(unnamed->subject == "invalid subject");
        // A certificate cut short is refused in OpenSSH's words.
        CHECK_FALSE(pkcs11::x509_public_key(subject, byte_span(cert).first(cert.size() - 1), why));
        CHECK(why == "d2i_x509 failed");
    }
    // Ed25519 is not a key OpenSSH 9.2 takes from a token.
    auto ed = private_key::generate(key_type::ed25519);
    REQUIRE(ed);
    const auto [cert, subject] = make_certificate(ed->evp());
    std::string why;
    CHECK_FALSE(pkcs11::x509_public_key(subject, cert, why));
    CHECK(why == "unknown certificate key type");
    CHECK_FALSE(pkcs11::x509_public_key(subject, bytes(), why));
    CHECK_FALSE(pkcs11::x509_public_key(subject, bytes(pkcs11::max_attribute + 1, 0x30), why));
}
