// krl_writer: what it writes, krl.hpp's parser (as strict as OpenSSH's)
// reads back with the same answers; starting from KRLs made by OpenSSH's
// ssh-keygen -k (tests/data/keys/krl, tests/data/certs) it keeps what they
// revoke and adds to it.
#include "common/keys/krl_writer.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/key_lines.hpp"
#include "common/wire.hpp"
#include "key_fixtures.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

using namespace longhaul;
using namespace longhaul::test;

namespace {

constexpr std::uint64_t max_serial = std::numeric_limits<std::uint64_t>::max();

bytes builder_fixture(const std::string& path)
{
    const std::string text = fixture(path);
    REQUIRE_FALSE(text.empty());
    return to_bytes(as_bytes(text));
}

krl reparse(const krl_writer& b)
{
    auto k = parse_krl(b.to_blob());
    REQUIRE(k.has_value());
    return std::move(*k);
}

template <std::size_t N>
std::array<std::uint8_t, N> digest_array(hash_alg alg, byte_span blob)
{
    const bytes d = digest(alg, blob);
    std::array<std::uint8_t, N> out{};
    REQUIRE(d.size() == N);
    std::copy(d.begin(), d.end(), out.begin());
    return out;
}

// The serial subsection types of a KRL's certificate sections.
std::vector<std::uint8_t> serial_subsections(const bytes& file)
{
    std::vector<std::uint8_t> out;
    wire_reader r(byte_span(file).subspan(krl_magic.size()));
    (void)r.u32();
    (void)r.u64();
    (void)r.u64();
    (void)r.u64();
    (void)r.string(file.size());
    (void)r.string(file.size());
    while (r.remaining() > 0) {
        const auto type = r.u8();
        const byte_span body = r.string(file.size());
        REQUIRE(r.ok());
        if (type != 1)
            continue;
        wire_reader s(body);
        (void)s.string(body.size());
        (void)s.string(body.size());
        while (s.remaining() > 0) {
            out.push_back(s.u8());
            (void)s.string(body.size());
            REQUIRE(s.ok());
        }
    }
    return out;
}

void check_same(const krl& a, const krl& b)
{
    CHECK(a.version == b.version);
    CHECK(a.generated_date == b.generated_date);
    CHECK(a.flags == b.flags);
    CHECK(a.comment == b.comment);
    CHECK(a.keys == b.keys);
    CHECK(a.sha1s == b.sha1s);
    CHECK(a.sha256s == b.sha256s);
    REQUIRE(a.authorities.size() == b.authorities.size());
    for (std::size_t i = 0; i < a.authorities.size(); ++i) {
        const auto& x = a.authorities[i];
        const auto& y = b.authorities[i];
        CHECK(x.ca_key == y.ca_key);
        CHECK(x.key_ids == y.key_ids);
        // The same serials, whichever encoding each chose: compared at the
        // edges of every range and bitmap.
        for (const auto* ca : {&x, &y}) {
            for (const auto& r : ca->serial_ranges)
                for (std::uint64_t s : {r.lo - 1, r.lo, r.hi, r.hi == max_serial ? r.hi : r.hi + 1})
                    CHECK_MESSAGE(x.serial_revoked(s) == y.serial_revoked(s), s);
            for (const auto& m : ca->serial_bitmaps)
                for (std::uint64_t s = m.offset; s < m.offset + 8 * m.bits.size() + 1; ++s)
                    CHECK_MESSAGE(x.serial_revoked(s) == y.serial_revoked(s), s);
        }
    }
}

} // namespace

TEST_CASE("krl_writer: an empty KRL is a header only")
{
    krl_writer b;
    b.set_version(3);
    b.set_generated_date(1700000000);
    b.set_comment("nothing");
    const bytes blob = b.to_blob();
    CHECK(starts_with_krl_magic(blob));
    auto k = parse_krl(blob);
    REQUIRE(k.has_value());
    CHECK(k->version == 3);
    CHECK(k->generated_date == 1700000000);
    CHECK(k->comment == "nothing");
    CHECK(k->keys.empty());
    CHECK(k->authorities.empty());
    // magic, format, version, date, flags, reserved, comment "nothing"
    CHECK(blob.size() == 8 + 4 + 8 + 8 + 8 + 4 + 4 + 7);
}

