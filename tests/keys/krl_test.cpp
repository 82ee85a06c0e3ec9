#include "common/keys/krl.hpp"

#include "common/keys/key_lines.hpp"
#include "common/wire.hpp"
#include "key_fixtures.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <ctime>
#include <limits>
#include <set>

using namespace longhaul;
using namespace longhaul::test;

namespace {

// The KRLs of tests/data/keys/krl, made by OpenSSH's ssh-keygen -k (see
// the README and make_krl_fixtures.sh there).
bytes krl_fixture(std::string_view name)
{
    const auto text = fixture("krl/" + std::string(name));
    REQUIRE_FALSE(text.empty());
    return to_bytes(as_bytes(text));
}

// The six plain keys the fixtures revoke (or not), by fixture name.
const char* const all_keys[] = {"ed25519_plain_key.pub", "ecdsa256_plain_key.pub", "ecdsa384_plain_key.pub",
                                "ecdsa521_plain_key.pub", "rsa2048_plain_key.pub", "rsa3072_plain_key.pub"};

std::set<std::string> revoked_by(const krl& k)
{
    std::set<std::string> out;
    for (const char* name : all_keys)
        if (k.revokes(fixture_public_key(name)))
            out.insert(name);
    return out;
}

// KRL bytes built field by field.
struct krl_builder {
    bytes out;
    wire_writer w{out};

    explicit krl_builder(std::uint32_t format = 1, std::string_view comment = "")
    {
        w.raw(krl_magic).u32(format).u64(3).u64(1700000000).u64(0).string("").string(comment);
    }
    krl_builder& section(std::uint8_t type, const bytes& body)
    {
        w.u8(type).string(body);
        return *this;
    }
};

bytes strings(std::initializer_list<bytes> items)
{
    bytes out;
    wire_writer w(out);
    for (const auto& i : items)
        w.string(i);
    return out;
}

// A certificate section: CA key blob (empty: any CA), reserved, subsections.
bytes cert_section(const bytes& ca, std::initializer_list<std::pair<std::uint8_t, bytes>> subs)
{
    bytes out;
    wire_writer w(out);
    w.string(ca).string("");
    for (const auto& [type, body] : subs)
        w.u8(type).string(body);
    return out;
}

bytes u64s(std::initializer_list<std::uint64_t> v)
{
    bytes out;
    wire_writer w(out);
    for (auto x : v)
        w.u64(x);
    return out;
}

bytes bitmap(std::uint64_t offset, const bytes& raw_mpint)
{
    bytes out;
    wire_writer w(out);
    w.u64(offset).string(raw_mpint);
    return out;
}

bytes extension_body(std::string_view name, std::uint8_t critical, std::string_view value = "")
{
    bytes out;
    wire_writer w(out);
    w.string(name).u8(critical).string(value);
    return out;
}

errc parse_error(const bytes& b)
{
    auto k = parse_krl(b);
    return k ? errc::ok : k.error();
}

// Offsets at which a KRL may end: after the header and after each section.
std::set<std::size_t> section_ends(const bytes& b)
{
    std::set<std::size_t> ends;
    wire_reader r(byte_span(b).subspan(8));
    r.u32();
    r.u64();
    r.u64();
    r.u64();
    r.string(b.size());
    r.string(b.size());
    ends.insert(8 + r.position());
    while (r.remaining() > 0) {
        const auto type = r.u8();
        r.string(b.size());
        if (type == 4)
            r.string(b.size());
        REQUIRE(r.ok());
        ends.insert(8 + r.position());
    }
    return ends;
}

} // namespace

TEST_CASE("krl: plain keys revoked by ssh-keygen -k (key, sha1, sha256, hash)")
{
    auto k = parse_krl(krl_fixture("keys.krl"));
    REQUIRE(k.has_value());
    CHECK(k->version == 7);
    CHECK(k->comment == "longhaul test");
    CHECK(k->generated_date > 1600000000);
    CHECK(k->keys.size() == 1);    // key:
    CHECK(k->sha1s.size() == 1);   // sha1:
    CHECK(k->sha256s.size() == 2); // sha256: and hash:
    CHECK(k->authorities.empty());
    CHECK(revoked_by(*k) == std::set<std::string>{"ed25519_plain_key.pub", "ecdsa256_plain_key.pub",
                                                  "ecdsa384_plain_key.pub", "rsa2048_plain_key.pub"});
    CHECK(k->keys[0] == fixture_public_key("ed25519_plain_key.pub").blob());
}

