#include "common/text_parse.hpp"

#include "common/bytes.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>

namespace longhaul {

bool iequals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

std::string lowercase(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::optional<long long> strtonum(std::string_view s, long long lo, long long hi, const char*& why)
{
    why = "invalid";
    if (lo > hi)
        return std::nullopt;
    std::size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
        negative = s[i++] == '-';
    if (i == s.size())
        return std::nullopt;
    // Accumulated as a negative number, whose range includes LLONG_MIN.
    long long v = 0;
    bool overflow = false;
    for (; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9')
            return std::nullopt;
        const int d = s[i] - '0';
        if (v < (LLONG_MIN + d) / 10)
            overflow = true;
        else
            v = v * 10 - d;
    }
    if (!negative) {
        if (v == LLONG_MIN)
            overflow = true;
        else
            v = -v;
    }
    if ((overflow && negative) || (!overflow && v < lo)) {
        why = "too small";
        return std::nullopt;
    }
    if (overflow || v > hi) {
        why = "too large";
        return std::nullopt;
    }
    why = nullptr;
    return v;
}

const char* atoi_err(std::string_view s, int& value)
{
    if (s.empty())
        return "missing";
    const char* why = nullptr;
    if (auto v = strtonum(s, 0, INT_MAX, why))
        value = static_cast<int>(*v);
    return why;
}

int parse_port(std::string_view s)
{
    const char* why = nullptr;
    if (auto v = strtonum(s, 0, 65535, why))
        return static_cast<int>(*v);
    // A C string ends at a NUL, so OpenSSH could never look such a name up.
    if (s.empty() || s.size() > 255 || s.find('\0') != std::string_view::npos)
        return -1;
    const std::string name(s);
    servent entry{};
    servent* found = nullptr;
    char buf[4096];
    if (getservbyname_r(name.c_str(), "tcp", &entry, buf, sizeof buf, &found) == 0 && found != nullptr)
        return ntohs(static_cast<std::uint16_t>(found->s_port));
    return -1;
}

int parse_tunnel_device(std::string_view s)
{
    if (iequals(s, "any"))
        return tun_id_any;
    const char* why = nullptr;
    if (auto v = strtonum(s, 0, tun_id_error - 1, why))
        return static_cast<int>(*v);
    return tun_id_error;
}

int parse_tunnel_device(std::string_view s, int& remote)
{
    remote = tun_id_any;
    const auto colon = s.find(':');
    if (colon == std::string_view::npos)
        return parse_tunnel_device(s);
    remote = parse_tunnel_device(s.substr(colon + 1));
    const int local = parse_tunnel_device(s.substr(0, colon));
    return remote == tun_id_error ? remote : local;
}

namespace {

struct ipqos_entry {
    std::string_view name;
    int value;
};

// RFC 4594/8325 DSCP code points and the old TOS names. "reliability" has
// LE's value, so LE is the name printed for both, as in OpenSSH.
constexpr ipqos_entry ipqos_table[] = {
    {"none", INT_MAX}, // "none" cannot be 0: that is cs0
    {"af11", 0x28}, {"af12", 0x30}, {"af13", 0x38}, {"af21", 0x48}, {"af22", 0x50}, {"af23", 0x58},
    {"af31", 0x68}, {"af32", 0x70}, {"af33", 0x78}, {"af41", 0x88}, {"af42", 0x90}, {"af43", 0x98},
    {"cs0", 0x00},  {"cs1", 0x20},  {"cs2", 0x40},  {"cs3", 0x60},  {"cs4", 0x80},  {"cs5", 0xa0},
    {"cs6", 0xc0},  {"cs7", 0xe0},  {"ef", 0xb8},   {"le", 0x04},   {"lowdelay", 0x10},
    {"throughput", 0x08}, {"reliability", 0x04},
};

} // namespace

int parse_ipqos(std::string_view s)
{
    for (const auto& q : ipqos_table)
        if (iequals(q.name, s))
            return q.value;
    // strtol(s, &end, 0) over the whole text, as OpenSSH 9.2 reads it (no
    // length limit: ssh -G -o IPQoS=0000000000000000000032 gives 0x1a).
    if (s.empty() || s.find('\0') != std::string_view::npos)
        return -1;
    const std::string text(s);
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 0);
    if (*end != '\0' || errno == ERANGE || v < 0 || v > 255)
        return -1;
    return static_cast<int>(v);
}

std::string ipqos_name(int value)
{
    for (const auto& q : ipqos_table)
        if (q.value == value)
            return std::string(q.name);
    const std::uint8_t b = static_cast<std::uint8_t>(value);
    return "0x" + to_hex(byte_span(&b, 1));
}

std::optional<hpdelim_result> hpdelim2(std::string_view s)
{
    std::size_t end;
    if (!s.empty() && s[0] == '[') {
        end = s.find(']');
        if (end == std::string_view::npos)
            return std::nullopt;
        ++end;
    } else {
        end = std::min(s.find_first_of(":/"), s.size());
    }
    hpdelim_result out;
    out.field = s.substr(0, end);
    if (end == s.size())
        return out;
    if (s[end] != ':' && s[end] != '/')
        return std::nullopt;
    out.delim = s[end];
    out.rest = s.substr(end + 1);
    out.more = true;
    return out;
}

std::optional<hpdelim_result> hpdelim(std::string_view s)
{
    auto f = hpdelim2(s);
    if (f && f->delim == '/')
        return std::nullopt;
    return f;
}

std::string_view clean_hostname(std::string_view host) noexcept
{
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        return host.substr(1, host.size() - 2);
    return host;
}

std::optional<long long> scan_scaled(std::string_view s, const char*& why)
{
    constexpr const char* invalid = "Invalid argument";
    constexpr const char* out_of_range = "Numerical result out of range";
    static constexpr std::string_view units = "BKMGTPE";
    // scan_scaled's limits: at most 20 digits before the point; after it, the
    // first 19 count and the rest are ignored.
    constexpr int max_whole_digits = 20;
    constexpr int max_fraction_digits = 19;

    std::size_t i = 0;
    while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80 && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
    int sign = 0;
    for (; i < s.size() && (s[i] == '+' || s[i] == '-'); ++i) {
        if (sign != 0) {
            why = invalid;
            return std::nullopt;
        }
        sign = s[i] == '-' ? -1 : 1;
    }

    long long whole = 0, fraction = 0;
    int whole_digits = 0;
    int fraction_digits = -1; // -1: no point seen yet
    for (; i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'); ++i) {
        if (s[i] == '.') {
            if (fraction_digits >= 0) {
                why = invalid;
                return std::nullopt;
            }
            fraction_digits = 0;
            continue;
        }
        const int d = s[i] - '0';
        long long& target = fraction_digits >= 0 ? fraction : whole;
        if (fraction_digits >= 0) {
            if (fraction_digits == max_fraction_digits)
                continue;
            ++fraction_digits;
        } else if (++whole_digits > max_whole_digits) {
            why = out_of_range;
            return std::nullopt;
        }
        if (target > (LLONG_MAX - d) / 10) {
            why = out_of_range;
            return std::nullopt;
        }
        target = target * 10 + d;
    }
    if (sign < 0) {
        whole = -whole;
        fraction = -fraction;
    }
    if (i == s.size())
        return whole; // no unit: the fraction is dropped

    const auto unit = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(s[i]))));
    if (unit == std::string_view::npos || (i + 1 < s.size() && std::isalnum(static_cast<unsigned char>(s[i + 1])))) {
        why = invalid;
        return std::nullopt;
    }
    const long long scale = 1LL << (10 * unit);
    if (whole > LLONG_MAX / scale || whole < LLONG_MIN / scale) {
        why = out_of_range;
        return std::nullopt;
    }
    // The fraction loses its last digits until fraction * scale fits; what
    // is left is scaled and divided by its remaining power of ten.
    while (fraction >= LLONG_MAX / scale) {
        fraction /= 10;
        --fraction_digits;
    }
    // 128 bits: a negative fraction is not cut above and may not fit (the
    // result is then meaningless, but RekeyLimit refuses any negative value).
    __int128 part = static_cast<__int128>(fraction) * scale;
    for (int k = 0; k < fraction_digits; ++k)
        part /= 10;
    return static_cast<long long>(whole * scale + part);
}

