// ADD_IDENTITY's key encoding: plain and certified keys of every type
// survive a round trip, the certified form carries only the private fields
// (as OpenSSH writes it), and truncated, padded or mismatched input is
// refused. Interoperability with Debian's ssh-add and ssh-agent is checked
// by regress/ssh_agent.sh and regress/ssh_add.sh.
#include "common/auth/agent_key_blob.hpp"

#include "common/random.hpp"
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

} // namespace

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
