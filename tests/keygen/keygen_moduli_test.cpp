// ssh-keygen -M: moduli(5) lines read and written as OpenSSH's, the sieve
// against a naive check, screening of safe primes from Debian's
// /etc/ssh/moduli (copied here) and of composites, and the generator choice.
#include "ssh/keygen/keygen_moduli.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace longhaul;
using namespace longhaul::keygen;

namespace {

// Two lines of Debian 12's /etc/ssh/moduli: generators 2 and 5.
const std::string safe_g2 = "20220714110357 2 6 100 2047 2 E98F2A209BA9F4C8C1FFB02490E599A99FBE28F6A053E240A4BD5FEDE80B23FEA8A1476E9EF6605A4B4B41CC74CB945C7E168A91DB112424480A85CBF5853234B9B1F60F030D38F678BA80AE1461F716C463D7396151EB5F037CC88690FEEF8D16A1B67F56C11874DB5AA3D541BEFF390077C79C86434EDBC2B46821D2AE5D2FA4FFF1B086B07669B09498EA11B0FE26C773F79ACA044E085E0BA43BBE1EBE954AA1EC7A465A3232699E54958B1760AB7A04D9627EC1810970706C96B58BF84999EBED8846D8B384CB945BF782141B1BE2B7C0E04D531A2334DB41BBFD1BEA428C5FD22F50BABDBDFCC5B848F64CBA8D039636311F8D844DFFFBD77A429A9923";
const std::string safe_g5 = "20220714110358 2 6 100 2047 5 E98F2A209BA9F4C8C1FFB02490E599A99FBE28F6A053E240A4BD5FEDE80B23FEA8A1476E9EF6605A4B4B41CC74CB945C7E168A91DB112424480A85CBF5853234B9B1F60F030D38F678BA80AE1461F716C463D7396151EB5F037CC88690FEEF8D16A1B67F56C11874DB5AA3D541BEFF390077C79C86434EDBC2B46821D2AE5D2FA4FFF1B086B07669B09498EA11B0FE26C773F79ACA044E085E0BA43BBE1EBE954AA1EC7A465A3232699E54958B1760AB7A04D9627EC1810970706C96B58BF84999EBED8846D8B384CB945BF782141B1BE2B7C0E04D531A2334DB41BBFD1BEA428C5FD22F50BABDBDFCC5B848F64CBA8D039636311F8D844DFFFBD77A42A9BFB7";

std::string failure_of(void (*f)())
{
    try {
        f();
    } catch (const keygen_exit& e) {
        CHECK(e.status() == 255);
        return e.message();
    }
    return "no failure";
}

moduli_line parsed(const std::string& text)
{
    auto m = parse_moduli_line(text);
    REQUIRE(m.has_value());
    return *m;
}

} // namespace

TEST_CASE("moduli lines round trip as OpenSSH writes them")
{
    for (const auto& text : {safe_g2, safe_g5}) {
        const auto m = parsed(text + "\n");
        CHECK(m.type == moduli_type_safe);
        CHECK(m.tests == 6);
        CHECK(m.trials == 100);
        CHECK(m.size == 2047);
        CHECK(m.modulus.size() == 512);
        CHECK(format_moduli_line(m) == text + "\n");
    }
    CHECK(parsed(safe_g5).generator == 5);
    CHECK_FALSE(parse_moduli_line("# comment line that is long").has_value());
    CHECK_FALSE(parse_moduli_line("short").has_value());
    CHECK(moduli_timestamp(0) == "19700101000000");
    moduli_line c{"20260102030405", moduli_type_sophie_germain, moduli_tests_sieve, 203280220, 1022, 0, "ABC1"};
    CHECK(format_moduli_line(c) == "20260102030405 4 2 203280220 1022 0 ABC1\n");
}

TEST_CASE("moduli -O options and OpenSSH's messages for bad ones")
{
    const auto g = parse_moduli_generate_options({"bits=1024", "memory=16", "start=F1"});
    CHECK(g.bits == 1024);
    CHECK(g.memory_mb == 16);
    CHECK(g.start == "F1");
    const auto s = parse_moduli_screen_options(
        {"lines=5", "start-line=2", "checkpoint=/tmp/c", "generator=5", "prime-tests=7"});
    CHECK(s.lines == 5);
    CHECK(s.start_line == 2);
    CHECK(s.checkpoint == "/tmp/c");
    CHECK(s.generator == 5);
    CHECK(s.trials == 7);
    CHECK(failure_of([] { parse_moduli_generate_options({"foo=1"}); }) ==
          "Option \"foo=1\" is unsupported for moduli generation");
    CHECK(failure_of([] { parse_moduli_generate_options({"memory=abc"}); }) == "Memory limit is invalid: abc");
    CHECK(failure_of([] { parse_moduli_generate_options({"start=zz"}); }) == "Invalid start point.");
    CHECK(failure_of([] { parse_moduli_generate_options({"bits=9999999999"}); }) == "Invalid number: 999 (too large)");
    CHECK(failure_of([] { parse_moduli_screen_options({"bogus"}); }) ==
          "Option \"bogus\" is unsupported for moduli screening");
    CHECK(failure_of([] { parse_moduli_screen_options({"generator=0"}); }) == "Generator invalid: 0 (too small)");
    CHECK(failure_of([] { parse_moduli_screen_options({"prime-tests=abc"}); }) == "Invalid number: abc (invalid)");
}