TEST_CASE("krl_writer: serials at range edges, key IDs, any CA")
{
    const bytes ca = fixture_public_key("krl/ca_key.pub").blob();
    krl_writer b;
    REQUIRE(b.add_serials(ca, 1, 1));
    REQUIRE(b.add_serials(ca, 5, 9));
    REQUIRE(b.add_serials(ca, 10, 12)); // adjacent: merged with 5-9
    REQUIRE(b.add_serials(ca, 7, 8));   // inside 5-12
    REQUIRE(b.add_serials(ca, 1000, 1000));
    REQUIRE(b.add_serials(ca, max_serial - 1, max_serial));
    b.add_key_id(ca, "bob");
    b.add_key_id(ca, "alice");
    b.add_key_id(ca, "bob");
    b.add_key_id(ca, "");
    REQUIRE(b.add_serials({}, 77, 77)); // any CA
    b.add_key_id({}, "anyone");
    CHECK(b.add_serials(ca, 0, 5).error() == errc::invalid_argument);
    CHECK(b.add_serials(ca, 6, 5).error() == errc::invalid_argument);

    const krl k = reparse(b);
    REQUIRE(k.authorities.size() == 2);
    const auto& a = k.authorities[0];
    CHECK(a.ca_key == ca);
    for (std::uint64_t s : {1ul, 5ul, 9ul, 10ul, 12ul, 1000ul, max_serial - 1, max_serial})
        CHECK_MESSAGE(a.serial_revoked(s), s);
    for (std::uint64_t s : {0ul, 2ul, 4ul, 13ul, 77ul, 999ul, 1001ul, max_serial - 2})
        CHECK_FALSE_MESSAGE(a.serial_revoked(s), s);
    CHECK(a.key_ids == std::vector<std::string>{"", "alice", "bob"});
    const auto& any = k.authorities[1];
    CHECK(any.ca_key.empty());
    CHECK(any.serial_revoked(77));
    CHECK_FALSE(any.serial_revoked(76));
    CHECK(any.key_id_revoked("anyone"));
}

TEST_CASE("krl_writer: plain keys by blob, SHA-1 and SHA-256, sorted and unique")
{
    const public_key ed = fixture_public_key("ed25519_plain_key.pub");
    const public_key ec = fixture_public_key("ecdsa256_plain_key.pub");
    const public_key rsa = fixture_public_key("rsa2048_plain_key.pub");
    const public_key other = fixture_public_key("rsa3072_plain_key.pub");
    krl_writer b;
    b.add_explicit_key(rsa.blob());
    b.add_explicit_key(ed.blob());
    b.add_explicit_key(rsa.blob());
    b.add_sha1(digest_array<20>(hash_alg::sha1, ec.blob()));
    b.add_sha256(digest_array<32>(hash_alg::sha256, other.blob()));
    b.add_sha256(digest_array<32>(hash_alg::sha256, other.blob()));
    const krl k = reparse(b);
    CHECK(k.keys.size() == 2);
    CHECK(k.sha1s.size() == 1);
    CHECK(k.sha256s.size() == 1);
    CHECK(k.authorities.empty());
    for (const auto* key : {&ed, &ec, &rsa, &other})
        CHECK(k.revokes(*key));
    CHECK_FALSE(k.revokes(fixture_public_key("ecdsa384_plain_key.pub")));
}

TEST_CASE("krl_writer: nearby serials become a bitmap, distant ones a list and ranges")
{
    const bytes ca = fixture_public_key("krl/ca_key.pub").blob();
    krl_writer dense;
    for (std::uint64_t s = 101; s < 2000; s += 3)
        REQUIRE(dense.add_serials(ca, s, s));
    const bytes dense_blob = dense.to_blob();
    CHECK(serial_subsections(dense_blob) == std::vector<std::uint8_t>{0x22});
    CHECK(dense_blob.size() < 400); // 633 serials: a list would take 5 KiB
    const krl k = reparse(dense);
    for (std::uint64_t s = 98; s < 2010; ++s)
        CHECK_MESSAGE(k.authorities.at(0).serial_revoked(s) == (s >= 101 && s < 2000 && (s - 101) % 3 == 0), s);

    krl_writer sparse;
    REQUIRE(sparse.add_serials(ca, 1, 1));
    REQUIRE(sparse.add_serials(ca, 1000000, 1000000));
    REQUIRE(sparse.add_serials(ca, 5000000, 6000000));
    CHECK(serial_subsections(sparse.to_blob()) == std::vector<std::uint8_t>{0x20, 0x21});
    // Many repeats of one serial cost one entry.
    for (int i = 0; i < 5000; ++i)
        REQUIRE(sparse.add_serials(ca, 1, 1));
    CHECK(sparse.contents().authorities.at(0).serial_ranges.size() < 1100);
    CHECK(reparse(sparse).authorities.at(0).serial_ranges.size() == 3);
}

