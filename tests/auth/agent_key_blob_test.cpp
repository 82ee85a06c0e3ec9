// ADD_IDENTITY's key encoding: plain and certified keys of every type
// survive a round trip, the certified form carries only the private fields
// (as OpenSSH writes it), and truncated, padded or mismatched input is
// refused. Interoperability with Debian's ssh-add and ssh-agent is checked
// by regress/ssh_agent.sh and regress/ssh_add.sh.
#include "common/auth/agent_key_blob.hpp"

#include "common/random.hpp"
#include "tests/keys/sk_vectors.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

const private_key& key_of(key_type t)
{
    static const private_key ed = *private_key::generate(key_type::ed25519);
    static const private_key ec = *private_key::generate(key_type::ecdsa_p384);
    static const private_key rsa = *private_key::generate(key_type::rsa, 2048);
    return t == key_type::ed25519 ? ed : t == key_type::rsa ? rsa : ec;
}

certificate certify(const private_key& key)
{
    system_random rng;
    certificate_fields f;
    f.key_id = "agent test";
    f.principals = {"alice"};
    f.extensions = default_user_extensions();
    return *certificate::sign(f, key.public_part(), key_of(key_type::ed25519), rng);
}

bytes encode(const private_key& key, const certificate* cert)
{
    bytes out;
    wire_writer w(out);
    REQUIRE(agent::encode_private_key(w, key, cert));
    return out;
}

// ADD_ID_CONSTRAINED messages Debian 12's ssh-add sent for security keys
// made with the test provider (regress/tools/sk_test_provider; the key
// handle holds a test key), length prefix included: an sk-ssh-ed25519 key
// with provider "internal", and an sk-ssh-ed25519 certificate.
const std::string_view debian_sk_add =
    "000000bb190000001a736b2d7373682d65643235353139406f70656e7373682e636f6d000000200965dfdc49221b2621"
    "a2d3f12059cf6d470d3979f706fc7b7c32eff9245d4686000000047373683a01000000384c48534b54503101302e0201"
    "00300506032b6570042204207098ea3eec030a315c1218a8d5cebc9dbe3569e70e9918ff6f06a96c8b9966f900000000"
    "00000003656463ff00000017736b2d70726f7669646572406f70656e7373682e636f6d00000008696e7465726e616c";
const std::string_view debian_sk_cert_add =
    "000002af1900000023736b2d7373682d656432353531392d636572742d763031406f70656e7373682e636f6d000001c3"
    "00000023736b2d7373682d656432353531392d636572742d763031406f70656e7373682e636f6d00000020b7d306b5bd"
    "be5224cd9be5b6cd9b15a4b1a68a3a14f7d752dde1cc3c15a527d5000000200965dfdc49221b2621a2d3f12059cf6d47"
    "0d3979f706fc7b7c32eff9245d4686000000047373683a00000000000000000000000100000006636572746964000000"
    "060000000275310000000000000000ffffffffffffffff0000000000000082000000157065726d69742d5831312d666f"
    "7277617264696e6700000000000000177065726d69742d6167656e742d666f7277617264696e67000000000000001670"
    "65726d69742d706f72742d666f7277617264696e67000000000000000a7065726d69742d707479000000000000000e70"
    "65726d69742d757365722d72630000000000000000000000330000000b7373682d6564323535313900000020ce0318da"
    "aa9b0d3d0684e09af9ecb50e65788f8ae8617fcc7301d57812b0bd09000000530000000b7373682d6564323535313900"
    "000040e912d4d740a2935a4ea2fc9f869cb9ac7394574685eb778c8fed39f505b1278f15b4c9711ba3c16222709adf0d"
    "b11b514725c6b2c9de7203576c5f210bbf1f0e000000200965dfdc49221b2621a2d3f12059cf6d470d3979f706fc7b7c"
    "32eff9245d4686000000047373683a01000000384c48534b54503101302e020100300506032b6570042204207098ea3e"
    "ec030a315c1218a8d5cebc9dbe3569e70e9918ff6f06a96c8b9966f90000000000000003656463ff00000017736b2d70"
    "726f7669646572406f70656e7373682e636f6d0000002c2f776f726b2f6d61696e2f6275696c642f726567726573732f"
    "736b5f746573745f70726f76696465722e736f";

