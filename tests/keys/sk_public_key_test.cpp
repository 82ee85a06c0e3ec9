// Security-key public keys and their signatures, against vectors made by
// OpenSSH 9.2p1 (sk_vectors.hpp).
#include "common/keys/public_key.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/sshsig.hpp"
#include "common/wire.hpp"
#include "tests/keys/sk_vectors.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

// A real signature and what it covers: the SSHSIG-signed data over
// sk_signed_message (PROTOCOL.sshsig), which is what the key signed.
struct sk_vector {
    public_key key;
    bytes data;
    bytes signature;
};

sk_vector vector_from_sshsig(std::string_view armored)
{
    auto sig = parse_sshsig(armored);
    REQUIRE(sig);
    bytes data;
    wire_writer(data)
        .raw(std::string_view("SSHSIG"))
        .string(sig->ns)
        .string(sig->reserved)
        .string(sig->hash_alg)
        .string(digest(hash_alg::sha512, as_bytes(sk_signed_message)));
    return {sig->key, std::move(data), sig->signature};
}

// The key blob with another application (same public key).
bytes with_application(const public_key& key, std::string_view application)
{
    wire_reader r(key.blob());
    bytes out;
    wire_writer w(out);
    w.string(r.text());
    w.string(r.string());
    if (key.type() == key_type::sk_ecdsa_p256)
        w.string(r.string());
    w.string(application);
    return out;
}

} // namespace

TEST_CASE("sk keys: names")
{
    CHECK(key_type_name(key_type::sk_ed25519) == "sk-ssh-ed25519@openssh.com");
    CHECK(key_type_name(key_type::sk_ecdsa_p256) == "sk-ecdsa-sha2-nistp256@openssh.com");
    CHECK(key_type_from_name("sk-ssh-ed25519@openssh.com").value() == key_type::sk_ed25519);
    CHECK(key_type_from_name("sk-ecdsa-sha2-nistp256@openssh.com").value() == key_type::sk_ecdsa_p256);
    // Signature-only: not a key type name.
    CHECK_FALSE(key_type_from_name(webauthn_sk_ecdsa_signature).has_value());
    CHECK(key_type_for_signature_algorithm(webauthn_sk_ecdsa_signature).value() == key_type::sk_ecdsa_p256);
    CHECK(key_type_short_name(key_type::sk_ed25519) == "ED25519-SK");
    CHECK(key_type_short_name(key_type::sk_ecdsa_p256) == "ECDSA-SK");
    CHECK(signature_algorithms_for(key_type::sk_ed25519) ==
          std::vector<std::string_view>{"sk-ssh-ed25519@openssh.com"});
    CHECK(signature_algorithms_for(key_type::sk_ecdsa_p256) ==
          std::vector<std::string_view>{"sk-ecdsa-sha2-nistp256@openssh.com"});
    CHECK(is_security_key(key_type::sk_ed25519));
    CHECK(is_security_key(key_type::sk_ecdsa_p256));
    CHECK_FALSE(is_security_key(key_type::ed25519));
    CHECK_FALSE(is_security_key(key_type::ecdsa_p256));
}

TEST_CASE("sk keys: parse, encode and fingerprint as OpenSSH")
{
    struct {
        std::string_view b64, fp, application;
        key_type type;
    } cases[] = {
        {sk_ed25519_pub, sk_ed25519_fp, "ssh:", key_type::sk_ed25519},
        {sk_ecdsa_pub, sk_ecdsa_fp, "ssh:", key_type::sk_ecdsa_p256},
        {sk_ecdsa_app_pub, sk_ecdsa_app_fp, "ssh:test", key_type::sk_ecdsa_p256},
    };
    for (const auto& c : cases) {
        CAPTURE(c.fp);
        const public_key k = key_from_base64(c.b64);
        CHECK(k.type() == c.type);
        CHECK(k.application() == c.application);
        CHECK(k.bits() == 256);
        CHECK(base64_encode(k.blob()) == c.b64);
        CHECK(k.fingerprint_sha256() == c.fp);
        CHECK(k.evp() != nullptr);
    }
    CHECK(key_from_base64(sk_ecdsa_pub).fingerprint_md5() == sk_ecdsa_md5);
    // Other keys have no application.
    auto plain = private_key::generate(key_type::ed25519);
    REQUIRE(plain);
    CHECK(plain->public_part().application().empty());
}

