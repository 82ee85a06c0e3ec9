#include "common/crypto/moduli.hpp"

#include "tests/skip.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

using namespace longhaul;

namespace {

const std::string sample_path = std::string(LONGHAUL_TEST_DATA) + "/moduli_sample";

// Counts up from a seed: deterministic "randomness" for the choice.
class counting_random final : public random_source {
public:
    explicit counting_random(std::uint32_t seed = 0) : next_(seed) {}
    void fill(mutable_byte_span out) override
    {
        for (std::size_t i = 0; i < out.size(); i += 4) {
            const std::uint32_t v = next_++;
            for (std::size_t k = 0; k < 4 && i + k < out.size(); ++k)
                out[i + k] = static_cast<std::uint8_t>(v >> (24 - 8 * k));
        }
    }

private:
    std::uint32_t next_;
};

moduli_list load_sample()
{
    auto list = load_moduli_file(sample_path);
    REQUIRE(list.has_value());
    return std::move(*list);
}

// A real line of the sample (1-based among its non-comment lines).
std::string sample_line(std::size_t n)
{
    std::FILE* f = std::fopen(sample_path.c_str(), "rb");
    REQUIRE(f != nullptr);
    std::string text;
    char buf[4096];
    std::size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0)
        text.append(buf, got);
    std::fclose(f);
    std::size_t seen = 0, pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        if (!line.empty() && line[0] != '#' && ++seen == n)
            return line;
    }
    FAIL("sample has too few lines");
    return {};
}

// Replaces field `index` (0-based) of a moduli line.
std::string with_field(const std::string& line, std::size_t index, const std::string& value)
{
    std::size_t start = 0;
    for (std::size_t i = 0; i < index; ++i)
        start = line.find(' ', start) + 1;
    std::size_t end = line.find(' ', start);
    return line.substr(0, start) + value + (end == std::string::npos ? "" : line.substr(end));
}

std::string_view reason_for(const std::string& line)
{
    std::string_view why;
    auto r = parse_moduli_line(line, &why);
    CHECK_FALSE(r.has_value());
    if (!r)
        CHECK(r.error() == errc::invalid_format);
    return why;
}

std::vector<moduli_entry> fake_groups(std::initializer_list<std::uint32_t> sizes)
{
    // Only the sizes matter to the choice; the group records its position so
    // the test can tell which one was drawn.
    std::vector<moduli_entry> out;
    for (auto bits : sizes)
        out.push_back({bits, dh_group{bytes{static_cast<std::uint8_t>(out.size())}, bytes{2}}});
    return out;
}

} // namespace

TEST_CASE("moduli: the sample of Debian's /etc/ssh/moduli parses completely")
{
    const moduli_list list = load_sample();
    CHECK(list.errors.empty());
    REQUIRE(list.groups.size() == 10);
    std::map<std::uint32_t, int> sizes;
    for (const auto& e : list.groups) {
        ++sizes[e.bits];
        CHECK(dh_group_bits(e.group) == e.bits);
        CHECK((e.group.p.back() & 1) == 1);
        CHECK(e.group.g.size() == 1);
        CHECK((e.group.g[0] == 2 || e.group.g[0] == 5));
    }
    CHECK(sizes == std::map<std::uint32_t, int>{{2048, 3}, {3072, 1}, {4096, 2}, {6144, 1}, {7680, 1}, {8192, 2}});
    CHECK(to_hex(list.groups[0].group.p).substr(0, 16) == "e98f2a209ba9f4c8");
}

TEST_CASE("moduli: the system file parses without errors when present")
{
    // Only a missing file is a skip; a file that is there must load.
    if (::access("/etc/ssh/moduli", F_OK) != 0)
        LONGHAUL_SKIP("no /etc/ssh/moduli (openssh-server installs it)");
    auto list = load_moduli_file("/etc/ssh/moduli");
    REQUIRE(list);
    CHECK(list->errors.empty());
    CHECK(list->groups.size() > 100);
}