// The key part of a captured message: after length and type, up to the
// comment.
bytes key_part(std::string_view hex, std::size_t& comment_at)
{
    const bytes msg = from_hex(hex);
    wire_reader r(byte_span(msg).subspan(5));
    wire_reader probe = r;
    REQUIRE(agent::decode_identity(probe));
    comment_at = 5 + probe.position();
    return bytes(msg.begin() + 5, msg.begin() + static_cast<std::ptrdiff_t>(comment_at));
}

} // namespace

TEST_CASE("agent key blob: security keys as Debian's ssh-add sends them, and back")
{
    for (auto hex : {debian_sk_add, debian_sk_cert_add}) {
        std::size_t comment_at = 0;
        const bytes part = key_part(hex, comment_at);
        wire_reader r(part);
        auto id = agent::decode_identity(r);
        REQUIRE(id);
        CHECK(r.finish());
        auto* sk = std::get_if<openssh_security_key>(&id->key);
        REQUIRE(sk);
        CHECK(sk->key.type() == key_type::sk_ed25519);
        CHECK(sk->key.application() == "ssh:");
        CHECK(sk->flags == 0x01);
        CHECK(sk->key_handle.size() == 56);
        CHECK(id->cert.has_value() == (hex == debian_sk_cert_add));
        if (id->cert)
            CHECK(id->cert->key() == sk->key);
        // Written back byte for byte.
        bytes again;
        wire_writer w(again);
        REQUIRE(agent::encode_security_key(w, *sk, id->cert ? &*id->cert : nullptr));
        CHECK(again == part);
        // The message's comment follows the key.
        const bytes msg = from_hex(hex);
        wire_reader rest(byte_span(msg).subspan(comment_at));
        CHECK(rest.text() == "edc");
        // Every truncation is refused.
        for (std::size_t n = 0; n < part.size(); ++n) {
            wire_reader cut(byte_span(part).first(n));
            CHECK_FALSE(agent::decode_identity(cut));
        }
    }
}

TEST_CASE("agent key blob: security keys of both types, plain and certified, round trip")
{
    system_random rng;
    auto ca = *private_key::generate(key_type::ed25519);
    for (auto b64 : {test::sk_ed25519_pub, test::sk_ecdsa_app_pub}) {
        openssh_security_key sk;
        sk.key = test::key_from_base64(b64);
        sk.flags = 0x05;
        sk.key_handle = from_hex("0102030405");
        certificate_fields f;
        f.key_id = "sk";
        f.principals = {"alice"};
        auto cert = certificate::sign(f, sk.key, ca, rng);
        REQUIRE(cert);
        for (const certificate* c : {static_cast<const certificate*>(nullptr), static_cast<const certificate*>(&*cert)}) {
            bytes b;
            wire_writer w(b);
            REQUIRE(agent::encode_security_key(w, sk, c));
            wire_reader r(b);
            auto id = agent::decode_identity(r);
            REQUIRE(id);
            CHECK(r.finish());
            auto* back = std::get_if<openssh_security_key>(&id->key);
            REQUIRE(back);
            CHECK(back->key == sk.key);
            CHECK(back->flags == sk.flags);
            CHECK(back->key_handle == sk.key_handle);
            CHECK(id->cert.has_value() == (c != nullptr));
        }
        // A certificate of another key is refused both ways.
        openssh_security_key other = sk;
        other.key = test::key_from_base64(b64 == test::sk_ed25519_pub ? test::sk_ed25519_nt_pub : test::sk_ecdsa_pub);
        bytes b;
        wire_writer w(b);
        CHECK(agent::encode_security_key(w, other, &*cert).error() == errc::key_type_mismatch);
        // Hand-made: the certificate, then another key's fields.
        bytes forged;
        wire_writer fw(forged);
        fw.string(cert->type_name()).string(cert->blob());
        wire_reader other_pub(other.key.blob());
        other_pub.text(64);
        if (other.key.type() == key_type::sk_ed25519)
            fw.string(other_pub.string());
        fw.string(std::string_view("ssh:other")).u8(1).string(sk.key_handle).string(std::string_view{});
        wire_reader fr(forged);
        CHECK_FALSE(agent::decode_identity(fr));
    }
    // Not a security key: encode_security_key refuses it.
    openssh_security_key plain;
    plain.key = key_of(key_type::ed25519).public_part();
    bytes b;
    wire_writer w(b);
    CHECK(agent::encode_security_key(w, plain, nullptr).error() == errc::key_type_mismatch);
}

