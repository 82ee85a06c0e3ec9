#include "sshd/moduli_provider.hpp"

#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

#include <array>
#include <fstream>
#include <iterator>

using namespace longhaul;

namespace {

std::size_t bits_of(const dh_group& g)
{
    std::size_t i = 0;
    while (i < g.p.size() && g.p[i] == 0)
        ++i;
    if (i == g.p.size())
        return 0;
    std::size_t bits = (g.p.size() - i) * 8;
    for (std::uint8_t top = g.p[i]; (top & 0x80) == 0; top <<= 1)
        --bits;
    return bits;
}

} // namespace

TEST_CASE("moduli: the file is read once, with OpenSSH's warnings")
{
    std::vector<log_message> log;
    auto groups = moduli_groups::load(std::string(LONGHAUL_TEST_DATA) + "/moduli_sample", log);
    CHECK(groups->file_readable());
    CHECK(groups->size() == 10);
    CHECK(log.empty());

    log.clear();
    auto missing = moduli_groups::load("/nonexistent/moduli", log);
    CHECK_FALSE(missing->file_readable());
    CHECK(missing->size() == 0);
    REQUIRE(log.size() == 1);
    CHECK(log[0].level == syslog_level::info);
    CHECK(log[0].text == "WARNING: could not open /nonexistent/moduli (No such file or directory), using fixed modulus");

    log.clear();
    auto bad = moduli_groups::from_text("# comment\n20220714110357 3 6 100 2047 2 E98F\nnonsense\n", "m", log);
    CHECK(bad->size() == 0);
    REQUIRE(log.size() == 2);
    CHECK(log[0].text.rfind("moduli:2: ", 0) == 0);
    CHECK(log[1].text.rfind("moduli:3: ", 0) == 0);
    CHECK(log[0].level == syslog_level::error);
}

TEST_CASE("moduli: choosing groups for GEX requests")
{
    std::vector<log_message> log;
    auto groups = moduli_groups::load(std::string(LONGHAUL_TEST_DATA) + "/moduli_sample", log);
    system_random rng;
    auto provider = make_gex_group_provider(groups, rng);
    auto g = provider(2048, 3072, 8192);
    REQUIRE(g);
    CHECK(bits_of(*g) == 3072);
    g = provider(2048, 2048, 2048);
    CHECK(bits_of(*g) == 2048);
    g = provider(2048, 8192, 8192);
    CHECK(bits_of(*g) == 8192);

    // Nothing in range: the built-in group and OpenSSH's warning.
    std::vector<log_message> warnings;
    auto logging = make_gex_group_provider(groups, rng, [&](const log_message& m) { warnings.push_back(m); });
    g = logging(5000, 5000, 5500);
    REQUIRE(g);
    CHECK(bits_of(*g) == 4096); // RFC 3526 group 16 for max < 6144
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].text == "WARNING: no suitable primes in " + std::string(LONGHAUL_TEST_DATA) + "/moduli_sample");

    // Without a file every request gets a fixed group.
    auto none = moduli_groups::load("/nonexistent/moduli", log);
    auto fixed = make_gex_group_provider(none, rng);
    CHECK(bits_of(*fixed(2048, 2048, 2048)) == 2048);
    CHECK(bits_of(*fixed(2048, 8192, 8192)) == 8192);
}

TEST_CASE("moduli: a connection process's deferred text parses on first use, as the listener's did")
{
    std::ifstream in(std::string(LONGHAUL_TEST_DATA) + "/moduli_sample", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(!text.empty());
    std::vector<log_message> log;
    auto eager = moduli_groups::from_text(text, "m", log);
    auto deferred = moduli_groups::deferred(text + "nonsense\n", "m");
    CHECK(deferred->file_readable());
    CHECK(deferred->size() == eager->size());
    CHECK(deferred->size() == 10);

    // The same groups for the same requests (a fresh deferred one, parsed
    // by choose() rather than size()).
    auto fresh = moduli_groups::deferred(text, "m");
    system_random rng;
    auto a = make_gex_group_provider(eager, rng);
    auto b = make_gex_group_provider(fresh, rng);
    for (auto [min, preferred, max] : {std::array<std::uint32_t, 3>{2048, 2048, 2048}, {2048, 8192, 8192}}) {
        auto ga = a(min, preferred, max);
        auto gb = b(min, preferred, max);
        REQUIRE(ga);
        REQUIRE(gb);
        CHECK(bits_of(*ga) == bits_of(*gb));
    }
    CHECK(fresh->size() == 10);

    // No text: the fixed groups, as for an unreadable file.
    auto empty = moduli_groups::deferred("", "m");
    CHECK(empty->size() == 0);
}
