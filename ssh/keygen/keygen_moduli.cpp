// Moduli lines, -O options, the sieve and screening of one line; see
// keygen_moduli.hpp. The sieve follows OpenSSH's moduli.c in what it
// strikes and in which primes it tries (so that "trials" in candidate
// lines agree with OpenSSH's), written afresh.
// BN_is_prime_ex is deprecated in OpenSSL 3, but it is what OpenSSH calls:
// its "checks" argument (raised to OpenSSL's minimum) is prime-tests=.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "ssh/keygen/keygen_moduli.hpp"

#include "common/text_parse.hpp"
#include "ssh/keygen/keygen_commands.hpp"
#include "ssh/keygen/keygen_files.hpp"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cctype>
#include <new>
#include <cstring>

namespace longhaul::keygen {

bn_ptr bn_from_hex(const std::string& hex)
{
    BIGNUM* b = nullptr;
    if (BN_hex2bn(&b, hex.c_str()) == 0)
        return nullptr;
    return bn_ptr(b);
}

std::string bn_to_hex(const BIGNUM* b)
{
    char* h = BN_bn2hex(b);
    if (h == nullptr)
        return {};
    std::string s = h;
    OPENSSL_free(h);
    return s;
}

std::string moduli_timestamp(std::time_t t)
{
    std::tm tm{};
    if (gmtime_r(&t, &tm) == nullptr)
        return "00000000000000";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d%02d%02d%02d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
    return buf;
}

std::string format_moduli_line(const moduli_line& m)
{
    char head[128];
    std::snprintf(head, sizeof head, " %u %u %u %u %x ", m.type, m.tests, m.trials, m.size, m.generator);
    return m.timestamp + head + m.modulus + "\n";
}

std::optional<moduli_line> parse_moduli_line(const std::string& line)
{
    // OpenSSH skips short lines and comments before anything else.
    if (line.size() < 14 || line[0] == '!' || line[0] == '#')
        return std::nullopt;
    moduli_line m;
    m.timestamp = line.substr(0, 14);
    const char* cp = line.c_str() + 14;
    char* end = nullptr;
    auto field = [&](int base) {
        auto v = static_cast<std::uint32_t>(std::strtoul(cp, &end, base));
        cp = end;
        return v;
    };
    m.type = field(10);
    m.tests = field(10);
    m.trials = field(10);
    m.size = field(10);
    m.generator = field(16);
    cp += std::strspn(cp, " ");
    std::string rest = cp;
    // BN_hex2bn stops at the first non-hex character (the newline).
    std::size_t n = 0;
    while (n < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[n])))
        ++n;
    m.modulus = rest.substr(0, n);
    return m;
}

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

} // namespace

moduli_generate_options parse_moduli_generate_options(const std::vector<std::string>& opts)
{
    moduli_generate_options g;
    for (const auto& o : opts) {
        const char* why = nullptr;
        if (starts_with(o, "memory=")) {
            g.memory_mb = static_cast<std::uint32_t>(strtonum(o.c_str() + 7, 1, UINT_MAX, why).value_or(0));
            if (why)
                fatal(std::string("Memory limit is ") + why + ": " + o.substr(7));
        } else if (starts_with(o, "start=")) {
            if (!bn_from_hex(o.substr(6)))
                fatal("Invalid start point.");
            g.start = o.substr(6);
        } else if (starts_with(o, "bits=")) {
            g.bits = static_cast<std::uint32_t>(strtonum(o.c_str() + 5, 1, INT_MAX, why).value_or(0));
            // OpenSSH 9.2 prints the option from its 13th character on (a
            // slip in its source); the same text where there is one.
            if (why)
                fatal("Invalid number: " + (o.size() > 12 ? o.substr(12) : std::string()) + " (" + why + ")");
        } else
            fatal("Option \"" + o + "\" is unsupported for moduli generation");
    }
    return g;
}