TEST_CASE("moduli sieve window sizes as OpenSSH's")
{
    std::string notes;
    CHECK(moduli_sieve_words(1024, 0, notes) == (1023u * 1023u) >> 2);
    CHECK(notes.empty());
    CHECK(moduli_sieve_words(1024, 8, notes) == 8u << 18);
    CHECK(notes == "Increased memory: 8 MB; need 1046528 bytes\n");
}

namespace {

// Every odd prime up to n, by trial division: slow but plainly right.
std::vector<std::uint32_t> odd_primes_to(std::uint32_t n)
{
    std::vector<std::uint32_t> primes;
    for (std::uint32_t c = 3; c <= n; c += 2) {
        bool prime = true;
        for (std::uint32_t d : primes) {
            if (d * d > c)
                break;
            if (c % d == 0) {
                prime = false;
                break;
            }
        }
        if (prime)
            primes.push_back(c);
    }
    return primes;
}

void sieve_matches_naive(const std::string& start_hex, std::uint32_t window, std::uint64_t limit)
{
    auto start = bn_from_hex(start_hex);
    REQUIRE(start);
    moduli_sieve sieve(start.get(), window);
    sieve.run(limit);
    const auto primes = odd_primes_to(sieve.largest_prime_tried());
    CHECK(sieve.tries() == primes.size());
    bn_ptr q(BN_new()), p(BN_new());
    std::uint32_t survivors = 0;
    for (std::uint32_t j = 0; j < window; ++j) {
        BN_set_word(q.get(), 2ULL * j);
        BN_add(q.get(), q.get(), start.get());
        BN_lshift1(p.get(), q.get());
        BN_add_word(p.get(), 1);
        bool naive = true;
        for (std::uint32_t s : primes)
            if (BN_mod_word(q.get(), s) == 0 || BN_mod_word(p.get(), s) == 0) {
                naive = false;
                break;
            }
        CHECK_MESSAGE(sieve.survives(j) == naive, "j = ", j);
        survivors += naive ? 1 : 0;
    }
    CHECK(survivors > 0);
}

} // namespace

TEST_CASE("moduli sieve keeps exactly the candidates a naive check keeps")
{
    // The tiny primes alone (to 65537), then one block of small primes.
    sieve_matches_naive("C0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                        "00000000000000000000000000000000000000001",
                        2048, 0);
    sieve_matches_naive("D3A9F1C2B4E5A6970810293847566574839201ABCDEF0123456789ABCDEF012345", 1024, 131076);
    CHECK(odd_primes_to(131076).back() == 131071);
}

TEST_CASE("moduli screening accepts Debian's safe primes and picks their generators")
{
    for (const auto& text : {safe_g2, safe_g5}) {
        const auto in = parsed(text);
        auto p = bn_from_hex(in.modulus);
        REQUIRE(p);
        CHECK(moduli_generator_for(p.get()) == in.generator);
        const auto r = screen_moduli_line(in, 4, 0);
        REQUIRE(r.safe.has_value());
        CHECK(r.safe->trials == 104); // already Miller-Rabin tested: added
        CHECK(r.safe->tests == 6);
        CHECK(r.safe->generator == in.generator);
        CHECK(r.safe->modulus == in.modulus);

        // The same prime as a sieve candidate q = (p - 1) / 2.
        bn_ptr q(BN_new());
        BN_rshift1(q.get(), p.get());
        moduli_line cand{"20260101000000", moduli_type_sophie_germain, moduli_tests_sieve, 5, 2046, 0,
                         bn_to_hex(q.get())};
        const auto c = screen_moduli_line(cand, 4, 0);
        REQUIRE(c.safe.has_value());
        CHECK(format_moduli_line(*c.safe) ==
              " 2 6 4 2047 " + std::to_string(in.generator) + " " + in.modulus + "\n");
        CHECK_FALSE(screen_moduli_line(cand, 4, in.generator == 2 ? 5 : 2).safe.has_value());
    }
}

TEST_CASE("moduli screening rejects composites")
{
    const auto in = parsed(safe_g2);
    auto p = bn_from_hex(in.modulus);
    for (unsigned step : {2u, 4u, 22u}) {
        bn_ptr c(BN_dup(p.get()));
        BN_add_word(c.get(), 24 * step); // same residue mod 24: generator 2
        moduli_line bad = in;
        bad.modulus = bn_to_hex(c.get());
        const auto r = screen_moduli_line(bad, 4, 0);
        CHECK_FALSE(r.safe.has_value());
    }
    moduli_line known = in;
    known.tests |= moduli_tests_composite;
    CHECK_FALSE(screen_moduli_line(known, 4, 0).safe.has_value());
    moduli_line wrong_size = in;
    wrong_size.size = 2045;
    CHECK(screen_moduli_line(wrong_size, 4, 0).reason == "bit size 2045 mismatch");
}