TEST_CASE("krl_writer: KRLs made by OpenSSH's ssh-keygen -k survive a rewrite")
{
    for (const char* name : {"keys/krl/keys.krl", "keys/krl/certs.krl", "keys/krl/updated.krl", "keys/krl/empty.krl",
                             "certs/krl_serial42", "certs/krl_id_rsa_user"}) {
        CAPTURE(name);
        const bytes original = builder_fixture(std::string("../") + name);
        auto parsed = parse_krl(original);
        REQUIRE(parsed.has_value());
        const krl_writer b(*parsed);
        check_same(*parsed, reparse(b));
    }
    // A KRL holding only plain keys comes out byte for byte as OpenSSH
    // wrote it: the same sections in the same order, sorted the same way.
    const bytes keys = builder_fixture("krl/keys.krl");
    CHECK(krl_writer(*parse_krl(keys)).to_blob() == keys);
    const bytes serial42 = builder_fixture("../certs/krl_serial42");
    CHECK(krl_writer(*parse_krl(serial42)).to_blob() == serial42);
}

TEST_CASE("krl_writer: -u adds to a KRL made by OpenSSH")
{
    auto certs = parse_krl(builder_fixture("krl/certs.krl"));
    REQUIRE(certs.has_value());
    const bytes ca = fixture_public_key("krl/ca_key.pub").blob();
    krl_writer b(*certs);
    REQUIRE(b.add_serials(ca, 2, 4));     // joins 1 and 5-9
    REQUIRE(b.add_serials(ca, 101, 101)); // inside the bitmap's span
    b.add_key_id(ca, "carol");
    b.add_explicit_key(fixture_public_key("ed25519_plain_key.pub").blob());
    b.set_version(certs->version + 1);
    const krl k = reparse(b);
    CHECK(k.version == certs->version + 1);
    CHECK(k.generated_date == certs->generated_date);
    REQUIRE(k.authorities.size() == 1);
    const auto& a = k.authorities[0];
    for (std::uint64_t s : {1ul, 2ul, 4ul, 9ul, 32ul, 100ul, 101ul, 102ul, 104ul, 4242ul, 5500000ul, max_serial})
        CHECK_MESSAGE(a.serial_revoked(s), s);
    for (std::uint64_t s : {10ul, 103ul, 105ul, 4241ul})
        CHECK_FALSE_MESSAGE(a.serial_revoked(s), s);
    CHECK(a.key_ids == std::vector<std::string>{"alice@example.com", "bob", "carol"});
    CHECK(k.revokes(fixture_public_key("ed25519_plain_key.pub")));

    // The Debian-made fixtures of tests/data/certs: serial 42 under the
    // Ed25519 CA, key ID "rsa user" under the RSA CA.
    auto serial42 = parse_krl(builder_fixture("../certs/krl_serial42"));
    REQUIRE(serial42.has_value());
    const bytes ed_ca = fixture_public_key("../certs/ca_ed25519.pub").blob();
    const bytes rsa_ca = fixture_public_key("../certs/ca_rsa.pub").blob();
    krl_writer more(*serial42);
    REQUIRE(more.add_serials(ed_ca, 43, 50));
    more.add_key_id(rsa_ca, "rsa user");
    const krl m = reparse(more);
    REQUIRE(m.authorities.size() == 2);
    CHECK(m.authorities[0].ca_key == ed_ca);
    CHECK(m.authorities[0].serial_revoked(42));
    CHECK(m.authorities[0].serial_revoked(50));
    CHECK_FALSE(m.authorities[0].serial_revoked(51));
    CHECK(m.authorities[1].ca_key == rsa_ca);
    CHECK(m.authorities[1].key_id_revoked("rsa user"));
}
