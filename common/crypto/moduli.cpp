// moduli(5) parsing and sshd's group choice for diffie-hellman-group-exchange.
#include "common/crypto/moduli.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>

namespace longhaul {

namespace {

// A 16384-bit modulus is 4096 hex digits; anything far longer is not a
// moduli line and is refused before any number is parsed.
constexpr std::size_t max_line_length = 16 * 1024;
constexpr std::size_t max_file_size = 16 * 1024 * 1024;
constexpr std::size_t field_count = 7;

struct line_fault {
    std::string_view reason;
};

bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

// Splits on runs of blanks; stops counting past field_count + 1 so that a
// line with too many fields is still told apart from a full one.
std::size_t split_fields(std::string_view line, std::array<std::string_view, field_count + 1>& out) noexcept
{
    std::size_t n = 0, i = 0;
    while (n < out.size()) {
        while (i < line.size() && is_blank(line[i]))
            ++i;
        if (i == line.size())
            break;
        std::size_t start = i;
        while (i < line.size() && !is_blank(line[i]))
            ++i;
        out[n++] = line.substr(start, i - start);
    }
    return n;
}

// Digits only: no sign, no spaces, no overflow past `max`.
bool parse_decimal(std::string_view s, std::uint64_t max, std::uint64_t& out) noexcept
{
    if (s.empty())
        return false;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        const unsigned d = static_cast<unsigned>(c - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    out = v;
    return true;
}

// Hex digits only, at least one; gives the magnitude without leading zeros.
bool parse_hex(std::string_view s, bytes& out)
{
    if (s.empty())
        return false;
    std::size_t i = 0;
    while (i < s.size() && s[i] == '0')
        ++i;
    const std::string_view digits = s.substr(i);
    out.assign((digits.size() + 1) / 2, 0);
    // An odd count puts a lone digit in the first byte.
    std::size_t pos = digits.size() % 2 == 1 ? 1 : 0;
    for (std::size_t k = 0; k < digits.size(); ++k, ++pos) {
        const int v = hex_digit_value(digits[k]);
        if (v < 0)
            return false;
        out[pos / 2] = static_cast<std::uint8_t>(out[pos / 2] | (pos % 2 == 0 ? v << 4 : v));
    }
    return true;
}

// Compares magnitudes without leading zeros: <0, 0, >0. When `decrement_b`
// is set, compares with b - 1 instead, b being odd (only its last bit changes).
int compare_magnitudes(byte_span a, byte_span b, bool decrement_b = false) noexcept
{
    if (a.size() != b.size())
        return a.size() < b.size() ? -1 : 1;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::uint8_t bi = decrement_b && i + 1 == b.size() ? std::uint8_t(b[i] & 0xfe) : b[i];
        if (a[i] != bi)
            return a[i] < bi ? -1 : 1;
    }
    return 0;
}

// 1 < g < p-1 for an odd p; both without leading zeros.
bool generator_in_range(byte_span g, byte_span p) noexcept
{
    static constexpr std::uint8_t one[] = {1};
    return compare_magnitudes(g, one) > 0 && compare_magnitudes(g, p, true) < 0;
}

// The body of parse_moduli_line: nullopt for blank and comment lines, the
// entry, or why the line is unusable.
result<std::optional<moduli_entry>> parse_line(std::string_view line, line_fault& fault)
{
    const auto fail = [&fault](std::string_view why) -> result<std::optional<moduli_entry>> {
        fault.reason = why;
        return errc::invalid_format;
    };
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    if (line.size() > max_line_length)
        return fail("line too long");

    std::array<std::string_view, field_count + 1> f;
    const std::size_t n = split_fields(line, f);
    if (n == 0 || f[0].front() == '#')
        return std::optional<moduli_entry>();
    if (n < field_count)
        return fail("truncated");
    if (n > field_count)
        return fail("too many fields");

    std::uint64_t v = 0;
    // The timestamp is YYYYMMDDHHMMSS; its value matters to no one.
    if (f[0].size() > 20 || !parse_decimal(f[0], UINT64_MAX, v))
        return fail("invalid timestamp");
    if (!parse_decimal(f[1], 0xffff, v) || v != moduli_type_safe)
        return fail("type is not 2 (safe prime)");
    if (!parse_decimal(f[2], 0x1f, v))
        return fail("invalid tests flags");
    if ((v & moduli_tests_composite) != 0)
        return fail("modulus tested composite");
    if ((v & moduli_tests_miller_rabin) == 0)
        return fail("modulus not screened with Miller-Rabin");
    if (!parse_decimal(f[3], std::uint64_t{1} << 30, v) || v == 0)
        return fail("invalid trial count");
    // sshd's limit on the size field; ours on the modulus comes below.
    if (!parse_decimal(f[4], 64 * 1024, v) || v == 0)
        return fail("invalid size");
    const auto bits = static_cast<std::uint32_t>(v + 1);
    if (bits > moduli_max_bits)
        return fail("modulus too large");

    moduli_entry entry{bits, {}};
    if (!parse_hex(f[5], entry.group.g))
        return fail("invalid generator");
    if (!parse_hex(f[6], entry.group.p))
        return fail("invalid modulus");
    if (magnitude_bits(entry.group.p) != bits)
        return fail("modulus length does not match size field");
    if ((entry.group.p.back() & 1) == 0)
        return fail("modulus is even");
    if (!generator_in_range(entry.group.g, entry.group.p))
        return fail("generator out of range");
    return std::optional<moduli_entry>(std::move(entry));
}

// A uniform index below n (n >= 1), by rejection as arc4random_uniform does:
// values below 2^32 mod n would make the low indexes likelier.
std::size_t uniform_index(random_source& rng, std::size_t n)
{
    if (n <= 1)
        return 0;
    const auto bound = static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX));
    const std::uint32_t floor = static_cast<std::uint32_t>(0u - bound) % bound;
    for (;;) {
        std::array<std::uint8_t, 4> buf{};
        rng.fill(buf);
        const std::uint32_t r = std::uint32_t(buf[0]) << 24 | std::uint32_t(buf[1]) << 16 |
                                std::uint32_t(buf[2]) << 8 | std::uint32_t(buf[3]);
        if (r >= floor)
            return r % bound;
    }
}

