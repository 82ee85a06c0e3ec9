#include "common/crypto/packet_cipher.hpp"

#include "common/crypto/primitives.hpp"
#include "common/crypto/umac.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <openssl/evp.h>

#include <random>
#include <string>

using namespace longhaul;

namespace {

struct combo {
    std::string cipher;
    std::string mac; // empty for AEADs
    bool authenticated() const { return !mac.empty() ? mac != "none" : cipher != "none"; }
    std::string label() const { return cipher + " + " + (mac.empty() ? "(aead)" : mac); }
};

// Every cipher with every MAC, "none" on either side included.
std::vector<combo> all_combos()
{
    std::vector<combo> out;
    std::vector<std::string> macs(supported_macs().begin(), supported_macs().end());
    macs.push_back("none");
    std::vector<std::string> ciphers(supported_ciphers().begin(), supported_ciphers().end());
    ciphers.push_back("none");
    for (const auto& c : ciphers) {
        if (find_cipher(c)->aead) {
            out.push_back({c, ""});
            continue;
        }
        for (const auto& m : macs)
            if (!(c == "none" && m == "none"))
                out.push_back({c, m});
    }
    return out;
}

secret_bytes pattern(std::size_t n, std::uint8_t seed)
{
    secret_bytes s(n);
    for (std::size_t i = 0; i < n; ++i)
        s.data()[i] = std::uint8_t(seed + 7 * i);
    return s;
}

direction_keys make_keys(const combo& c, std::uint8_t seed)
{
    const cipher_info* ci = find_cipher(c.cipher);
    const mac_info* mi = c.mac.empty() ? nullptr : find_mac(c.mac);
    direction_keys k;
    k.enc_key = pattern(ci->key_size, seed);
    k.iv = pattern(ci->iv_size, std::uint8_t(seed + 1));
    k.mac_key = pattern(mi ? mi->key_size : 0, std::uint8_t(seed + 2));
    return k;
}

std::unique_ptr<packet_cipher> make(const combo& c, std::uint8_t seed = 1)
{
    auto r = make_packet_cipher(c.cipher, c.mac, make_keys(c, seed), cipher_direction::seal);
    REQUIRE(r.has_value());
    return std::move(r).value();
}

// A plaintext packet (uint32 length, padding length, payload, padding)
// padded the way the transport will pad it for this cipher.
bytes plain_packet(const packet_cipher& c, std::size_t payload, std::uint8_t salt)
{
    const std::size_t block = c.block_size();
    const std::size_t base = (c.length_excluded_from_padding() ? 1 : 5) + payload;
    std::size_t pad = block - base % block;
    if (pad < 4)
        pad += block;
    bytes p(5 + payload + pad);
    store_u32(p.data(), std::uint32_t(1 + payload + pad));
    p[4] = std::uint8_t(pad);
    for (std::size_t i = 5; i < p.size(); ++i)
        p[i] = std::uint8_t(salt + i * 13);
    return p;
}

struct sealed {
    bytes packet;
    bytes tag;
};

sealed seal_copy(packet_cipher& c, const packet_position& pos, const bytes& plain)
{
    sealed s{plain, bytes(c.tag_size())};
    c.seal(pos, s.packet, s.tag);
    return s;
}

packet_position next(const packet_cipher& c, packet_position pos, std::size_t packet_size)
{
    pos.seq += 1;
    pos.index += 1;
    pos.block_offset += c.blocks_used(packet_size);
    return pos;
}

} // namespace