moduli_screen_options parse_moduli_screen_options(const std::vector<std::string>& opts)
{
    moduli_screen_options s;
    for (const auto& o : opts) {
        const char* why = nullptr;
        if (starts_with(o, "lines="))
            s.lines = std::strtoul(o.c_str() + 6, nullptr, 10);
        else if (starts_with(o, "start-line="))
            s.start_line = std::strtoul(o.c_str() + 11, nullptr, 10);
        else if (starts_with(o, "checkpoint="))
            s.checkpoint = o.substr(11);
        else if (starts_with(o, "generator=")) {
            s.generator = static_cast<std::uint32_t>(strtonum(o.c_str() + 10, 1, UINT_MAX, why).value_or(0));
            if (why)
                fatal("Generator invalid: " + o.substr(10) + " (" + why + ")");
        } else if (starts_with(o, "prime-tests=")) {
            s.trials = static_cast<std::uint32_t>(strtonum(o.c_str() + 12, 1, INT_MAX, why).value_or(0));
            if (why)
                fatal("Invalid number: " + o.substr(12) + " (" + why + ")");
        } else
            fatal("Option \"" + o + "\" is unsupported for moduli screening");
    }
    return s;
}

std::uint32_t moduli_generator_for(const BIGNUM* p)
{
    if (BN_mod_word(p, 24) == 11)
        return 2;
    const auto r = BN_mod_word(p, 10);
    return (r == 3 || r == 7) ? 5 : 0;
}

std::uint32_t moduli_sieve_words(std::uint32_t bits, std::uint32_t memory_mb, std::string& notes)
{
    const std::uint32_t power = bits - 1;
    // Safe primes are about (1/bits)^2 dense: a window of bits^2 / 4 words
    // (8 * bits^2 candidates) should hold at least one.
    std::uint32_t words = (power * power) >> 2;
    if (memory_mb > moduli_max_memory_mb) {
        notes += "Limited memory: " + std::to_string(memory_mb) + " MB; limit " +
                 std::to_string(moduli_max_memory_mb) + " MB\n";
        memory_mb = moduli_max_memory_mb;
    }
    const std::uint32_t wanted = memory_mb << 18; // MB in 32-bit words
    if (words <= wanted) {
        notes += "Increased memory: " + std::to_string(memory_mb) + " MB; need " + std::to_string(words << 2) +
                 " bytes\n";
        words = wanted;
    } else if (memory_mb > 0) {
        notes += "Decreased memory: " + std::to_string(memory_mb) + " MB; want " + std::to_string(words << 2) +
                 " bytes\n";
        words = wanted;
    }
    return words;
}

moduli_sieve::moduli_sieve(const BIGNUM* start, std::uint32_t bits)
    : base_(start), bits_(bits),
      large_(static_cast<std::uint32_t*>(std::calloc(std::max<std::size_t>((bits + 31ULL) / 32, 1), 4)))
{
    if (!large_)
        throw std::bad_alloc();
}

void moduli_sieve::strike(std::uint32_t s32)
{
    ++tries_;
    largest_ = s32;
    const std::uint64_t s = s32;
    const std::uint64_t bits = bits_;
    // q = base + 2j: the first odd multiple of s at or above base.
    const std::uint64_t r = BN_mod_word(base_, s32);
    std::uint64_t u = r == 0 ? 0 : s - r;
    if (u < bits * 2) {
        if (u & 1)
            u += s;
        for (u /= 2; u < bits; u += s)
            mark(u);
    }
    // p = 2q + 1 = (2 base + 1) + 4j: the offset must be a multiple of 4.
    const std::uint64_t rp = (2 * r + 1) % s;
    u = rp == 0 ? 0 : s - rp;
    if (u < bits * 4) {
        while (u & 3)
            u += s;
        for (u /= 4; u < bits; u += s)
            mark(u);
    }
}