TEST_CASE("krl: certificates revoked by serial list, range, bitmap and key ID")
{
    auto k = parse_krl(krl_fixture("certs.krl"));
    REQUIRE(k.has_value());
    CHECK(revoked_by(*k).empty()); // certificate sections never revoke plain keys
    REQUIRE(k->authorities.size() == 1);
    const auto& ca = k->authorities[0];
    CHECK(ca.ca_key == fixture_public_key("krl/ca_key.pub").blob());
    // ssh-keygen chose all three serial encodings for certs.spec.
    CHECK_FALSE(ca.serial_bitmaps.empty());
    CHECK(ca.serial_ranges.size() >= 4);

    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    for (std::uint64_t s : {std::uint64_t{1}, 5ul, 6ul, 7ul, 8ul, 9ul, 32ul, 100ul, 102ul, 104ul, 1000ul, 1001ul,
                            1002ul, 1003ul, 4242ul, 1000000ul, 2000000ul, 5000000ul, 5500000ul, 6000000ul,
                            0xffffffffffffff00ul, max - 1, max})
        CHECK_MESSAGE(ca.serial_revoked(s), s);
    for (std::uint64_t s : {std::uint64_t{0}, 2ul, 3ul, 4ul, 10ul, 31ul, 33ul, 99ul, 101ul, 103ul, 105ul, 999ul,
                            1004ul, 4241ul, 4243ul, 999999ul, 1000001ul, 4999999ul, 6000001ul, 0xfffffffffffffeffu})
        CHECK_FALSE_MESSAGE(ca.serial_revoked(s), s);
    CHECK(ca.key_ids == std::vector<std::string>{"alice@example.com", "bob"});
    CHECK(ca.key_id_revoked("bob"));
    CHECK_FALSE(ca.key_id_revoked("carol"));
    CHECK_FALSE(ca.key_id_revoked(""));
}

TEST_CASE("krl: ssh-keygen -k -u adds to an existing KRL; an empty KRL revokes nothing")
{
    auto updated = parse_krl(krl_fixture("updated.krl"));
    REQUIRE(updated.has_value());
    CHECK(revoked_by(*updated) == std::set<std::string>{"ed25519_plain_key.pub", "ecdsa256_plain_key.pub",
                                                        "ecdsa384_plain_key.pub", "rsa2048_plain_key.pub",
                                                        "rsa3072_plain_key.pub"});
    REQUIRE(updated->authorities.size() == 1);
    CHECK(updated->authorities[0].serial_revoked(1003));

    auto empty = parse_krl(krl_fixture("empty.krl"));
    REQUIRE(empty.has_value());
    CHECK(revoked_by(*empty).empty());
}

TEST_CASE("krl: describe_krl prints what ssh-keygen -Q -l prints")
{
    const char* tz = std::getenv("TZ");
    const std::string saved = tz ? tz : "";
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    for (const char* name : {"keys", "certs", "updated", "empty"}) {
        auto k = parse_krl(krl_fixture(std::string(name) + ".krl"));
        REQUIRE(k.has_value());
        // The .query file is the listing, then one line per key checked.
        const std::string query = fixture("krl/" + std::string(name) + ".query");
        const auto listing_end = query.find("ed25519_plain_key.pub (");
        REQUIRE(listing_end != std::string::npos);
        CHECK_MESSAGE(describe_krl(*k) == query.substr(0, listing_end), name);
    }
    if (tz)
        ::setenv("TZ", saved.c_str(), 1);
    else
        ::unsetenv("TZ");
    ::tzset();
}