TEST_CASE("moduli: comments, blank lines and line endings")
{
    const std::string line = sample_line(1);
    auto blank = parse_moduli_line("");
    REQUIRE(blank.has_value());
    CHECK_FALSE(blank->has_value());
    CHECK_FALSE(parse_moduli_line(" \t ")->has_value());
    CHECK_FALSE(parse_moduli_line("# Time Type Tests Tries Size Generator Modulus")->has_value());
    CHECK_FALSE(parse_moduli_line("   #indented comment")->has_value());
    CHECK_FALSE(parse_moduli_line("\r")->has_value());

    auto crlf = parse_moduli_line(line + "\r");
    REQUIRE(crlf.has_value());
    REQUIRE(crlf->has_value());
    CHECK((*crlf)->bits == 2048);
    // Runs of blanks between fields, and around the line, are accepted.
    std::string spaced = "  ";
    for (char c : line)
        spaced += c == ' ' ? std::string(" \t  ") : std::string(1, c);
    spaced += " \t";
    CHECK(parse_moduli_line(spaced)->has_value());

    const std::string text = "# header\n\n" + line + "\r\n" + line; // no final newline
    const moduli_list list = parse_moduli(text);
    CHECK(list.errors.empty());
    CHECK(list.groups.size() == 2);
    CHECK(parse_moduli("").groups.empty());
}

TEST_CASE("moduli: malformed and unusable lines are reported with their reason")
{
    const std::string good = sample_line(1);
    REQUIRE(parse_moduli_line(good)->has_value());
    const std::string p = good.substr(good.rfind(' ') + 1);

    CHECK(reason_for("20220714110357 2 6 100 2047 2") == "truncated");
    CHECK(reason_for("20220714110357") == "truncated");
    CHECK(reason_for(good + " extra") == "too many fields");
    CHECK(reason_for(with_field(good, 0, "2022-07-14")) == "invalid timestamp");
    CHECK(reason_for(with_field(good, 0, "123456789012345678901")) == "invalid timestamp");
    CHECK(reason_for(with_field(good, 1, "4")) == "type is not 2 (safe prime)");
    CHECK(reason_for(with_field(good, 1, "0")) == "type is not 2 (safe prime)");
    CHECK(reason_for(with_field(good, 1, "-2")) == "type is not 2 (safe prime)");
    CHECK(reason_for(with_field(good, 1, "02x")) == "type is not 2 (safe prime)");
    CHECK(reason_for(with_field(good, 2, "7")) == "modulus tested composite");
    CHECK(reason_for(with_field(good, 2, "2")) == "modulus not screened with Miller-Rabin");
    CHECK(reason_for(with_field(good, 2, "0")) == "modulus not screened with Miller-Rabin");
    CHECK(reason_for(with_field(good, 2, "32")) == "invalid tests flags");
    CHECK(reason_for(with_field(good, 2, "0x6")) == "invalid tests flags");
    CHECK(reason_for(with_field(good, 3, "0")) == "invalid trial count");
    CHECK(reason_for(with_field(good, 3, "1073741825")) == "invalid trial count");
    CHECK(reason_for(with_field(good, 3, "+100")) == "invalid trial count");
    CHECK(reason_for(with_field(good, 4, "0")) == "invalid size");
    CHECK(reason_for(with_field(good, 4, "65537")) == "invalid size");
    CHECK(reason_for(with_field(good, 4, "99999999999999999999999")) == "invalid size");
    CHECK(reason_for(with_field(good, 4, "16384")) == "modulus too large");
    CHECK(reason_for(with_field(good, 4, "2046")) == "modulus length does not match size field");
    CHECK(reason_for(with_field(good, 4, "2048")) == "modulus length does not match size field");
    CHECK(reason_for(with_field(good, 5, "g")) == "invalid generator");
    CHECK(reason_for(with_field(good, 5, "-2")) == "invalid generator");
    CHECK(reason_for(with_field(good, 5, "1")) == "generator out of range");
    CHECK(reason_for(with_field(good, 5, "0")) == "generator out of range");
    CHECK(reason_for(with_field(good, 5, "000")) == "generator out of range");
    CHECK(reason_for(with_field(good, 5, p)) == "generator out of range");
    CHECK(reason_for(with_field(good, 6, p + "Z")) == "invalid modulus");
    CHECK(reason_for(with_field(good, 6, "0x" + p)) == "invalid modulus");
    CHECK(reason_for(with_field(good, 6, p.substr(1))) == "modulus length does not match size field");
    std::string even = p;
    even.back() = static_cast<char>(even.back() - 1); // ...23 -> ...22
    CHECK(reason_for(with_field(good, 6, even)) == "modulus is even");
    CHECK(reason_for(good + std::string(20000, ' ')) == "line too long");

    // Leading zeros on the modulus do not change its size.
    CHECK(parse_moduli_line(with_field(good, 6, "000" + p))->has_value());
    // Lowercase hex is fine.
    std::string lower = p;
    for (auto& c : lower)
        if (c >= 'A' && c <= 'F')
            c = static_cast<char>(c - 'A' + 'a');
    CHECK(parse_moduli_line(with_field(good, 6, lower))->has_value());
    // Sieve plus Miller-Rabin plus later flags, as long as not composite.
    CHECK(parse_moduli_line(with_field(good, 2, "4"))->has_value());
    CHECK(parse_moduli_line(with_field(good, 2, "30"))->has_value());

    // The whole file carries on past bad lines and names them.
    const std::string text = "# header\n" + good + "\n" + with_field(good, 1, "4") + "\n\n" + good +
                             " extra\n" + sample_line(4) + "\n";
    const moduli_list list = parse_moduli(text);
    REQUIRE(list.groups.size() == 2);
    CHECK(list.groups[0].bits == 2048);
    CHECK(list.groups[1].bits == 3072);
    REQUIRE(list.errors.size() == 2);
    CHECK(list.errors[0].line == 3);
    CHECK(list.errors[0].reason == "type is not 2 (safe prime)");
    CHECK(list.errors[1].line == 5);
    CHECK(list.errors[1].reason == "too many fields");
}

