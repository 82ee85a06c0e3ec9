// Known answers for chacha20-poly1305@openssh.com, checked two ways: the
// worked example of draft-ietf-sshm-chacha20-poly1305 (Appendix A), and a
// reference construction composed in this file from raw OpenSSL calls that
// share nothing with the implementation's wrappers.
#include "common/crypto/packet_cipher.hpp"

#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <openssl/evp.h>

#include <random>

using namespace longhaul;

namespace {

std::unique_ptr<packet_cipher> make_chacha(byte_span key)
{
    direction_keys k;
    k.enc_key = secret_bytes(key);
    auto r = make_packet_cipher("chacha20-poly1305@openssh.com", "", k, cipher_direction::seal);
    REQUIRE(r.has_value());
    return std::move(r).value();
}

// ChaCha20 with DJB's layout written out by hand: 64-bit little-endian block
// counter, then the 64-bit nonce (the big-endian sequence number).
bytes reference_chacha(byte_span key32, std::uint64_t counter, std::uint32_t seq, byte_span in)
{
    unsigned char iv[16] = {};
    for (int i = 0; i < 8; ++i)
        iv[i] = static_cast<unsigned char>(counter >> (8 * i));
    for (int i = 0; i < 4; ++i)
        iv[15 - i] = static_cast<unsigned char>(seq >> (8 * i));
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    REQUIRE(ctx != nullptr);
    bytes out(in.size() + 64);
    int n = 0;
    REQUIRE(EVP_EncryptInit_ex(ctx, EVP_chacha20(), nullptr, key32.data(), iv) == 1);
    REQUIRE(EVP_EncryptUpdate(ctx, out.data(), &n, in.data(), int(in.size())) == 1);
    EVP_CIPHER_CTX_free(ctx);
    out.resize(in.size());
    return out;
}

bytes reference_poly1305(byte_span key32, byte_span msg)
{
    unsigned char tag[16];
    std::size_t n = 0;
    REQUIRE(EVP_Q_mac(nullptr, "POLY1305", nullptr, nullptr, nullptr, key32.data(), key32.size(), msg.data(),
                      msg.size(), tag, sizeof tag, &n) != nullptr);
    REQUIRE(n == 16);
    return bytes(tag, tag + 16);
}

// PROTOCOL.chacha20poly1305, composed from the reference pieces.
void reference_seal(byte_span key64, std::uint32_t seq, bytes& packet, bytes& tag)
{
    const byte_span k2 = key64.first(32);
    const byte_span k1 = key64.subspan(32);
    const bytes enc_len = reference_chacha(k1, 0, seq, byte_span(packet).first(4));
    const bytes poly_key = reference_chacha(k2, 0, seq, bytes(32, 0));
    const bytes body = reference_chacha(k2, 1, seq, byte_span(packet).subspan(4));
    std::copy(enc_len.begin(), enc_len.end(), packet.begin());
    std::copy(body.begin(), body.end(), packet.begin() + 4);
    tag = reference_poly1305(poly_key, packet);
}

} // namespace

TEST_CASE("chacha20-poly1305@openssh.com: draft-ietf-sshm-chacha20-poly1305 worked example")
{
    const bytes key = from_hex("8bbff6855fc102338c373e73aac0c914f076a905b2444a32eecaffeae22becc5"
                               "e9b7a7a5825a8249346ec1c28301cf394543fc7569887d76e168f37562ac0740");
    const bytes body = from_hex("065e00000000000000384c6f72656d20697073756d20646f6c6f722073697420"
                                "616d65742c20636f6e7365637465747572206164697069736963696e6720656c"
                                "69744e43e804dc6c");
    bytes packet = from_hex("00000048");
    packet.insert(packet.end(), body.begin(), body.end());
    REQUIRE(packet.size() == 4 + 0x48);
    const bytes plain = packet;

    auto pc = make_chacha(key);
    const packet_position pos{7, 0, 0};
    bytes tag(16);
    pc->seal(pos, packet, tag);
    CHECK(to_hex(byte_span(packet).first(4)) == "2c3ecce4");
    CHECK(to_hex(byte_span(packet).subspan(4)) == "a5bc05895bf07a7ba956b6c68829ac7c83b780b7000ecde745afc705bbc378ce"
                                                  "03a280236b87b53bed5839662302b164b6286a48cd1e097138e3cb909b8b2b82"
                                                  "9dd18d2a35ff82d9");
    CHECK(to_hex(tag) == "95349e855bf02c298ef775f2d1a7e8b8");

    auto opener = make_chacha(key);
    CHECK(opener->peek_length(pos, byte_span(packet).first(4)) == 0x48);
    REQUIRE(opener->open(pos, packet, tag).has_value());
    CHECK(packet == plain);
}