TEST_CASE("krl: every truncation is a clean error, except at a section boundary")
{
    for (const char* name : {"keys.krl", "certs.krl", "updated.krl", "empty.krl"}) {
        const bytes b = krl_fixture(name);
        const auto ends = section_ends(b);
        for (std::size_t n = 0; n < b.size(); ++n) {
            const bytes prefix(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
            const bool ok = parse_krl(prefix).has_value();
            CHECK_MESSAGE(ok == (ends.count(n) > 0), name << " cut at " << n);
        }
        CHECK(parse_krl(b).has_value());
    }
    CHECK(parse_error(bytes{}) == errc::invalid_format);
    CHECK(parse_error(krl_builder().out) == errc::ok);
    bytes cut = krl_builder().out;
    cut.pop_back(); // inside the comment length
    CHECK(parse_error(cut) == errc::incomplete);
}

TEST_CASE("krl: header errors")
{
    bytes bad_magic = krl_builder().out;
    bad_magic[7] = 1;
    CHECK(parse_error(bad_magic) == errc::invalid_format);
    CHECK(parse_error(krl_builder(2).out) == errc::invalid_format);
    CHECK(parse_error(krl_builder(0).out) == errc::invalid_format);

    // A comment length far past the end of the file.
    bytes huge = krl_builder().out;
    store_u32(huge.data() + huge.size() - 4, 0xffffffffu);
    CHECK(parse_error(huge) == errc::incomplete);

    // NUL inside the comment is refused; a final NUL is dropped.
    CHECK(parse_error(krl_builder(1, std::string_view("a\0b", 3)).out) == errc::invalid_format);
    auto nul_end = parse_krl(krl_builder(1, std::string_view("note\0", 5)).out);
    REQUIRE(nul_end.has_value());
    CHECK(nul_end->comment == "note");
}

TEST_CASE("krl: section errors")
{
    const bytes ed = fixture_public_key("ed25519_plain_key.pub").blob();
    const bytes hash20(20, 0xab), hash32(32, 0xcd);

    SUBCASE("trailing and oversized data")
    {
        bytes trailing = krl_builder().section(2, strings({ed})).out;
        trailing.push_back(2); // a section type without its body
        CHECK(parse_error(trailing) == errc::incomplete);
        bytes oversized = krl_builder().out;
        wire_writer(oversized).u8(2).u32(0x7fffffffu).raw(ed);
        CHECK(parse_error(oversized) == errc::incomplete);
        bytes inner = strings({ed});
        inner.push_back(0); // a partial string length inside the section
        CHECK(parse_error(krl_builder().section(2, inner).out) == errc::incomplete);
    }
    SUBCASE("unknown section and subsection types")
    {
        CHECK(parse_error(krl_builder().section(6, {}).out) == errc::invalid_format);
        CHECK(parse_error(krl_builder().section(0, {}).out) == errc::invalid_format);
        CHECK(parse_error(krl_builder().section(1, cert_section({}, {{0x24, {}}})).out) == errc::invalid_format);
    }
    SUBCASE("hashes of the wrong length")
    {
        CHECK(parse_error(krl_builder().section(3, strings({hash20})).out) == errc::ok);
        CHECK(parse_error(krl_builder().section(3, strings({hash32})).out) == errc::invalid_format);
        CHECK(parse_error(krl_builder().section(5, strings({hash32})).out) == errc::ok);
        CHECK(parse_error(krl_builder().section(5, strings({hash20})).out) == errc::invalid_format);
    }
    SUBCASE("extensions: non-critical ignored, critical refused")
    {
        CHECK(parse_error(krl_builder().section(255, extension_body("x@example.com", 0, "data")).out) == errc::ok);
        CHECK(parse_error(krl_builder().section(255, extension_body("x@example.com", 1)).out) == errc::unsupported);
        bytes extra = extension_body("x@example.com", 0);
        extra.push_back(0);
        CHECK(parse_error(krl_builder().section(255, extra).out) == errc::invalid_format);
        CHECK(parse_error(krl_builder().section(255, {}).out) == errc::invalid_format);
        CHECK(parse_error(krl_builder().section(1, cert_section({}, {{0x39, extension_body("y", 0)}})).out) ==
              errc::ok);
        CHECK(parse_error(krl_builder().section(1, cert_section({}, {{0x39, extension_body("y", 2)}})).out) ==
              errc::unsupported);
    }
    SUBCASE("signature sections are skipped")
    {
        bytes signed_krl = krl_builder().section(2, strings({ed})).out;
        wire_writer(signed_krl).u8(4).string(ed).string("not checked");
        auto k = parse_krl(signed_krl);
        REQUIRE(k.has_value());
        CHECK(k->revokes(fixture_public_key("ed25519_plain_key.pub")));
        bytes unsigned_end = krl_builder().out;
        wire_writer(unsigned_end).u8(4).string(ed); // the signature string is missing
        CHECK(parse_error(unsigned_end) == errc::incomplete);
    }
}

TEST_CASE("krl: certificate subsection rules")
{
    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    auto one = [](std::uint8_t type, const bytes& body, const bytes& ca = {}) {
        return parse_error(krl_builder().section(1, cert_section(ca, {{type, body}})).out);
    };
    CHECK(one(0x20, u64s({1, 2, max})) == errc::ok);
    CHECK(one(0x20, u64s({0})) == errc::invalid_argument);
    CHECK(one(0x20, bytes(7, 1)) == errc::incomplete);
    CHECK(one(0x21, u64s({5, 5})) == errc::ok);
    CHECK(one(0x21, u64s({6, 5})) == errc::invalid_argument);
    CHECK(one(0x21, u64s({0, 5})) == errc::invalid_argument);
    CHECK(one(0x21, u64s({1, 2, 3})) == errc::invalid_format); // unparsed data
    CHECK(one(0x21, u64s({1})) == errc::incomplete);
    // Bitmaps: serial 0 cannot be revoked, nor may serials wrap past 2^64-1.
    CHECK(one(0x22, bitmap(0, {0x02})) == errc::ok);
    CHECK(one(0x22, bitmap(0, {0x03})) == errc::invalid_argument);
    CHECK(one(0x22, bitmap(max - 2, {0x07})) == errc::ok);
    CHECK(one(0x22, bitmap(max - 2, {0x08})) == errc::invalid_format);
    CHECK(one(0x22, bitmap(7, {})) == errc::ok);
    CHECK(one(0x22, bitmap(7, {0x80})) == errc::malformed); // a negative mpint
    bytes big(2049, 0x01);
    CHECK(one(0x22, bitmap(7, big)) == errc::too_large);
    big[0] = 0; // 2048 bytes after the sign byte: the largest accepted
    CHECK(one(0x22, bitmap(7, big)) == errc::ok);
    CHECK(one(0x23, strings({to_bytes(as_bytes("id")), {}})) == errc::ok);
    CHECK(one(0x23, strings({to_bytes(as_bytes(std::string_view("a\0b", 3)))})) == errc::invalid_format);
    // CA keys: Longhaul's types are validated, OpenSSH-only types kept,
    // anything else refused.
    const bytes ed = fixture_public_key("ed25519_plain_key.pub").blob();
    CHECK(one(0x20, u64s({1}), ed) == errc::ok);
    bytes broken = ed;
    broken.pop_back();
    CHECK(one(0x20, u64s({1}), broken) == errc::invalid_format);
    bytes dss;
    wire_writer(dss).string("ssh-dss").string("opaque");
    CHECK(one(0x20, u64s({1}), dss) == errc::ok);
    bytes unknown;
    wire_writer(unknown).string("ssh-foo").string("opaque");
    CHECK(one(0x20, u64s({1}), unknown) == errc::invalid_format);
}

TEST_CASE("krl: sections of one CA merge; a wildcard CA is listed as such")
{
    const bytes ca = fixture_public_key("krl/ca_key.pub").blob();
    auto k = parse_krl(krl_builder()
                           .section(1, cert_section(ca, {{0x20, u64s({5})}, {0x23, strings({to_bytes(as_bytes("b"))})}}))
                           .section(1, cert_section({}, {{0x23, strings({to_bytes(as_bytes("everyone"))})}}))
                           .section(1, cert_section(ca, {{0x21, u64s({6, 10})},
                                                         {0x23, strings({to_bytes(as_bytes("a")), to_bytes(as_bytes("b"))})}}))
                           .section(1, cert_section(ca, {})) // names the CA, revokes nothing
                           .out);
    REQUIRE(k.has_value());
    REQUIRE(k->authorities.size() == 2);
    CHECK(k->authorities[0].ca_key == ca);
    CHECK(k->authorities[0].serial_ranges == std::vector<krl_serial_range>{{5, 10}});
    CHECK(k->authorities[0].key_ids == std::vector<std::string>{"a", "b"});
    CHECK(k->authorities[1].ca_key.empty());
    const auto listing = describe_krl(*k);
    CHECK(listing.find("\n# Wildcard CA\nid: everyone\n") != std::string::npos);
    CHECK(listing.find("serial: 5-10\nid: a\nid: b\n") != std::string::npos);
}

TEST_CASE("krl: openssh_only_key_type")
{
    CHECK(openssh_only_key_type("ssh-dss"));
    CHECK(openssh_only_key_type("sk-ssh-ed25519@openssh.com"));
    CHECK(openssh_only_key_type("ssh-rsa-cert-v01@openssh.com"));
    CHECK_FALSE(openssh_only_key_type("ssh-rsa"));
    CHECK_FALSE(openssh_only_key_type("ssh-foo"));
}