TEST_CASE("moduli: load_moduli_file reports a missing file")
{
    CHECK(load_moduli_file(sample_path + ".does-not-exist").error() == errc::io_error);
}

TEST_CASE("gex: choice prefers the smallest size at or above the wish")
{
    counting_random rng;
    const auto groups = fake_groups({2048, 3072, 4096, 4096, 8192, 6144, 7680});

    auto exact = choose_gex_group(groups, 2048, 3072, 8192, rng);
    CHECK_FALSE(exact.fallback);
    CHECK(exact.group.p == bytes{1});

    auto above = choose_gex_group(groups, 2048, 3500, 8192, rng);
    CHECK(above.group.p[0] >= 2);
    CHECK(above.group.p[0] <= 3);

    // Line order does not matter: 6144 sits after 8192 in the list.
    auto unsorted = choose_gex_group(groups, 2048, 5000, 8192, rng);
    CHECK(unsorted.group.p == bytes{5});

    // Nothing at or above the wish within max: the largest below it.
    auto below = choose_gex_group(groups, 2048, 8192, 7000, rng);
    CHECK(below.group.p == bytes{5});
    auto below2 = choose_gex_group(groups, 1024, 9000, 9000, rng);
    CHECK(below2.group.p == bytes{4});

    // min excludes smaller groups even when they are closer.
    auto min_bound = choose_gex_group(groups, 4000, 2048, 8192, rng);
    CHECK(min_bound.group.p[0] >= 2);
    CHECK(min_bound.group.p[0] <= 3);
}

TEST_CASE("gex: equal candidates are drawn at random, all of them reachable")
{
    const auto groups = fake_groups({2048, 4096, 4096, 4096, 8192});
    std::map<std::uint8_t, int> seen;
    counting_random rng(7);
    for (int i = 0; i < 30; ++i) {
        auto c = choose_gex_group(groups, 2048, 4096, 8192, rng);
        CHECK_FALSE(c.fallback);
        ++seen[c.group.p[0]];
    }
    REQUIRE(seen.size() == 3);
    for (auto [index, count] : seen) {
        CHECK(index >= 1);
        CHECK(index <= 3);
        CHECK(count == 10); // a counting source visits the residues evenly
    }
}

TEST_CASE("gex: no fitting group falls back to RFC 3526 groups by max")
{
    counting_random rng;
    const auto groups = fake_groups({1024, 16384});
    auto c = choose_gex_group(groups, 2048, 4096, 8192, rng);
    CHECK(c.fallback);
    CHECK(c.group.p == modp_group18().p);

    CHECK(choose_gex_group({}, 2048, 2048, 2048, rng).group.p == modp_group14().p);
    CHECK(choose_gex_group({}, 2048, 2048, 3071, rng).group.p == modp_group14().p);
    CHECK(choose_gex_group({}, 2048, 2048, 3072, rng).group.p == modp_group16().p);
    CHECK(choose_gex_group({}, 2048, 2048, 6143, rng).group.p == modp_group16().p);
    CHECK(choose_gex_group({}, 2048, 2048, 6144, rng).group.p == modp_group18().p);
    CHECK(choose_gex_group({}, 2048, 2048, 8192, rng).fallback);
    CHECK(&gex_fallback_group(100000) == &modp_group18());
}

