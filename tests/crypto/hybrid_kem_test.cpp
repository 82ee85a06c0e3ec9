// The hybrid key agreements (common/crypto/hybrid_kem_agreement.cpp):
// mlkem768x25519's two halves composed as the draft and OpenSSH compose
// them, checked against ML-KEM and X25519 run separately; sntrup761x25519's
// agreement and lengths (its composition is checked against OpenSSH in
// regress/pq_kex_interop.sh).
#include "common/crypto/hash.hpp"
#include "common/crypto/key_agreement.hpp"
#include "common/crypto/ml_kem.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

std::unique_ptr<key_agreement> hybrid_or_fail(result<std::unique_ptr<key_agreement>> r)
{
    REQUIRE(r.has_value());
    return std::move(*r);
}

// Seeds and keys of the test: RFC 7748's X25519 private keys, counting bytes
// for ML-KEM.
bytes counting(std::uint8_t from)
{
    bytes b(32);
    for (std::size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<std::uint8_t>(from + i);
    return b;
}
const bytes client_x25519 = from_hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
const bytes server_x25519 = from_hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");

} // namespace

TEST_CASE("mlkem768x25519: C_INIT and S_REPLY are ML-KEM's value then X25519's, K = SHA-256(K_PQ || K_CL)")
{
    const bytes d = counting(0), z = counting(32), m = counting(64);
    auto client = hybrid_or_fail(make_mlkem768x25519_initiator_from(d, z, client_x25519));
    auto server = hybrid_or_fail(make_mlkem768x25519_responder_from(m, server_x25519));
    CHECK(server->public_value().empty()); // a KEM answers the client's key

    // The halves on their own.
    const auto kem = ml_kem768::key_gen_internal(d, z);
    auto x_client = hybrid_or_fail(make_x25519_agreement_from_private(client_x25519));
    auto x_server = hybrid_or_fail(make_x25519_agreement_from_private(server_x25519));
    bytes c_init = kem.encapsulation_key;
    c_init.insert(c_init.end(), x_client->public_value().begin(), x_client->public_value().end());
    CHECK(to_hex(client->public_value()) == to_hex(c_init));
    CHECK(client->public_value().size() == 1216);

    auto k_server = server->derive(client->public_value());
    REQUIRE(k_server.has_value());
    auto enc = ml_kem768::encaps_internal(kem.encapsulation_key, m);
    REQUIRE(enc.has_value());
    bytes s_reply = enc->ciphertext;
    s_reply.insert(s_reply.end(), x_server->public_value().begin(), x_server->public_value().end());
    CHECK(to_hex(server->public_value()) == to_hex(s_reply));
    CHECK(server->public_value().size() == 1120);

    auto k_cl = x_client->derive(x_server->public_value());
    REQUIRE(k_cl.has_value());
    bytes both(enc->shared_secret.span().begin(), enc->shared_secret.span().end());
    both.insert(both.end(), k_cl->span().begin(), k_cl->span().end());
    const std::string want = to_hex(digest(hash_alg::sha256, both));
    CHECK(to_hex(k_server->span()) == want);

    auto k_client = client->derive(server->public_value());
    REQUIRE(k_client.has_value());
    CHECK(to_hex(k_client->span()) == want);
}

TEST_CASE("mlkem768x25519: fresh keys agree; bad lengths, keys and points are refused")
{
    for (int i = 0; i < 3; ++i) {
        auto client = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::mlkem768_x25519, false));
        auto server = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::mlkem768_x25519, true));
        auto ks = server->derive(client->public_value());
        REQUIRE(ks.has_value());
        auto kc = client->derive(server->public_value());
        REQUIRE(kc.has_value());
        CHECK(ks->size() == 32);
        CHECK(to_hex(ks->span()) == to_hex(kc->span()));
        // One reply per exchange.
        CHECK_FALSE(server->derive(client->public_value()).has_value());
    }
    auto client = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::mlkem768_x25519, false));
    const bytes init(client->public_value().begin(), client->public_value().end());
    for (std::size_t len : {std::size_t{0}, std::size_t{32}, init.size() - 1, init.size() + 1}) {
        bytes cut = init;
        cut.resize(len, 0);
        auto server = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::mlkem768_x25519, true));
        CHECK_FALSE(server->derive(cut).has_value());
        CHECK(server->public_value().empty());
    }
    {
        // A coefficient of the encapsulation key at q = 3329 (FIPS 203 7.2's
        // modulus check): the first 12 bits of ek.
        bytes bad = init;
        bad[0] = 0x01;
        bad[1] = static_cast<std::uint8_t>((bad[1] & 0xf0) | 0x0d);
        auto server = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::mlkem768_x25519, true));
        CHECK_FALSE(server->derive(bad).has_value());
    }
    {
        // X25519's all-zero output: a low-order point (0) as the client's half.
        bytes bad = init;
        std::fill(bad.end() - 32, bad.end(), 0);
        auto server = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::mlkem768_x25519, true));
        CHECK_FALSE(server->derive(bad).has_value());
    }
    auto server = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::mlkem768_x25519, true));
    REQUIRE(server->derive(init).has_value());
    const bytes reply(server->public_value().begin(), server->public_value().end());
    CHECK_FALSE(client->derive(byte_span(reply).first(reply.size() - 1)).has_value());
    bytes zero_point = reply;
    std::fill(zero_point.end() - 32, zero_point.end(), 0);
    CHECK_FALSE(client->derive(zero_point).has_value());
    // A changed ciphertext is not refused (ML-KEM rejects implicitly) but
    // gives another secret, so the exchange hash's signature check fails.
    bytes changed = reply;
    changed[5] ^= 1;
    auto k_changed = client->derive(changed);
    REQUIRE(k_changed.has_value());
    auto k_right = client->derive(reply);
    REQUIRE(k_right.has_value());
    CHECK(to_hex(k_changed->span()) != to_hex(k_right->span()));
    CHECK_FALSE(make_mlkem768x25519_initiator_from(counting(0), bytes(31), client_x25519).has_value());
    CHECK_FALSE(make_mlkem768x25519_responder_from(bytes(33), server_x25519).has_value());
}

TEST_CASE("sntrup761x25519: fresh keys agree on a SHA-512 secret; wrong lengths are refused")
{
    for (int i = 0; i < 2; ++i) {
        auto client = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::sntrup761_x25519, false));
        auto server = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::sntrup761_x25519, true));
        CHECK(client->public_value().size() == 1158 + 32);
        auto ks = server->derive(client->public_value());
        REQUIRE(ks.has_value());
        CHECK(server->public_value().size() == 1039 + 32);
        auto kc = client->derive(server->public_value());
        REQUIRE(kc.has_value());
        CHECK(ks->size() == 64);
        CHECK(to_hex(ks->span()) == to_hex(kc->span()));
        bytes changed(server->public_value().begin(), server->public_value().end());
        changed[0] ^= 1;
        auto k_changed = client->derive(changed);
        REQUIRE(k_changed.has_value());
        CHECK(to_hex(k_changed->span()) != to_hex(kc->span()));
        CHECK_FALSE(client->derive(byte_span(changed).first(changed.size() - 1)).has_value());
    }
    auto server = hybrid_or_fail(make_hybrid_kem_agreement(hybrid_kem::sntrup761_x25519, true));
    CHECK_FALSE(server->derive(bytes(1158 + 31, 1)).has_value());
}