TEST_CASE("packet_cipher: algorithm tables")
{
    const std::vector<std::string_view> ciphers{"chacha20-poly1305@openssh.com", "aes128-ctr", "aes192-ctr",
                                                "aes256-ctr", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"};
    // OpenSSH's default order (umac first, etm before classic).
    const std::vector<std::string_view> macs{"umac-64-etm@openssh.com",       "umac-128-etm@openssh.com",
                                             "hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com",
                                             "hmac-sha1-etm@openssh.com",     "umac-64@openssh.com",
                                             "umac-128@openssh.com",          "hmac-sha2-256",
                                             "hmac-sha2-512",                 "hmac-sha1"};
    CHECK(supported_ciphers() == ciphers);
    CHECK(supported_macs() == macs);
    REQUIRE(find_cipher("none") != nullptr);
    REQUIRE(find_mac("none") != nullptr);
    CHECK(find_cipher("aes128-cbc") == nullptr);
    CHECK(find_mac("hmac-md5") == nullptr);
    CHECK(find_cipher("") == nullptr);

    const cipher_info* cc = find_cipher("chacha20-poly1305@openssh.com");
    CHECK(cc->key_size == 64);
    CHECK(cc->block_size == 8);
    CHECK(cc->tag_size == 16);
    CHECK(cc->aead);
    const cipher_info* gcm = find_cipher("aes256-gcm@openssh.com");
    CHECK(gcm->key_size == 32);
    CHECK(gcm->iv_size == 12);
    const mac_info* m = find_mac("hmac-sha2-512-etm@openssh.com");
    CHECK(m->key_size == 64);
    CHECK(m->mac_size == 64);
    CHECK(m->etm);
    CHECK_FALSE(find_mac("hmac-sha1")->etm);
    for (const char* name : {"umac-64@openssh.com", "umac-64-etm@openssh.com"}) {
        CAPTURE(name);
        CHECK(find_mac(name)->key_size == 16);
        CHECK(find_mac(name)->mac_size == 8);
    }
    CHECK(find_mac("umac-128-etm@openssh.com")->mac_size == 16);
    CHECK(find_mac("umac-128-etm@openssh.com")->etm);
    CHECK_FALSE(find_mac("umac-128@openssh.com")->etm);
    CHECK(find_mac("umac-32@openssh.com") == nullptr);
}

TEST_CASE("packet_cipher: factory refuses unknown names and wrong key sizes")
{
    direction_keys k;
    k.enc_key = pattern(16, 1);
    k.iv = pattern(16, 2);
    k.mac_key = pattern(32, 3);
    CHECK(make_packet_cipher("aes128-cbc", "hmac-sha2-256", k, cipher_direction::seal).error() == errc::unsupported);
    CHECK(make_packet_cipher("aes128-ctr", "umac-96@openssh.com", k, cipher_direction::seal).error() ==
          errc::unsupported);
    // UMAC keys are 16 bytes, whatever the tag length.
    for (const char* umac : {"umac-64@openssh.com", "umac-128-etm@openssh.com"}) {
        CAPTURE(umac);
        CHECK(make_packet_cipher("aes128-ctr", umac, k, cipher_direction::seal).error() == errc::invalid_argument);
        k.mac_key = pattern(15, 3);
        CHECK(make_packet_cipher("aes128-ctr", umac, k, cipher_direction::seal).error() == errc::invalid_argument);
        k.mac_key = pattern(16, 3);
        CHECK(make_packet_cipher("aes128-ctr", umac, k, cipher_direction::seal).has_value());
        k.mac_key = pattern(32, 3);
    }
    CHECK(make_packet_cipher("aes128-ctr", "hmac-sha2-256", k, cipher_direction::seal).has_value());
    CHECK(make_packet_cipher("aes256-ctr", "hmac-sha2-256", k, cipher_direction::seal).error() ==
          errc::invalid_argument);
    CHECK(make_packet_cipher("aes128-ctr", "hmac-sha2-512", k, cipher_direction::seal).error() ==
          errc::invalid_argument);
    k.iv = pattern(12, 2);
    CHECK(make_packet_cipher("aes128-gcm@openssh.com", "", k, cipher_direction::open).has_value());
    CHECK(make_packet_cipher("aes256-gcm@openssh.com", "", k, cipher_direction::open).error() ==
          errc::invalid_argument);
    k.enc_key = pattern(64, 1);
    k.iv = secret_bytes();
    // The MAC name is ignored for AEADs.
    CHECK(make_packet_cipher("chacha20-poly1305@openssh.com", "whatever", k, cipher_direction::open).has_value());
    k.enc_key = secret_bytes();
    k.mac_key = secret_bytes();
    auto none = make_packet_cipher("none", "none", k, cipher_direction::open);
    REQUIRE(none.has_value());
    CHECK((*none)->tag_size() == 0);
}

TEST_CASE("packet_cipher: geometry per family")
{
    auto cc = make({"chacha20-poly1305@openssh.com", ""});
    CHECK(cc->length_prefix_size() == 4);
    CHECK(cc->block_size() == 8);
    CHECK(cc->tag_size() == 16);
    CHECK(cc->length_excluded_from_padding());
    CHECK(cc->blocks_used(1024) == 0);

    auto gcm = make({"aes128-gcm@openssh.com", ""});
    CHECK(gcm->length_prefix_size() == 4);
    CHECK(gcm->block_size() == 16);
    CHECK(gcm->tag_size() == 16);
    CHECK(gcm->length_excluded_from_padding());

    auto ctr = make({"aes256-ctr", "hmac-sha2-512"});
    CHECK(ctr->length_prefix_size() == 16);
    CHECK(ctr->block_size() == 16);
    CHECK(ctr->tag_size() == 64);
    CHECK_FALSE(ctr->length_excluded_from_padding());
    CHECK(ctr->blocks_used(32) == 2);
    CHECK(ctr->blocks_used(32768) == 2048);

    auto etm = make({"aes128-ctr", "hmac-sha1-etm@openssh.com"});
    CHECK(etm->length_prefix_size() == 4);
    CHECK(etm->tag_size() == 20);
    CHECK(etm->length_excluded_from_padding());
    CHECK(etm->blocks_used(4 + 32) == 2);

    auto null = make_null_packet_cipher();
    CHECK(null->length_prefix_size() == 4);
    CHECK(null->block_size() == 8);
    CHECK(null->tag_size() == 0);
    CHECK_FALSE(null->length_excluded_from_padding());
    bytes p = plain_packet(*null, 10, 1);
    const bytes orig = p;
    null->seal({}, p, {});
    CHECK(p == orig);
    CHECK(null->peek_length({}, p) == load_u32(orig.data()));
    CHECK(null->open({}, p, {}).has_value());
    CHECK(null->clone()->block_size() == 8);
}

TEST_CASE("packet_cipher: seal then open round-trips every cipher x MAC, size and position")
{
    const std::size_t payloads[] = {0, 1, 2, 3, 7, 8, 11, 15, 16, 17, 31, 32, 33, 100, 255, 1000, 4095, 32768, 35000};
    const packet_position positions[] = {
        {0, 0, 0},
        {3, 3, 77},
        {0xffffffffu, 0xffffffffull, 0xfffffffffffffff0ull}, // seq about to wrap, CTR low half too
        {0x12345678u, 0xfffffffffffffffeull, 0xffffffffffffffffull},
    };
    for (const auto& c : all_combos()) {
        CAPTURE(c.label());
        auto sealer = make(c);
        auto opener = make(c);
        for (std::size_t payload : payloads) {
            for (const auto& pos : positions) {
                CAPTURE(payload);
                CAPTURE(pos.seq);
                const bytes plain = plain_packet(*sealer, payload, std::uint8_t(payload));
                sealed s = seal_copy(*sealer, pos, plain);
                if (c.cipher != "none")
                    CHECK(s.packet != plain);

                const bytes prefix(s.packet.begin(), s.packet.begin() + opener->length_prefix_size());
                CHECK(opener->peek_length(pos, prefix) == plain.size() - 4);
                CHECK(std::equal(prefix.begin(), prefix.end(), s.packet.begin()));

                // What the transport calls: everything after the length field.
                bytes body = s.packet;
                REQUIRE(opener->open_body(pos, body, s.tag).has_value());
                CHECK(std::equal(body.begin() + 4, body.end(), plain.begin() + 4));

                REQUIRE(opener->open(pos, s.packet, s.tag).has_value());
                CHECK(s.packet == plain);
            }
        }
    }
}

TEST_CASE("packet_cipher: a flipped bit anywhere, or the wrong sequence number, fails authentication")
{
    for (const auto& c : all_combos()) {
        if (!c.authenticated())
            continue;
        CAPTURE(c.label());
        auto sealer = make(c);
        auto opener = make(c);
        const packet_position pos{41, 41, 1000};
        const bytes plain = plain_packet(*sealer, 37, 9);
        const sealed s = seal_copy(*sealer, pos, plain);
        const std::size_t total = s.packet.size() + s.tag.size();
        for (std::size_t bit = 0; bit < total * 8; ++bit) {
            CAPTURE(bit);
            sealed t = s;
            const std::size_t byte = bit / 8;
            auto& target = byte < t.packet.size() ? t.packet[byte] : t.tag[byte - t.packet.size()];
            target ^= std::uint8_t(1u << (bit % 8));
            CHECK(opener->open(pos, t.packet, t.tag).error() == errc::mac_mismatch);
        }
        sealed t = s;
        packet_position wrong = pos;
        wrong.seq += 1;
        wrong.index += 1;
        CHECK(opener->open(wrong, t.packet, t.tag).error() == errc::mac_mismatch);
        // Untouched, it still opens: failures leave the opener usable.
        t = s;
        CHECK(opener->open(pos, t.packet, t.tag).has_value());
    }
}

TEST_CASE("packet_cipher: positions are independent, so packets seal the same in any order")
{
    const std::size_t payloads[] = {5, 300, 32768, 17, 64, 1, 4000, 90};
    for (const auto& c : all_combos()) {
        CAPTURE(c.label());
        auto in_order = make(c);
        std::vector<packet_position> where;
        std::vector<bytes> plains;
        std::vector<sealed> expected;
        packet_position pos{0xfffffffdu, 5, 0xfffffffffffffffdull}; // crosses seq and CTR carries
        for (std::size_t i = 0; i < std::size(payloads); ++i) {
            plains.push_back(plain_packet(*in_order, payloads[i], std::uint8_t(i)));
            where.push_back(pos);
            expected.push_back(seal_copy(*in_order, pos, plains.back()));
            pos = next(*in_order, pos, plains.back().size());
        }
        auto reversed = make(c);
        for (std::size_t i = std::size(payloads); i-- > 0;) {
            CAPTURE(i);
            sealed s = seal_copy(*reversed, where[i], plains[i]);
            CHECK(s.packet == expected[i].packet);
            CHECK(s.tag == expected[i].tag);
        }
        // And they open out of order too.
        auto opener = make(c);
        for (std::size_t i : {3u, 0u, 7u, 1u, 6u, 2u, 5u, 4u}) {
            sealed s = expected[i];
            REQUIRE(opener->open(where[i], s.packet, s.tag).has_value());
            CHECK(s.packet == plains[i]);
        }
    }
}

TEST_CASE("packet_cipher: CTR packets form one continuous keystream, as OpenSSH streams it")
{
    for (const char* mac : {"hmac-sha2-256", "hmac-sha2-256-etm@openssh.com"}) {
        CAPTURE(mac);
        const combo c{"aes192-ctr", mac};
        const direction_keys keys = make_keys(c, 5);
        auto pc = make(c, 5);
        const std::size_t skip = pc->length_excluded_from_padding() ? 4 : 0;
        bytes plain_stream;
        bytes cipher_stream;
        packet_position pos{};
        for (std::size_t payload : {3u, 40u, 1000u, 20u}) {
            const bytes plain = plain_packet(*pc, payload, 3);
            const sealed s = seal_copy(*pc, pos, plain);
            plain_stream.insert(plain_stream.end(), plain.begin() + skip, plain.end());
            cipher_stream.insert(cipher_stream.end(), s.packet.begin() + skip, s.packet.end());
            pos = next(*pc, pos, plain.size());
        }
        aes_ctr ctr(keys.enc_key);
        bytes expect(plain_stream.size());
        REQUIRE(ctr.set_iv(keys.iv.data()));
        REQUIRE(ctr.apply(plain_stream, expect.data()));
        CHECK(to_hex(cipher_stream) == to_hex(expect));
        CHECK(pos.block_offset * 16 == plain_stream.size());
    }
}

TEST_CASE("packet_cipher: UMAC covers the packet alone, with the sequence number as its nonce")
{
    // OpenSSH PROTOCOL: UMAC's nonce is the 64-bit big-endian sequence
    // number, and no uint32 seq precedes the data as it does for HMAC. The
    // MAC input is the plaintext packet (classic) or length || ciphertext (etm).
    for (const char* mac : {"umac-64@openssh.com", "umac-128@openssh.com", "umac-64-etm@openssh.com",
                            "umac-128-etm@openssh.com"}) {
        CAPTURE(mac);
        const combo c{"aes128-ctr", mac};
        const direction_keys keys = make_keys(c, 21);
        auto pc = make(c, 21);
        const bool etm = find_mac(mac)->etm;
        umac raw(keys.mac_key, find_mac(mac)->mac_size);
        CHECK(pc->tag_size() == raw.size());
        CHECK(pc->length_excluded_from_padding() == etm);
        // Consecutive, repeated and wrapping sequence numbers (UMAC-64's pad
        // is one half of an AES block per pair of nonces).
        for (std::uint32_t seq : {0u, 1u, 2u, 3u, 2u, 1000u, 1001u, 0xfffffffeu, 0xffffffffu}) {
            CAPTURE(seq);
            const bytes plain = plain_packet(*pc, 61, std::uint8_t(seq));
            const packet_position pos{seq, seq, 3 * std::uint64_t(seq)};
            const sealed s = seal_copy(*pc, pos, plain);
            bytes want(raw.size());
            raw.begin();
            raw.update(etm ? byte_span(s.packet) : byte_span(plain));
            REQUIRE(raw.finish(std::uint64_t(seq), want.data()));
            CHECK(to_hex(s.tag) == to_hex(want));

            // The tag of the neighbouring nonce (the other half of the same
            // pad block) and a tag with one bit flipped are both refused.
            auto opener = make(c, 21);
            packet_position other = pos;
            other.seq ^= 1;
            sealed t = s;
            CHECK(opener->open(other, t.packet, t.tag).error() == errc::mac_mismatch);
            t = s;
            t.tag.back() ^= 0x80;
            CHECK(opener->open(pos, t.packet, t.tag).error() == errc::mac_mismatch);
            t = s;
            REQUIRE(opener->open(pos, t.packet, t.tag).has_value());
            CHECK(t.packet == plain);
        }
    }
}

TEST_CASE("packet_cipher: AES-GCM nonce is the fixed field and the invocation counter plus index")
{
    const combo c{"aes256-gcm@openssh.com", ""};
    direction_keys keys = make_keys(c, 9);
    // Counter one below the wrap: index 1 must use counter 0.
    for (int i = 4; i < 12; ++i)
        keys.iv.data()[i] = 0xff;
    auto r = make_packet_cipher(c.cipher, "", keys, cipher_direction::seal);
    REQUIRE(r.has_value());
    auto& pc = *r;
    aes_gcm raw(keys.enc_key);
    for (std::uint64_t index : {0ull, 1ull, 2ull, 1000ull}) {
        CAPTURE(index);
        const bytes plain = plain_packet(*pc, 50, 1);
        const sealed s = seal_copy(*pc, {0, index, 0}, plain);
        std::uint8_t nonce[12];
        std::copy(keys.iv.data(), keys.iv.data() + 4, nonce);
        store_u64(nonce + 4, 0xffffffffffffffffull + index);
        bytes expect = plain;
        std::uint8_t tag[16];
        REQUIRE(raw.seal(nonce, byte_span(plain).first(4), mutable_byte_span(expect).subspan(4), tag));
        CHECK(s.packet == expect);
        CHECK(to_hex(s.tag) == to_hex({tag, 16}));
        // The sequence number plays no part.
        CHECK(seal_copy(*pc, {12345, index, 99}, plain).packet == s.packet);
    }
}

TEST_CASE("packet_cipher: clone() seals identically and lives on its own")
{
    for (const auto& c : all_combos()) {
        CAPTURE(c.label());
        auto original = make(c);
        auto copy = original->clone();
        const bytes plain = plain_packet(*original, 200, 4);
        const packet_position pos{7, 7, 70};
        const sealed a = seal_copy(*original, pos, plain);
        original.reset();
        const sealed b = seal_copy(*copy, pos, plain);
        CHECK(a.packet == b.packet);
        CHECK(a.tag == b.tag);
        auto grandchild = copy->clone();
        sealed d = b;
        REQUIRE(grandchild->open(pos, d.packet, d.tag).has_value());
        CHECK(d.packet == plain);
    }
}

TEST_CASE("packet_cipher: open() and peek_length() take arbitrary bytes safely")
{
    std::mt19937 rng(1234);
    for (const auto& c : all_combos()) {
        CAPTURE(c.label());
        auto pc = make(c);
        for (int round = 0; round < 200; ++round) {
            bytes packet(rng() % 300);
            for (auto& b : packet)
                b = std::uint8_t(rng());
            bytes tag(pc->tag_size());
            for (auto& b : tag)
                b = std::uint8_t(rng());
            const packet_position pos{std::uint32_t(rng()), rng(), rng()};
            if (packet.size() >= pc->length_prefix_size())
                (void)pc->peek_length(pos, byte_span(packet).first(pc->length_prefix_size()));
            CHECK(pc->peek_length(pos, byte_span(packet).first(std::min<std::size_t>(packet.size(), 3))) == 0);
            auto r = pc->open(pos, packet, tag);
            if (packet.size() < 4)
                CHECK(r.error() == errc::invalid_argument);
            else if (c.authenticated())
                CHECK(r.error() == errc::mac_mismatch);
            else
                CHECK(r.has_value());
        }
        // A tag of the wrong length is refused, not read past.
        bytes packet = plain_packet(*pc, 10, 1);
        bytes long_tag(pc->tag_size() + 1);
        CHECK(pc->open({}, packet, long_tag).error() == errc::invalid_argument);
        if (pc->tag_size() > 0)
            CHECK(pc->open({}, packet, byte_span(long_tag).first(pc->tag_size() - 1)).error() ==
                  errc::invalid_argument);
    }
}

TEST_CASE("packet_cipher: seal() refuses spans too small to hold the packet or tag")
{
    auto pc = make({"aes128-gcm@openssh.com", ""});
    bytes packet(3);
    bytes tag(16);
    CHECK_THROWS_AS(pc->seal({}, packet, tag), std::invalid_argument);
    packet.resize(32);
    tag.resize(15);
    CHECK_THROWS_AS(pc->seal({}, packet, tag), std::invalid_argument);
}
