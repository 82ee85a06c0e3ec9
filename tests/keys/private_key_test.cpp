#include "common/keys/private_key.hpp"

#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace longhaul;

namespace {

// Generating RSA keys is slow; each test reuses one key per type.
const private_key& test_key(key_type t)
{
    static std::map<key_type, private_key> keys;
    auto it = keys.find(t);
    if (it == keys.end()) {
        auto k = private_key::generate(t, t == key_type::rsa ? 2048 : 0);
        REQUIRE(k.has_value());
        it = keys.emplace(t, std::move(*k)).first;
    }
    return it->second;
}

constexpr key_type all_types[] = {key_type::ed25519, key_type::ecdsa_p256, key_type::ecdsa_p384,
                                  key_type::ecdsa_p521, key_type::rsa};

} // namespace

TEST_CASE("private_key: generate every type")
{
    for (auto t : all_types) {
        const auto& k = test_key(t);
        CHECK(k.type() == t);
        CHECK(k.public_part().type() == t);
        CHECK(k.evp() != nullptr);
        auto again = public_key::from_blob(k.public_part().blob());
        REQUIRE(again.has_value());
        CHECK(*again == k.public_part());
    }
    CHECK(test_key(key_type::rsa).public_part().bits() == 2048);
    CHECK(test_key(key_type::ecdsa_p521).public_part().bits() == 521);
}

TEST_CASE("private_key: generate argument checks")
{
    CHECK(private_key::generate(key_type::rsa, 512).error() == errc::invalid_argument);
    CHECK(private_key::generate(key_type::rsa, 1023).error() == errc::invalid_argument);
    CHECK(private_key::generate(key_type::rsa, 16385).error() == errc::invalid_argument);
    CHECK(private_key::generate(key_type::ecdsa_p256, 384).error() == errc::invalid_argument);
    auto p384 = private_key::generate(key_type::ecdsa_p384, 384);
    REQUIRE(p384.has_value());
    CHECK(p384->public_part().bits() == 384);
    auto rsa1024 = private_key::generate(key_type::rsa, 1024);
    REQUIRE(rsa1024.has_value());
    CHECK(rsa1024->public_part().bits() == 1024);
}

TEST_CASE("private_key: the RSA default size is 3072 bits")
{
    auto k = private_key::generate(key_type::rsa);
    REQUIRE(k.has_value());
    CHECK(k->public_part().bits() == 3072);
}

TEST_CASE("private_key: sign then verify, every algorithm")
{
    const std::string message = "the quick brown fox";
    for (auto t : all_types) {
        const auto& k = test_key(t);
        for (auto alg : signature_algorithms_for(t)) {
            CAPTURE(alg);
            auto sig = k.sign(alg, as_bytes(message));
            REQUIRE(sig.has_value());
            wire_reader r(*sig);
            CHECK(r.text() == alg);
            r.string();
            CHECK(r.finish().has_value());
            CHECK(k.public_part().verify(alg, as_bytes(message), *sig).has_value());
            CHECK(k.public_part().verify(alg, as_bytes(message + "!"), *sig).error() == errc::signature_invalid);
        }
    }
}

TEST_CASE("private_key: signature sizes")
{
    const auto msg = as_bytes("x");
    auto ed = test_key(key_type::ed25519).sign("ssh-ed25519", msg);
    REQUIRE(ed.has_value());
    CHECK(ed->size() == 4 + 11 + 4 + 64);
    auto rsa = test_key(key_type::rsa).sign("rsa-sha2-256", msg);
    REQUIRE(rsa.has_value());
    // The RSA signature is exactly the modulus length.
    CHECK(rsa->size() == 4 + 12 + 4 + 256);
}

TEST_CASE("private_key: sign refuses algorithms of another key type")
{
    CHECK(test_key(key_type::ed25519).sign("rsa-sha2-256", as_bytes("m")).error() == errc::key_type_mismatch);
    CHECK(test_key(key_type::rsa).sign("ssh-ed25519", as_bytes("m")).error() == errc::key_type_mismatch);
    CHECK(test_key(key_type::ecdsa_p256).sign("ecdsa-sha2-nistp384", as_bytes("m")).error() ==
          errc::key_type_mismatch);
    CHECK(test_key(key_type::rsa).sign("rsa-sha2-1024", as_bytes("m")).error() == errc::key_type_mismatch);
}

TEST_CASE("private_key: serialize and deserialize every type")
{
    for (auto t : all_types) {
        const auto& k = test_key(t);
        bytes buf;
        wire_writer w(buf);
        REQUIRE(k.serialize(w).has_value());
        wire_reader r(buf);
        auto back = private_key::deserialize(r);
        REQUIRE(back.has_value());
        CHECK(r.finish().has_value());
        CHECK(back->public_part() == k.public_part());
        // The copy signs with the same key.
        auto sig = back->sign(signature_algorithms_for(t).front(), as_bytes("m"));
        REQUIRE(sig.has_value());
        CHECK(k.public_part().verify(signature_algorithms_for(t).front(), as_bytes("m"), *sig).has_value());

        // Every truncation fails cleanly.
        for (std::size_t n = 0; n < buf.size(); n += (t == key_type::rsa ? 7 : 1)) {
            wire_reader cut(byte_span(buf.data(), n));
            CHECK_FALSE(private_key::deserialize(cut).has_value());
        }
    }
}

TEST_CASE("private_key: inconsistent private fields are rejected")
{
    // Ed25519: the public half must be the one the seed derives.
    {
        const auto& k = test_key(key_type::ed25519);
        bytes buf;
        wire_writer w(buf);
        REQUIRE(k.serialize(w).has_value());
        auto bad = buf;
        bad[4 + 11 + 4] ^= 1; // first byte of pk
        wire_reader r(bad);
        CHECK(private_key::deserialize(r).error() == errc::invalid_format);
        bad = buf;
        bad[buf.size() - 1] ^= 1; // last byte of sk (its copy of pk)
        wire_reader r2(bad);
        CHECK(private_key::deserialize(r2).error() == errc::invalid_format);
        bad = buf;
        bad[4 + 11 + 4 + 32 + 4] ^= 1; // first byte of the seed
        wire_reader r3(bad);
        CHECK(private_key::deserialize(r3).error() == errc::invalid_format);
    }
    // ECDSA: Q must be d * G; RSA: n = p * q etc. Flip the last byte of the
    // encoding (the low byte of d, resp. q).
    for (auto t : {key_type::ecdsa_p256, key_type::rsa}) {
        const auto& k = test_key(t);
        bytes buf;
        wire_writer w(buf);
        REQUIRE(k.serialize(w).has_value());
        buf.back() ^= 2;
        wire_reader r(buf);
        CHECK(private_key::deserialize(r).error() == errc::invalid_format);
    }
}

TEST_CASE("private_key: unknown types")
{
    bytes buf;
    wire_writer(buf).string("ssh-dss").mpint(from_hex("01"));
    wire_reader r(buf);
    CHECK(private_key::deserialize(r).error() == errc::unsupported);
}