TEST_CASE("chacha20-poly1305@openssh.com: matches a construction from raw EVP calls")
{
    std::mt19937 rng(99);
    bytes key(64);
    for (auto& b : key)
        b = std::uint8_t(rng());
    auto pc = make_chacha(key);
    for (std::size_t size : {8u, 16u, 56u, 64u, 120u, 1024u, 32768u + 8u}) {
        for (std::uint32_t seq : {0u, 1u, 0x01020304u, 0xffffffffu}) {
            CAPTURE(size);
            CAPTURE(seq);
            bytes packet(4 + size);
            for (auto& b : packet)
                b = std::uint8_t(rng());
            store_u32(packet.data(), std::uint32_t(size));
            bytes expect = packet;
            bytes expect_tag;
            reference_seal(key, seq, expect, expect_tag);

            bytes tag(16);
            pc->seal({seq, 0, 0}, packet, tag);
            CHECK(to_hex(packet) == to_hex(expect));
            CHECK(to_hex(tag) == to_hex(expect_tag));
        }
    }
}

TEST_CASE("chacha20-poly1305@openssh.com: the length key is the second half of the key material")
{
    // Changing only the last 32 bytes changes only the encrypted length (and so the tag).
    bytes key(64, 0x11);
    bytes other = key;
    other[63] ^= 1;
    auto a = make_chacha(key);
    auto b = make_chacha(other);
    bytes pa(4 + 32, 0x22);
    bytes pb = pa;
    bytes ta(16), tb(16);
    a->seal({5, 0, 0}, pa, ta);
    b->seal({5, 0, 0}, pb, tb);
    CHECK(byte_span(pa).first(4).size() == 4);
    CHECK_FALSE(std::equal(pa.begin(), pa.begin() + 4, pb.begin()));
    CHECK(std::equal(pa.begin() + 4, pa.end(), pb.begin() + 4));
    CHECK(ta != tb);
}

TEST_CASE("chacha20-poly1305@openssh.com: peeking at one packet and opening another stays correct")
{
    const bytes key(64, 0x5c);
    auto sealer = make_chacha(key);
    auto opener = make_chacha(key);
    bytes a(4 + 24, 0x01), b(4 + 40, 0x02);
    store_u32(a.data(), 24);
    store_u32(b.data(), 40);
    const bytes plain_a = a, plain_b = b;
    bytes ta(16), tb(16);
    sealer->seal({7, 0, 0}, a, ta);
    sealer->seal({8, 0, 0}, b, tb);

    // Peek at 8, open 7, then open 8 without peeking again, then peek at 7.
    CHECK(opener->peek_length({8, 0, 0}, byte_span(b).first(4)) == 40);
    REQUIRE(opener->open({7, 0, 0}, a, ta).has_value());
    CHECK(a == plain_a);
    REQUIRE(opener->open({8, 0, 0}, b, tb).has_value());
    CHECK(b == plain_b);
    sealer->seal({7, 0, 0}, a, ta);
    CHECK(opener->peek_length({7, 0, 0}, byte_span(a).first(4)) == 24);
    CHECK(opener->peek_length({7, 0, 0}, byte_span(a).first(4)) == 24);
}

TEST_CASE("chacha20-poly1305@openssh.com: open_body opens all but the length field, and authenticates as open does")
{
    const bytes key(64, 0x3a);
    auto sealer = make_chacha(key);
    auto opener = make_chacha(key);
    bytes p(4 + 32, 0x11);
    store_u32(p.data(), 32);
    const bytes plain = p;
    bytes tag(16);
    sealer->seal({9, 0, 0}, p, tag);
    const bytes sealed = p;

    // The length field stays as received; everything after it is plaintext.
    bytes body = sealed;
    REQUIRE(opener->open_body({9, 0, 0}, body, tag).has_value());
    CHECK(std::equal(body.begin(), body.begin() + 4, sealed.begin()));
    CHECK(std::equal(body.begin() + 4, body.end(), plain.begin() + 4));

    // A tampered length fails authentication here too.
    bytes bad = sealed;
    bad[0] ^= 1;
    auto r = opener->open_body({9, 0, 0}, bad, tag);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == errc::mac_mismatch);

    // open() still restores the length field.
    bytes whole = sealed;
    REQUIRE(opener->open({9, 0, 0}, whole, tag).has_value());
    CHECK(whole == plain);
}
