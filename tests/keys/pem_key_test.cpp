#include "common/keys/pem_key.hpp"

#include "key_fixtures.hpp"

#include <doctest/doctest.h>

#include <openssl/encoder.h>
#include <openssl/evp.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

// A PEM (PKCS#8) private key straight from OpenSSL, for key kinds
// ssh-keygen does not make.
std::string openssl_pem(EVP_PKEY* pkey)
{
    OSSL_ENCODER_CTX* ctx =
        OSSL_ENCODER_CTX_new_for_pkey(pkey, OSSL_KEYMGMT_SELECT_ALL, "PEM", "PrivateKeyInfo", nullptr);
    REQUIRE(ctx != nullptr);
    unsigned char* out = nullptr;
    std::size_t len = 0;
    REQUIRE(OSSL_ENCODER_to_data(ctx, &out, &len) == 1);
    std::string text(reinterpret_cast<char*>(out), len);
    OPENSSL_free(out);
    OSSL_ENCODER_CTX_free(ctx);
    return text;
}

} // namespace

TEST_CASE("pem_key: format detection")
{
    CHECK(is_pem_private_key(fixture("rsa2048_pem_plain_key")));
    CHECK(is_pem_private_key(fixture("ecdsa256_pkcs8_enc_key")));
    CHECK_FALSE(is_pem_private_key(fixture("ed25519_plain_key")));
    CHECK_FALSE(is_pem_private_key("-----BEGIN PUBLIC KEY-----\n"));
    CHECK(pem_private_key_is_encrypted(fixture("rsa2048_pem_enc_key")).value());
    CHECK(pem_private_key_is_encrypted(fixture("ecdsa384_pkcs8_enc_key")).value());
    CHECK_FALSE(pem_private_key_is_encrypted(fixture("ecdsa521_pem_plain_key")).value());
    CHECK_FALSE(pem_private_key_is_encrypted(fixture("rsa2048_pkcs8_plain_key")).value());
    CHECK(pem_private_key_is_encrypted(fixture("ed25519_plain_key")).error() == errc::invalid_format);
}

TEST_CASE("pem_key: corrupted and truncated files")
{
    for (const char* name : {"ecdsa256_pem_plain_key", "ecdsa256_pkcs8_plain_key", "ecdsa256_pem_enc_key",
                             "ecdsa256_pkcs8_enc_key"}) {
        CAPTURE(name);
        const auto text = fixture(name);
        const bool enc = fixture_encrypted(name);
        const auto pass = enc ? std::optional(fixture_passphrase) : std::nullopt;
        REQUIRE(parse_pem_private_key(text, pass).has_value());
        for (std::size_t n = 0; n + 1 < text.size(); n += 5)
            CHECK_FALSE(parse_pem_private_key(text.substr(0, n), pass).has_value());
        // A changed base64 character in the body.
        for (std::size_t i = 80; i < text.size() - 40; i += 17) {
            auto bad = text;
            if (bad[i] == '\n' || bad[i] == '-')
                continue;
            bad[i] = bad[i] == 'A' ? 'B' : 'A';
            auto k = parse_pem_private_key(bad, pass);
            // DER has slack (e.g. inside the optional public key), so a
            // change may survive only when it leaves the same key.
            if (k)
                CHECK(k->public_part() == parse_pem_private_key(text, pass)->public_part());
        }
    }
}

TEST_CASE("pem_key: key kinds OpenSSH does not use are refused")
{
    // secp256k1: an EC curve without an SSH name.
    EVP_PKEY* k1 = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "secp256k1");
    REQUIRE(k1 != nullptr);
    CHECK(parse_pem_private_key(openssl_pem(k1), std::nullopt).error() == errc::unsupported);
    EVP_PKEY_free(k1);
    // RSA below 1024 bits.
    EVP_PKEY* small = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(768));
    REQUIRE(small != nullptr);
    CHECK(parse_pem_private_key(openssl_pem(small), std::nullopt).error() == errc::invalid_format);
    EVP_PKEY_free(small);
    // Ed448 and DSA labels.
    EVP_PKEY* ed448 = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED448");
    REQUIRE(ed448 != nullptr);
    CHECK(parse_pem_private_key(openssl_pem(ed448), std::nullopt).error() == errc::unsupported);
    EVP_PKEY_free(ed448);
    CHECK(parse_pem_private_key("-----BEGIN DSA PRIVATE KEY-----\nAA==\n-----END DSA PRIVATE KEY-----\n",
                                std::nullopt)
              .error() == errc::unsupported);
    CHECK(parse_pem_private_key("-----BEGIN PUBLIC KEY-----\nAA==\n-----END PUBLIC KEY-----\n", std::nullopt).error() ==
          errc::invalid_format);
}

TEST_CASE("pem_key: Ed25519 in PKCS#8")
{
    auto key = private_key::generate(key_type::ed25519).value();
    auto text = write_pem_private_key(key, "", pem_format::pkcs8).value();
    CHECK(text.starts_with("-----BEGIN PRIVATE KEY-----"));
    auto back = parse_pem_private_key(text, std::nullopt);
    REQUIRE(back.has_value());
    CHECK(back->public_part() == key.public_part());
    auto enc = write_pem_private_key(key, "secret", pem_format::pkcs8).value();
    CHECK(enc.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
    CHECK(parse_pem_private_key(enc, "secret")->public_part() == key.public_part());
    CHECK(parse_pem_private_key(enc, "Secret").error() == errc::wrong_passphrase);
    CHECK(write_pem_private_key(key, "", pem_format::traditional).error() == errc::unsupported);
}

TEST_CASE("pem_key: traditional encryption headers")
{
    auto key = private_key::generate(key_type::ecdsa_p256).value();
    auto text = write_pem_private_key(key, "secret", pem_format::traditional).value();
    CHECK(text.starts_with("-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,"));
    CHECK(parse_pem_private_key(text, std::nullopt).error() == errc::passphrase_required);
    CHECK(parse_pem_private_key(text, "").error() == errc::wrong_passphrase);
    CHECK(parse_pem_private_key(text, "secret")->public_part() == key.public_part());
}