TEST_CASE("agent key blob: plain keys round trip in OpenSSH's private key encoding")
{
    for (auto t : {key_type::ed25519, key_type::ecdsa_p384, key_type::rsa}) {
        CAPTURE(key_type_name(t));
        const bytes blob = encode(key_of(t), nullptr);
        bytes plain;
        wire_writer pw(plain);
        REQUIRE(key_of(t).serialize(pw));
        CHECK(blob == plain);
        wire_reader r(blob);
        auto back = agent::decode_private_key(r);
        REQUIRE(back);
        CHECK(r.finish());
        CHECK_FALSE(back->cert);
        CHECK(back->key.public_part() == key_of(t).public_part());
    }
}

TEST_CASE("agent key blob: certified keys carry the certificate, then the private fields alone")
{
    for (auto t : {key_type::ed25519, key_type::ecdsa_p384, key_type::rsa}) {
        CAPTURE(key_type_name(t));
        const certificate cert = certify(key_of(t));
        const bytes blob = encode(key_of(t), &cert);
        wire_reader r(blob);
        CHECK(r.text() == cert.type_name());
        CHECK(byte_span(r.string()).size() == cert.blob().size());
        // What follows: Ed25519 string pk + string sk; ECDSA one mpint;
        // RSA four mpints.
        std::size_t fields = 0;
        while (r.remaining() > 0 && r.ok()) {
            r.string();
            ++fields;
        }
        CHECK(fields == (t == key_type::ed25519 ? 2u : t == key_type::rsa ? 4u : 1u));

        wire_reader again(blob);
        auto back = agent::decode_private_key(again);
        REQUIRE(back);
        CHECK(again.finish());
        REQUIRE(back->cert);
        CHECK(back->cert->blob() == cert.blob());
        CHECK(back->key.public_part() == key_of(t).public_part());
        // The decoded key signs, and its signature verifies with the key.
        const bytes data{1, 2, 3};
        const auto alg = t == key_type::rsa ? "rsa-sha2-512" : key_of(t).public_part().type_name();
        auto sig = back->key.sign(alg, data);
        REQUIRE(sig);
        CHECK(key_of(t).public_part().verify(alg, data, *sig));
    }
}

TEST_CASE("agent key blob: a certificate for another key is refused both ways")
{
    const certificate cert = certify(key_of(key_type::ecdsa_p384));
    bytes out;
    wire_writer w(out);
    CHECK(agent::encode_private_key(w, key_of(key_type::rsa), &cert).error() == errc::key_type_mismatch);

    // An ECDSA certificate followed by another ECDSA key's scalar.
    const private_key other = *private_key::generate(key_type::ecdsa_p384);
    const certificate other_cert = certify(other);
    bytes forged = encode(key_of(key_type::ecdsa_p384), &cert);
    const bytes genuine = encode(other, &other_cert);
    wire_reader gr(genuine);
    gr.text();
    gr.string();
    const byte_span other_scalar = gr.rest();
    wire_reader fr(forged);
    fr.text();
    fr.string();
    forged.resize(fr.position());
    forged.insert(forged.end(), other_scalar.begin(), other_scalar.end());
    wire_reader r(forged);
    CHECK_FALSE(agent::decode_private_key(r));
}

TEST_CASE("agent key blob: every truncation is refused, unknown types are unsupported")
{
    for (auto t : {key_type::ed25519, key_type::ecdsa_p384, key_type::rsa}) {
        const certificate cert = certify(key_of(t));
        for (const bytes& blob : {encode(key_of(t), nullptr), encode(key_of(t), &cert)}) {
            for (std::size_t n = 0; n < blob.size(); ++n) {
                wire_reader r(byte_span(blob).first(n));
                CHECK_FALSE(agent::decode_private_key(r)); // never a whole key from part of one
            }
        }
    }
    bytes dsa;
    wire_writer(dsa).string("ssh-dss").mpint(bytes{1}).mpint(bytes{2});
    wire_reader r(dsa);
    CHECK(agent::decode_private_key(r).error() == errc::unsupported);
}