TEST_CASE("gex: choosing from the real sample, and agreeing on the group")
{
    const moduli_list list = load_sample();
    counting_random rng(3);
    auto c = choose_gex_group(list.groups, 2048, 2048, 8192, rng);
    CHECK_FALSE(c.fallback);
    CHECK(dh_group_bits(c.group) == 2048);
    CHECK(validate_gex_group(c.group, 2048, 8192).has_value());

    // A group the OpenSSL named-group tables do not know works as well.
    auto bits = dh_private_exponent_bits(32, dh_group_bits(c.group));
    REQUIRE(bits.has_value());
    auto a = make_dh_agreement(c.group, *bits);
    auto b = make_dh_agreement(c.group, *bits);
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    auto ka = (*a)->derive((*b)->public_value());
    auto kb = (*b)->derive((*a)->public_value());
    REQUIRE(ka.has_value());
    REQUIRE(kb.has_value());
    CHECK(to_hex(ka->span()) == to_hex(kb->span()));

    auto big = choose_gex_group(list.groups, 2048, 7000, 8192, rng);
    CHECK(dh_group_bits(big.group) == 7680);
    auto only = choose_gex_group(list.groups, 3072, 3072, 3072, rng);
    CHECK(dh_group_bits(only.group) == 3072);
}

TEST_CASE("gex: sshd's request checks and clamping")
{
    auto r = clamp_gex_request(1024, 2048, 16384);
    REQUIRE(r.has_value());
    CHECK(r->min_bits == 2048);
    CHECK(r->preferred_bits == 2048);
    CHECK(r->max_bits == 8192);

    r = clamp_gex_request(2048, 7680, 8192);
    REQUIRE(r.has_value());
    CHECK(r->preferred_bits == 7680);

    r = clamp_gex_request(1024, 1024, 2048); // preferred raised to the floor
    REQUIRE(r.has_value());
    CHECK(r->preferred_bits == 2048);

    CHECK(clamp_gex_request(4096, 2048, 8192).error() == errc::invalid_argument); // preferred < min
    CHECK(clamp_gex_request(2048, 8192, 4096).error() == errc::invalid_argument); // preferred > max
    CHECK(clamp_gex_request(8192, 8192, 4096).error() == errc::invalid_argument); // min > max
    CHECK(clamp_gex_request(1024, 1024, 1024).error() == errc::invalid_argument); // max < 2048
}

TEST_CASE("gex: client checks on the server's group")
{
    const dh_group& g14 = modp_group14();
    CHECK(validate_gex_group(g14, 2048, 8192).has_value());
    CHECK(validate_gex_group(g14, 2048, 2048).has_value());
    CHECK(validate_gex_group(g14, 2049, 8192).error() == errc::invalid_argument);
    CHECK(validate_gex_group(g14, 1024, 2047).error() == errc::invalid_argument);
    CHECK(validate_gex_group(modp_group18(), 2048, 4096).error() == errc::invalid_argument);

    dh_group padded = g14;
    padded.p.insert(padded.p.begin(), 0);
    CHECK(validate_gex_group(padded, 2048, 2048).has_value());

    dh_group even = g14;
    even.p.back() ^= 1;
    CHECK(validate_gex_group(even, 2048, 8192).error() == errc::invalid_argument);

    bytes p_minus_1 = g14.p;
    p_minus_1.back() ^= 1;
    for (const bytes& g : {bytes{}, bytes{0}, bytes{1}, p_minus_1, g14.p}) {
        CAPTURE(g.size());
        CHECK(validate_gex_group(dh_group{g14.p, g}, 2048, 8192).error() == errc::invalid_argument);
    }
    bytes p_minus_2 = g14.p;
    p_minus_2.back() = static_cast<std::uint8_t>(p_minus_2.back() - 2);
    CHECK(validate_gex_group(dh_group{g14.p, p_minus_2}, 2048, 8192).has_value());
    CHECK(validate_gex_group(dh_group{}, 0, 8192).error() == errc::invalid_argument);
}

TEST_CASE("gex: dh_estimate follows OpenSSH")
{
    CHECK(dh_estimate(0) == 2048);
    CHECK(dh_estimate(112) == 2048);
    CHECK(dh_estimate(128) == 3072); // aes128-gcm: a 16-byte key and no MAC
    CHECK(dh_estimate(160) == 7680); // aes128-ctr with hmac-sha1 (20-byte MAC key)
    CHECK(dh_estimate(192) == 7680);
    CHECK(dh_estimate(256) == 8192); // aes256, hmac-sha2-256 and up
    CHECK(dh_estimate(512) == 8192); // chacha20-poly1305 (64-byte key)
}