std::optional<std::uint64_t> parse_window_size(std::string_view s, std::uint64_t max, std::string& why)
{
    if (s == "auto")
        return 0;
    const char* err = nullptr;
    auto v = scan_scaled(s, err);
    if (!v) {
        why = err;
        return std::nullopt;
    }
    if (*v < 64 * 1024 || static_cast<std::uint64_t>(*v) > max) {
        why = "must be \"auto\" or between 64K and " + std::to_string(max >> 20) + "M";
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(*v);
}

std::optional<std::uint64_t> parse_absolute_time(std::string_view s)
{
    if (s.size() > 32)
        return std::nullopt;
    std::size_t l = s.size();
    bool utc = false;
    if (l > 1 && (s.back() == 'Z' || s.back() == 'z')) {
        utc = true;
        l -= 1;
    } else if (l > 3 && iequals(s.substr(l - 3), "UTC")) {
        utc = true;
        l -= 3;
    }
    // strptime wants separators between fields: rebuild the text with them.
    std::string buf;
    const char* fmt = nullptr;
    switch (l) {
    case 8:
        fmt = "%Y-%m-%d";
        buf = std::string(s.substr(0, 4)) + "-" + std::string(s.substr(4, 2)) + "-" + std::string(s.substr(6, 2));
        break;
    case 12:
        fmt = "%Y-%m-%dT%H:%M";
        buf = std::string(s.substr(0, 4)) + "-" + std::string(s.substr(4, 2)) + "-" + std::string(s.substr(6, 2)) +
              "T" + std::string(s.substr(8, 2)) + ":" + std::string(s.substr(10, 2));
        break;
    case 14:
        fmt = "%Y-%m-%dT%H:%M:%S";
        buf = std::string(s.substr(0, 4)) + "-" + std::string(s.substr(4, 2)) + "-" + std::string(s.substr(6, 2)) +
              "T" + std::string(s.substr(8, 2)) + ":" + std::string(s.substr(10, 2)) + ":" +
              std::string(s.substr(12, 2));
        break;
    default: return std::nullopt;
    }
    std::tm tm{}; // tm_isdst 0, as OpenSSH's memset leaves it
    const char* rest = ::strptime(buf.c_str(), fmt, &tm);
    if (rest == nullptr || *rest != '\0')
        return std::nullopt;
    const std::time_t t = utc ? ::timegm(&tm) : std::mktime(&tm);
    if (t < 0)
        return std::nullopt;
    return static_cast<std::uint64_t>(t);
}

std::string format_absolute_time(std::uint64_t t)
{
    const std::time_t tt = t > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::time_t>(t);
    std::tm tm{};
    char buf[64] = {};
    if (::localtime_r(&tt, &tm) == nullptr || std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        return "UNKNOWN-TIME";
    return buf;
}

} // namespace longhaul