TEST_CASE("sk keys: malformed blobs are refused")
{
    for (auto b64 : {sk_ed25519_pub, sk_ecdsa_pub}) {
        const public_key k = key_from_base64(b64);
        const bytes& blob = k.blob();
        for (std::size_t n = 0; n < blob.size(); ++n) {
            CAPTURE(n);
            CHECK_FALSE(public_key::from_blob(byte_span(blob).first(n)));
        }
        bytes longer = blob;
        longer.push_back(0);
        CHECK_FALSE(public_key::from_blob(longer));
        // The application is bounded and must be text without NUL.
        CHECK(public_key::from_blob(with_application(k, std::string(max_sk_application, 'a'))));
        CHECK_FALSE(public_key::from_blob(with_application(k, std::string(max_sk_application + 1, 'a'))));
        CHECK_FALSE(public_key::from_blob(with_application(k, std::string_view("ssh:\0x", 6))));
        // An empty application parses (OpenSSH's parser does not check it).
        CHECK(public_key::from_blob(with_application(k, "")));
    }
    // A point that is not on P-256.
    const public_key ec = key_from_base64(sk_ecdsa_pub);
    bytes bad = ec.blob();
    // type(4+34) curve(4+8) Q: length word then 0x04 X Y; flip a bit of Y.
    const std::size_t y_last = 4 + 34 + 4 + 8 + 4 + 64;
    bad[y_last] ^= 0x01;
    CHECK(public_key::from_blob(bad).error() == errc::invalid_format);
    // The wrong curve name.
    bytes p384;
    {
        wire_reader r(ec.blob());
        wire_writer w(p384);
        w.string(r.text());
        (void)r.text();
        w.string("nistp384").raw(r.rest());
    }
    CHECK_FALSE(public_key::from_blob(p384));
}

TEST_CASE("sk keys: real signatures verify and report flags and counter")
{
    struct {
        std::string_view armored;
        std::uint8_t flags;
    } cases[] = {
        {sk_ed25519_sshsig, sk_flag_user_presence},
        {sk_ecdsa_sshsig, sk_flag_user_presence},
        {sk_ed25519_nt_sshsig, sk_flag_user_verification},
    };
    for (const auto& c : cases) {
        const sk_vector v = vector_from_sshsig(c.armored);
        CAPTURE(v.key.type_name());
        sk_signature_details details;
        details.flags = 0xee;
        REQUIRE(v.key.verify(v.key.type_name(), v.data, v.signature, &details));
        CHECK(details.flags == c.flags);
        CHECK(details.counter == 7);
        // Without the details pointer: the cryptographic check alone.
        CHECK(v.key.verify(v.key.type_name(), v.data, v.signature));

        // Other data, or the name of another algorithm, fail.
        bytes other = v.data;
        other.back() ^= 1;
        CHECK(v.key.verify(v.key.type_name(), other, v.signature).error() == errc::signature_invalid);
        CHECK_FALSE(v.key.verify("ssh-ed25519", v.data, v.signature));
        CHECK_FALSE(v.key.verify("ecdsa-sha2-nistp256", v.data, v.signature));
        CHECK_FALSE(v.key.verify(webauthn_sk_ecdsa_signature, v.data, v.signature));
    }
}

TEST_CASE("sk keys: every truncation, extension and flipped byte is refused")
{
    for (auto armored : {sk_ed25519_sshsig, sk_ecdsa_sshsig}) {
        const sk_vector v = vector_from_sshsig(armored);
        CAPTURE(v.key.type_name());
        sk_signature_details details{0x55, 0x55};
        for (std::size_t n = 0; n < v.signature.size(); ++n) {
            CAPTURE(n);
            CHECK_FALSE(v.key.verify(v.key.type_name(), v.data, byte_span(v.signature).first(n), &details));
            bytes flipped = v.signature;
            flipped[n] ^= 0x01;
            CHECK_FALSE(v.key.verify(v.key.type_name(), v.data, flipped, &details));
        }
        bytes longer = v.signature;
        longer.push_back(0);
        CHECK_FALSE(v.key.verify(v.key.type_name(), v.data, longer, &details));
        // A failed check leaves the caller's details alone.
        CHECK(details.flags == 0x55);
        CHECK(details.counter == 0x55);
    }
}

TEST_CASE("sk keys: the application is bound into the signature")
{
    for (auto armored : {sk_ed25519_sshsig, sk_ecdsa_sshsig}) {
        const sk_vector v = vector_from_sshsig(armored);
        auto other = public_key::from_blob(with_application(v.key, "ssh:other"));
        REQUIRE(other);
        CHECK(v.key.verify(v.key.type_name(), v.data, v.signature));
        CHECK(other->verify(other->type_name(), v.data, v.signature).error() == errc::signature_invalid);
    }
}

TEST_CASE("sk keys: a plain key does not take an sk signature, nor the reverse")
{
    const sk_vector v = vector_from_sshsig(sk_ed25519_sshsig);
    // The same Ed25519 public key as a plain ssh-ed25519 key.
    wire_reader r(v.key.blob());
    (void)r.text();
    bytes plain_blob;
    wire_writer(plain_blob).string("ssh-ed25519").string(r.string());
    auto plain = public_key::from_blob(plain_blob);
    REQUIRE(plain);
    CHECK_FALSE(plain->verify("ssh-ed25519", v.data, v.signature));
    CHECK_FALSE(plain->verify("sk-ssh-ed25519@openssh.com", v.data, v.signature));
    // An sk signature blob relabelled as a plain one: no.
    wire_reader sr(v.signature);
    (void)sr.text();
    bytes relabelled;
    wire_writer(relabelled).string("ssh-ed25519").string(sr.string());
    CHECK_FALSE(plain->verify("ssh-ed25519", v.data, relabelled));
    CHECK_FALSE(v.key.verify("sk-ssh-ed25519@openssh.com", v.data, relabelled));
}
