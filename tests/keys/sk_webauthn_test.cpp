// webauthn-sk-ecdsa-sha2-nistp256@openssh.com signatures, built here the
// way a browser's authenticator would: the test holds a P-256 private key,
// presents its public half as an sk-ecdsa key, and signs
// authenticatorData || H(clientDataJSON) itself.
#include "common/keys/public_key.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/private_key.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace longhaul;

namespace {

constexpr std::string_view sk_ecdsa_name = "sk-ecdsa-sha2-nistp256@openssh.com";
const bytes message = to_bytes(as_bytes("SSH userauth request bytes!!\xff\xfe\xfd"));

std::string base64url(byte_span data)
{
    std::string s = base64_encode(data, false);
    std::replace(s.begin(), s.end(), '+', '-');
    std::replace(s.begin(), s.end(), '/', '_');
    return s;
}

struct webauthn_fixture {
    private_key priv;
    public_key key; // sk-ecdsa with application "ssh:"
};

webauthn_fixture make_fixture()
{
    auto priv = private_key::generate(key_type::ecdsa_p256);
    REQUIRE(priv);
    wire_reader r(priv->public_part().blob());
    (void)r.text();
    const auto curve = r.string();
    const auto q = r.string();
    bytes blob;
    wire_writer(blob).string(sk_ecdsa_name).string(curve).string(q).string("ssh:");
    auto key = public_key::from_blob(blob);
    REQUIRE(key);
    return {std::move(*priv), std::move(*key)};
}

// What a WebAuthn assertion consists of, before it is packed.
struct assertion {
    std::string type_name{webauthn_sk_ecdsa_signature};
    std::string application = "ssh:"; // hashed into the signed rpIdHash
    std::uint8_t flags = 0x01;
    std::uint32_t counter = 42;
    std::string origin = "https://example.com";
    std::string client_data;          // empty: the canonical one for `message`
    bytes extensions;
};

std::string canonical_client_data(byte_span data, std::string_view origin)
{
    return R"({"type":"webauthn.get","challenge":")" + base64url(data) + R"(","origin":")" + std::string(origin) +
           R"(","crossOrigin":false})";
}

// Signs authenticatorData || H(clientData) with ECDSA-P256-SHA256 (what
// private_key::sign does for ecdsa-sha2-nistp256) and packs the blob.
bytes make_signature(const webauthn_fixture& f, const assertion& a, byte_span data = message)
{
    const std::string client_data = a.client_data.empty() ? canonical_client_data(data, a.origin) : a.client_data;
    bytes signed_part;
    wire_writer(signed_part)
        .raw(digest(hash_alg::sha256, as_bytes(a.application)))
        .u8(a.flags)
        .u32(a.counter)
        .raw(a.extensions)
        .raw(digest(hash_alg::sha256, as_bytes(client_data)));
    auto plain = f.priv.sign("ecdsa-sha2-nistp256", signed_part);
    REQUIRE(plain);
    wire_reader r(*plain);
    (void)r.text();
    const byte_span rs = r.string();
    bytes out;
    wire_writer(out)
        .string(a.type_name)
        .string(rs)
        .u8(a.flags)
        .u32(a.counter)
        .string(a.origin)
        .string(client_data)
        .string(a.extensions);
    return out;
}

} // namespace

TEST_CASE("webauthn: a well-formed assertion verifies")
{
    const auto f = make_fixture();
    assertion a;
    sk_signature_details details;
    const bytes sig = make_signature(f, a);
    REQUIRE(f.key.verify(sk_ecdsa_name, message, sig, &details));
    CHECK(details.flags == 0x01);
    CHECK(details.counter == 42);
    // The signature-only name is also accepted as the algorithm.
    CHECK(f.key.verify(webauthn_sk_ecdsa_signature, message, sig));

    // UV without UP, extensions announced by ED, members after the prefix:
    // all fine.
    a.flags = sk_flag_user_verification | 0x80;
    a.extensions = {0xa1, 0x01, 0x02};
    CHECK(f.key.verify(sk_ecdsa_name, message, make_signature(f, a), &details));
    CHECK(details.flags == 0x84);
    a = {};
    a.client_data = canonical_client_data(message, a.origin) + R"(,"other":"x"})";
    CHECK(f.key.verify(sk_ecdsa_name, message, make_signature(f, a)));
    // The origin need not be related to the application (only rpIdHash binds).
    a = {};
    a.origin = "https://elsewhere.example";
    CHECK(f.key.verify(sk_ecdsa_name, message, make_signature(f, a)));
}