void moduli_sieve::run(std::uint64_t small_limit)
{
    // Tiny primes: the odd primes up to 2^16 + 1, enough to sieve every
    // block of small primes below 2^32.
    constexpr std::uint32_t tiny_bits = 1u << 15; // numbers 2i + 3
    std::vector<bool> tiny(tiny_bits, false);
    std::vector<std::uint32_t> tiny_primes;
    for (std::uint32_t i = 0; i < tiny_bits; ++i) {
        if (tiny[i])
            continue;
        const std::uint32_t t = 2 * i + 3;
        for (std::uint32_t j = i + t; j < tiny_bits; j += t)
            tiny[j] = true;
        tiny_primes.push_back(t);
        strike(t);
    }
    // Small primes, in blocks of 2^16 numbers from 2^16 + 3; as OpenSSH
    // stops, the block that would reach past the limit is not sieved.
    constexpr std::uint64_t block = 1u << 16;
    std::vector<bool> small(tiny_bits);
    for (std::uint64_t base = block + 3; base + block < small_limit; base += block) {
        std::fill(small.begin(), small.end(), false);
        for (const std::uint32_t t : tiny_primes) {
            std::uint64_t s = base % t == 0 ? 0 : t - base % t;
            if (s & 1)
                s += t;
            for (s /= 2; s < tiny_bits; s += t)
                small[s] = true;
        }
        for (std::uint32_t i = 0; i < tiny_bits; ++i)
            if (!small[i])
                strike(static_cast<std::uint32_t>(base + 2 * i));
    }
}

moduli_screen_result screen_moduli_line(const moduli_line& in, std::uint32_t trials, std::uint32_t generator_wanted)
{
    moduli_screen_result res;
    if (in.tests & moduli_tests_composite) {
        res.reason = "known composite";
        return res;
    }
    bn_ptr p(BN_new()), q(BN_new());
    std::uint32_t size = in.size, generator = in.generator;
    if (in.type == moduli_type_sophie_germain) {
        q = bn_from_hex(in.modulus);
        if (!q)
            throw keygen_exit(255, "BN_hex2bn failed");
        BN_lshift(p.get(), q.get(), 1);
        BN_add_word(p.get(), 1);
        size += 1;
        generator = 0;
    } else if (in.type <= 5) {
        // Unknown (0), unstructured (1), safe (2), Schnorr (3), strong (5):
        // the line holds p itself.
        p = bn_from_hex(in.modulus);
        if (!p)
            throw keygen_exit(255, "BN_hex2bn failed");
        BN_rshift1(q.get(), p.get());
    } else {
        res.reason = "Unknown prime type";
        return res;
    }
    if (static_cast<std::uint32_t>(BN_num_bits(p.get())) != size + 1) {
        res.reason = "bit size " + std::to_string(size) + " mismatch";
        return res;
    }
    if (size < moduli_min_bits - 1) {
        res.reason = "bit size " + std::to_string(size) + " too small";
        return res;
    }
    const std::uint32_t tries = (in.tests & moduli_tests_miller_rabin) ? in.trials + trials : trials;
    if (generator == 0)
        generator = moduli_generator_for(p.get());
    if (generator_wanted > 0 && generator_wanted != generator) {
        res.reason = "generator " + std::to_string(generator) + " != " + std::to_string(generator_wanted);
        return res;
    }
    if (generator == 0) {
        res.reason = "no known generator";
        return res;
    }
    res.possible = true;
    res.verbose_reason = true;
    // One round weeds out most composite q before the costly test of p.
    auto prime = [](const BIGNUM* n, std::uint32_t rounds) {
        const int r = BN_is_prime_ex(n, static_cast<int>(rounds), nullptr, nullptr);
        if (r < 0)
            throw keygen_exit(255, "BN_is_prime_ex failed");
        return r == 1;
    };
    if (!prime(q.get(), 1)) {
        res.reason = "q failed first possible prime test";
        return res;
    }
    if (!prime(p.get(), trials)) {
        res.reason = "p is not prime";
        return res;
    }
    if (!prime(q.get(), trials - 1)) {
        res.reason = "q is not prime";
        return res;
    }
    moduli_line out;
    out.type = moduli_type_safe;
    out.tests = in.tests | moduli_tests_miller_rabin;
    out.trials = tries;
    out.size = size;
    out.generator = generator;
    out.modulus = bn_to_hex(p.get());
    res.safe = std::move(out);
    return res;
}

} // namespace longhaul::keygen