// Whether a group of `candidate` bits fits `preferred` better than `best`.
bool closer(std::uint32_t candidate, std::uint32_t best, std::uint32_t preferred) noexcept
{
    if (best < preferred)
        return candidate > best;
    return candidate >= preferred && candidate < best;
}

} // namespace

result<std::optional<moduli_entry>> parse_moduli_line(std::string_view line, std::string_view* reason)
{
    line_fault fault;
    auto r = parse_line(line, fault);
    if (!r && reason != nullptr)
        *reason = fault.reason;
    return r;
}

moduli_list parse_moduli(std::string_view text)
{
    moduli_list out;
    std::size_t line_no = 0;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        ++line_no;
        line_fault fault;
        auto r = parse_line(line, fault);
        if (!r)
            out.errors.push_back({line_no, fault.reason});
        else if (r->has_value())
            out.groups.push_back(std::move(**r));
    }
    return out;
}

result<moduli_list> load_moduli_file(const std::string& path)
{
    struct file_close {
        void operator()(std::FILE* f) const noexcept { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, file_close> f(std::fopen(path.c_str(), "rb"));
    if (!f)
        return errc::io_error;
    std::string text;
    std::array<char, 64 * 1024> buf;
    for (;;) {
        const std::size_t n = std::fread(buf.data(), 1, buf.size(), f.get());
        text.append(buf.data(), n);
        if (text.size() > max_file_size)
            return errc::too_large;
        if (n < buf.size()) {
            if (std::ferror(f.get()))
                return errc::io_error;
            break;
        }
    }
    return parse_moduli(text);
}

result<gex_request> clamp_gex_request(std::uint32_t min_bits, std::uint32_t preferred_bits,
                                      std::uint32_t max_bits) noexcept
{
    if (max_bits < min_bits || preferred_bits < min_bits || max_bits < preferred_bits || max_bits < gex_min_bits)
        return errc::invalid_argument;
    return gex_request{std::max(gex_min_bits, min_bits), std::clamp(preferred_bits, gex_min_bits, gex_max_bits),
                       std::min(gex_max_bits, max_bits)};
}

gex_choice choose_gex_group(std::span<const moduli_entry> groups, std::uint32_t min_bits,
                            std::uint32_t preferred_bits, std::uint32_t max_bits, random_source& rng)
{
    std::uint32_t best = 0;
    std::size_t count = 0;
    for (const auto& e : groups) {
        if (e.bits < min_bits || e.bits > max_bits)
            continue;
        if (count == 0 || closer(e.bits, best, preferred_bits)) {
            best = e.bits;
            count = 0;
        }
        if (e.bits == best)
            ++count;
    }
    if (count == 0)
        return {gex_fallback_group(max_bits), true};

    std::size_t which = uniform_index(rng, count);
    for (const auto& e : groups) {
        if (e.bits == best && which-- == 0)
            return {e.group, false};
    }
    return {gex_fallback_group(max_bits), true}; // not reached
}

const dh_group& gex_fallback_group(std::uint32_t max_bits)
{
    if (max_bits < 3072)
        return modp_group14();
    if (max_bits < 6144)
        return modp_group16();
    return modp_group18();
}

std::uint32_t dh_estimate(std::uint32_t security_bits) noexcept
{
    if (security_bits <= 112)
        return 2048;
    if (security_bits <= 128)
        return 3072;
    if (security_bits <= 192)
        return 7680;
    return 8192;
}

result<void> validate_gex_group(const dh_group& group, std::uint32_t min_bits, std::uint32_t max_bits) noexcept
{
    const byte_span p = strip_leading_zeros(group.p), g = strip_leading_zeros(group.g);
    if (p.empty())
        return errc::invalid_argument;
    const std::size_t bits = magnitude_bits(p);
    if (bits < min_bits || bits > max_bits || (p.back() & 1) == 0)
        return errc::invalid_argument;
    if (!generator_in_range(g, p))
        return errc::invalid_argument;
    return {};
}

} // namespace longhaul
