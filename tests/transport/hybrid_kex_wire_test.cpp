// mlkem768x25519-sha256 and sntrup761x25519-sha512 on the wire: the
// messages' layout and the exchange hash recomputed here from what crossed,
// with K as a string (not an mpint, which Longhaul talking to itself would
// not notice: both ends would agree).
#include "common/transport/key_exchange.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/private_key.hpp"
#include "common/transport/algorithms.hpp"
#include "common/transport/messages.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

struct hybrid_case {
    const char* name;
    std::size_t public_key, ciphertext, k;
    hash_alg hash;
};

void check_wire(const hybrid_case& hc)
{
    CAPTURE(hc.name);
    const kex_method* method = find_kex_method(hc.name);
    REQUIRE(method != nullptr);
    auto host = private_key::generate(key_type::ed25519);
    REQUIRE(host.has_value());
    kex_context ctx;
    ctx.v_c = "SSH-2.0-client";
    ctx.v_s = "SSH-2.0-server";
    ctx.i_c = bytes{20, 1, 2, 3};
    ctx.i_s = bytes{20, 4, 5, 6};
    ctx.host_key_algorithm = "ssh-ed25519";
    auto client = key_exchange::client(*method, ctx);
    auto server = key_exchange::server(*method, ctx, *host, {});
    REQUIRE(client.has_value());
    REQUIRE(server.has_value());

    std::vector<bytes> init, reply, none;
    REQUIRE((*client)->start(init).has_value());
    REQUIRE(init.size() == 1);
    auto s = (*server)->handle(init[0], reply);
    REQUIRE(s.has_value());
    CHECK(*s);
    REQUIRE(reply.size() == 1);
    auto c = (*client)->handle(reply[0], none);
    REQUIRE(c.has_value());
    CHECK(*c);

    // SSH_MSG_KEX_HYBRID_INIT (30): string C_INIT.
    wire_reader ri(init[0]);
    CHECK(ri.u8() == msg::kexdh_init);
    const auto c_init = ri.string(4096);
    CHECK(ri.finish());
    CHECK(c_init.size() == hc.public_key + 32);
    // SSH_MSG_KEX_HYBRID_REPLY (31): string K_S, string S_REPLY, string signature.
    wire_reader rr(reply[0]);
    CHECK(rr.u8() == msg::kexdh_reply);
    const auto k_s = rr.string(4096);
    const auto s_reply = rr.string(4096);
    (void)rr.string(4096);
    CHECK(rr.finish());
    CHECK(s_reply.size() == hc.ciphertext + 32);

    // Both ends hold K as string(32 bytes): that encoding is what the key
    // derivation hashes.
    const auto& kc = (*client)->outcome().shared_secret;
    const auto& ks = (*server)->outcome().shared_secret;
    REQUIRE(kc.size() == 4 + hc.k);
    CHECK(to_hex(kc.span()) == to_hex(ks.span()));
    bytes length_prefix;
    wire_writer(length_prefix).u32(static_cast<std::uint32_t>(hc.k));
    CHECK(to_hex(kc.span().first(4)) == to_hex(length_prefix));

    // H = SHA-256(string V_C, V_S, I_C, I_S, K_S, C_INIT, S_REPLY, string K).
    bytes h_in;
    wire_writer w(h_in);
    w.string(ctx.v_c).string(ctx.v_s).string(ctx.i_c).string(ctx.i_s).string(k_s).string(c_init).string(s_reply);
    w.raw(kc.span());
    const bytes h = digest(hc.hash, h_in);
    CHECK(to_hex((*client)->outcome().exchange_hash) == to_hex(h));
    CHECK(to_hex((*server)->outcome().exchange_hash) == to_hex(h));
    // As an mpint K reads the same only when its first byte is 0x01-0x7f
    // (an mpint drops a leading zero and puts a zero before a high bit);
    // otherwise the hash must differ: K went in as a string.
    bytes as_mpint;
    wire_writer(as_mpint).mpint(kc.span().subspan(4));
    bytes other;
    wire_writer wo(other);
    wo.string(ctx.v_c).string(ctx.v_s).string(ctx.i_c).string(ctx.i_s).string(k_s).string(c_init).string(s_reply);
    wo.raw(as_mpint);
    if (as_mpint != bytes(kc.span().begin(), kc.span().end()))
        CHECK(to_hex(digest(hc.hash, other)) != to_hex(h));
}

} // namespace

TEST_CASE("hybrid kex: C_INIT and S_REPLY are strings, K a string in H and in the key derivation")
{
    check_wire({"mlkem768x25519-sha256", 1184, 1088, 32, hash_alg::sha256});
    check_wire({"sntrup761x25519-sha512", 1158, 1039, 64, hash_alg::sha512});
}

TEST_CASE("hybrid kex: a C_INIT or S_REPLY of the wrong length ends the exchange")
{
    const kex_method* method = find_kex_method("mlkem768x25519-sha256");
    REQUIRE(method != nullptr);
    auto host = private_key::generate(key_type::ed25519);
    REQUIRE(host.has_value());
    kex_context ctx;
    ctx.host_key_algorithm = "ssh-ed25519";
    for (std::size_t len : {std::size_t{0}, std::size_t{32}, std::size_t{1215}, std::size_t{1217}, std::size_t{2049}}) {
        auto server = key_exchange::server(*method, ctx, *host, {});
        REQUIRE(server.has_value());
        bytes m;
        wire_writer(m).u8(msg::kexdh_init).string(bytes(len, 7));
        std::vector<bytes> out;
        CHECK_FALSE((*server)->handle(m, out).has_value());
        CHECK(out.empty());
    }
    auto client = key_exchange::client(*method, ctx);
    REQUIRE(client.has_value());
    std::vector<bytes> init;
    REQUIRE((*client)->start(init).has_value());
    bytes m;
    wire_writer(m).u8(msg::kexdh_reply).string(host->public_part().blob()).string(bytes(1119, 1)).string(bytes(8, 0));
    std::vector<bytes> out;
    CHECK_FALSE((*client)->handle(m, out).has_value());
}