TEST_CASE("webauthn: each check refuses what it guards against")
{
    const auto f = make_fixture();
    const auto refused = [&](const assertion& a, byte_span data = message) {
        return f.key.verify(sk_ecdsa_name, data, make_signature(f, a)).error() == errc::signature_invalid;
    };
    assertion a;

    SUBCASE("an origin with a quote") { a.origin = R"(https://x.example","evil":")"; CHECK(refused(a)); }
    SUBCASE("attested credential data (AT)") { a.flags = 0x41; CHECK(refused(a)); }
    SUBCASE("ED without extensions") { a.flags = 0x81; CHECK(refused(a)); }
    SUBCASE("extensions without ED")
    {
        a.extensions = {0xa0};
        CHECK(refused(a));
    }
    SUBCASE("a challenge for other data")
    {
        const bytes other = to_bytes(as_bytes("other data"));
        a.client_data = canonical_client_data(other, a.origin);
        CHECK(refused(a));
    }
    SUBCASE("a registration (webauthn.create)")
    {
        a.client_data = R"({"type":"webauthn.create","challenge":")" + base64url(message) +
                        R"(","origin":"https://example.com"})";
        CHECK(refused(a));
    }
    SUBCASE("clientData naming another origin than the blob")
    {
        a.client_data = canonical_client_data(message, "https://other.example");
        CHECK(refused(a));
    }
    SUBCASE("clientData cut inside the prefix")
    {
        const std::string full = canonical_client_data(message, a.origin);
        a.client_data = full.substr(0, full.find(R"(,"crossOrigin")") - 1);
        CHECK(refused(a));
    }
    SUBCASE("padded base64 in the challenge")
    {
        std::string padded = base64_encode(message);
        std::replace(padded.begin(), padded.end(), '+', '-');
        std::replace(padded.begin(), padded.end(), '/', '_');
        REQUIRE(padded.back() == '=');
        a.client_data = R"({"type":"webauthn.get","challenge":")" + padded + R"(","origin":"https://example.com"})";
        CHECK(refused(a));
    }
    SUBCASE("another application's rpIdHash") { a.application = "ssh:other"; CHECK(refused(a)); }
    SUBCASE("the plain sk-ecdsa name with webauthn fields")
    {
        a.type_name = std::string(sk_ecdsa_name);
        CHECK(refused(a));
    }
}

TEST_CASE("webauthn: framing is strict")
{
    const auto f = make_fixture();
    const bytes sig = make_signature(f, assertion{});
    REQUIRE(f.key.verify(sk_ecdsa_name, message, sig));
    for (std::size_t n = 0; n < sig.size(); ++n) {
        CAPTURE(n);
        CHECK_FALSE(f.key.verify(sk_ecdsa_name, message, byte_span(sig).first(n)));
    }
    bytes longer = sig;
    longer.push_back(0);
    CHECK_FALSE(f.key.verify(sk_ecdsa_name, message, longer));
    // A flipped byte anywhere: the type, r/s, flags, counter, origin,
    // clientData or the empty extensions' length.
    for (std::size_t n = 0; n < sig.size(); ++n) {
        bytes flipped = sig;
        flipped[n] ^= 0x01;
        CAPTURE(n);
        CHECK_FALSE(f.key.verify(sk_ecdsa_name, message, flipped));
    }
    // An sk-ed25519 key never takes the webauthn form.
    CHECK_FALSE(key_type_for_signature_algorithm(webauthn_sk_ecdsa_signature).value() == key_type::sk_ed25519);
}
