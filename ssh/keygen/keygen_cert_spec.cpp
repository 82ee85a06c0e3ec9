#include "ssh/keygen/keygen_cert_spec.hpp"

#include "common/config_line.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"
#include "ssh/keygen/keygen_files.hpp"

#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace longhaul::keygen {

namespace {

// OpenSSH's CERTOPT_* flags, in the order finalise_cert_exts adds them.
constexpr unsigned opt_x11 = 1, opt_agent = 2, opt_port = 4, opt_pty = 8, opt_user_rc = 16, opt_verify = 32;
constexpr unsigned opt_default = opt_x11 | opt_agent | opt_port | opt_pty | opt_user_rc;

struct flag_option {
    const char* name; // as -O takes it (case-insensitive)
    unsigned flag;
    bool set;
};
constexpr flag_option flag_options[] = {
    {"no-x11-forwarding", opt_x11, false},       {"permit-x11-forwarding", opt_x11, true},
    {"no-agent-forwarding", opt_agent, false},   {"permit-agent-forwarding", opt_agent, true},
    {"no-port-forwarding", opt_port, false},     {"permit-port-forwarding", opt_port, true},
    {"no-pty", opt_pty, false},                  {"permit-pty", opt_pty, true},
    {"no-user-rc", opt_user_rc, false},          {"permit-user-rc", opt_user_rc, true},
    {"no-verify-required", opt_verify, false},   {"verify-required", opt_verify, true},
};

// The extensions the flags stand for, as they are named in a certificate.
struct flag_extension {
    unsigned flag;
    const char* name;
};
constexpr flag_extension flag_extensions[] = {
    {opt_x11, "permit-X11-forwarding"}, {opt_agent, "permit-agent-forwarding"},
    {opt_port, "permit-port-forwarding"}, {opt_pty, "permit-pty"}, {opt_user_rc, "permit-user-rc"},
};

bool has_prefix_nocase(std::string_view s, std::string_view prefix)
{
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bytes string_data(std::string_view value)
{
    bytes out(4 + value.size());
    const auto n = static_cast<std::uint32_t>(value.size());
    out[0] = static_cast<std::uint8_t>(n >> 24);
    out[1] = static_cast<std::uint8_t>(n >> 16);
    out[2] = static_cast<std::uint8_t>(n >> 8);
    out[3] = static_cast<std::uint8_t>(n);
    std::memcpy(out.data() + 4, value.data(), value.size());
    return out;
}

// parse_relative_time: "+1d" or "-1d" from now.
std::uint64_t relative_time(const std::string& s, std::time_t now)
{
    const long long secs = convtime(std::string_view(s).substr(1));
    if (secs == -1)
        fatal("Invalid relative certificate time " + s);
    if (s[0] == '-' && secs > now)
        fatal("Certificate time " + s + " cannot be represented");
    return s[0] == '-' ? static_cast<std::uint64_t>(now - secs) : static_cast<std::uint64_t>(now + secs);
}

std::uint64_t hex_time(const std::string& s)
{
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 16);
    if (s.empty() || *end != '\0')
        fatal("Invalid certificate time: not a number");
    if (errno == ERANGE && v == ULLONG_MAX)
        fatal("parse_hex_u64: Invalid certificate time: " + std::string(std::strerror(ERANGE)));
    return v;
}

// OpenSSH's format_absolute_time. Unlike certificate_time() (which prints
// the number), a time past what localtime_r can convert is clamped and
// whatever localtime_r left is printed, as OpenSSH prints it
// ("219250468-01-00T15:30:07" for 0x7fffffffffffffff): -L and -s's message
// must read the same for a "-V 0x1:0x7fffffffffffffff" certificate.
std::string absolute_time_text(std::uint64_t t)
{
    const std::time_t tt = t > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::time_t>(t);
    std::tm tm{};
    (void)::localtime_r(&tt, &tm);
    char buf[64] = {};
    if (std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        return std::to_string(t);
    return buf;
}

} // namespace

long long convtime(std::string_view text)
{
    // strtol as OpenSSH uses it (leading blanks and a sign accepted by it,
    // negative values refused), on a bounded copy.
    if (text.empty() || text.size() > 256)
        return -1;
    const std::string s(text);
    const char* p = s.c_str();
    long long total = 0;
    while (*p != '\0') {
        char* end = nullptr;
        errno = 0;
        const long secs = std::strtol(p, &end, 10);
        if (p == end || (errno == ERANGE && (secs == LONG_MIN || secs == LONG_MAX)) || secs < 0)
            return -1;
        long long mult = 1;
        if (*end != '\0') {
            mult = time_unit_seconds(*end++);
            if (mult == 0)
                return -1;
        }
        if (secs > INT_MAX / mult)
            return -1;
        if (total > INT_MAX - secs * mult)
            return -1;
        total += secs * mult;
        p = end;
    }
    return total;
}

cert_validity parse_cert_validity(std::string_view spec_view, std::time_t now)
{
    if (spec_view.size() > 256)
        fatal("Invalid certificate life specification (too long)");
    const std::string spec(spec_view);
    cert_validity v;
    if (!spec.empty() && spec[0] == '+' && spec.find(':') == std::string::npos) {
        const long long secs = convtime(std::string_view(spec).substr(1));
        if (secs == -1)
            fatal("Invalid relative certificate life " + spec);
        v.to = static_cast<std::uint64_t>(now + secs);
        // Backdated a minute, for hosts whose clocks lag (as OpenSSH does).
        v.from = static_cast<std::uint64_t>(((now - 59) / 60) * 60);
        return v;
    }
    const auto colon = spec.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
        fatal("Invalid certificate life specification " + spec);
    const std::string from = spec.substr(0, colon), to = spec.substr(colon + 1);

    if (from[0] == '-' || from[0] == '+')
        v.from = relative_time(from, now);
    else if (from == "always")
        v.from = 0;
    else if (from.rfind("0x", 0) == 0)
        v.from = hex_time(from);
    else if (auto t = parse_absolute_time(from))
        v.from = *t;
    else
        fatal("Invalid from time \"" + from + "\"");

    if (to[0] == '-' || to[0] == '+')
        v.to = relative_time(to, now);
    else if (to == "forever")
        v.to = UINT64_MAX;
    else if (to.rfind("0x", 0) == 0)
        v.to = hex_time(to);
    else if (auto t = parse_absolute_time(to))
        v.to = *t;
    else
        fatal("Invalid to time \"" + to + "\"");

    if (v.to <= v.from)
        fatal("Empty certificate validity interval");
    return v;
}

std::string format_cert_validity(std::uint64_t from, std::uint64_t to)
{
    if (from == 0 && to == UINT64_MAX)
        return "forever";
    if (from == 0)
        return "before " + absolute_time_text(to);
    if (to == UINT64_MAX)
        return "after " + absolute_time_text(from);
    return "from " + absolute_time_text(from) + " to " + absolute_time_text(to);
}

cert_serial parse_cert_serial(std::string_view text)
{
    cert_serial s;
    if (!text.empty() && text[0] == '+') {
        s.auto_increment = true;
        text.remove_prefix(1);
    }
    const std::string digits(text.substr(0, 64));
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
    if (digits.empty() || digits[0] < '0' || digits[0] > '9' || *end != '\0' || text.size() > 64 ||
        (errno == ERANGE && v == ULLONG_MAX))
        fatal("Invalid serial number \"" + std::string(text) + "\"");
    s.first = v;
    return s;
}

std::vector<std::string> split_principals(const std::optional<std::string>& list)
{
    std::vector<std::string> out;
    if (!list)
        return out;
    std::string_view rest = *list;
    while (true) {
        const auto comma = rest.find(',');
        const auto name = rest.substr(0, comma);
        if (name.empty())
            fatal("Empty principal name");
        // Checked as they are counted, so a huge list is never held.
        if (out.size() >= max_certificate_principals)
            fatal("Too many certificate principals specified");
        out.emplace_back(name);
        if (comma == std::string_view::npos)
            break;
        rest.remove_prefix(comma + 1);
    }
    return out;
}

cert_option_set::cert_option_set(bool host) : flags_(host ? 0 : opt_default) {}

void cert_option_set::add(std::string_view opt)
{
    if (iequals(opt, "clear")) {
        flags_ = 0;
        return;
    }
    for (const auto& f : flag_options)
        if (iequals(opt, f.name)) {
            flags_ = f.set ? (flags_ | f.flag) : (flags_ & ~f.flag);
            return;
        }
    if (has_prefix_nocase(opt, "force-command=")) {
        const auto value = opt.substr(14);
        if (value.empty())
            fatal("Empty force-command option");
        if (force_command_)
            fatal("force-command already specified");
        force_command_ = std::string(value);
    } else if (has_prefix_nocase(opt, "source-address=")) {
        const auto value = opt.substr(15);
        if (value.empty())
            fatal("Empty source-address option");
        if (source_address_)
            fatal("source-address already specified");
        auto errors = cidr_list_errors(value);
        if (!errors.empty()) {
            std::string text;
            for (const auto& e : errors)
                text += e + "\r\n";
            fatal(text + "Invalid source-address list");
        }
        source_address_ = std::string(value);
    } else if (has_prefix_nocase(opt, "extension:") || has_prefix_nocase(opt, "critical:")) {
        const bool critical = has_prefix_nocase(opt, "critical:");
        auto rest = opt.substr(opt.find(':') + 1);
        custom c{{}, std::nullopt, critical};
        const auto eq = rest.find('=');
        c.name = std::string(rest.substr(0, eq));
        if (eq != std::string_view::npos)
            c.value = std::string(rest.substr(eq + 1));
        // OpenSSH would sign an empty name; a certificate parser refuses it.
        if (c.name.empty())
            fatal("Unsupported certificate option \"" + std::string(opt) + "\" (empty name)");
        custom_.push_back(std::move(c));
    } else {
        fatal("Unsupported certificate option \"" + std::string(opt) + "\"");
    }
}

std::vector<certificate_option> cert_option_set::critical_options() const
{
    std::vector<certificate_option> out;
    if (force_command_)
        out.push_back({"force-command", string_data(*force_command_)});
    if (source_address_)
        out.push_back({"source-address", string_data(*source_address_)});
    if (flags_ & opt_verify)
        out.push_back({"verify-required", {}});
    for (const auto& c : custom_)
        if (c.critical)
            out.push_back({c.name, c.value ? string_data(*c.value) : bytes{}});
    // Sorted as OpenSSH's ssh-keygen writes them; a name given twice is
    // kept twice, as there (its sshd accepts such a certificate).
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
}

std::vector<certificate_option> cert_option_set::extensions() const
{
    std::vector<certificate_option> out;
    for (const auto& f : flag_extensions)
        if (flags_ & f.flag)
            out.push_back({f.name, {}});
    for (const auto& c : custom_)
        if (!c.critical)
            out.push_back({c.name, c.value ? string_data(*c.value) : bytes{}});
    // Sorted as OpenSSH's ssh-keygen writes them; a name given twice is
    // kept twice, as there (its sshd accepts such a certificate).
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
}

std::vector<std::string> cidr_list_errors(std::string_view list)
{
    std::vector<std::string> errors;
    // OpenSSH quotes its list after strsep() has cut it at the first comma.
    const std::string whole(list.substr(0, std::min<std::size_t>(list.find(','), 100)));
    std::string_view rest = list;
    while (true) {
        const auto comma = rest.find(',');
        const auto entry = rest.substr(0, comma);
        const std::string shown(entry.substr(0, 100));
        if (entry.empty()) {
            errors.push_back("addr_match_cidr_list: empty entry in list \"" + whole + "\"");
            break;
        }
        if (entry.size() > 46 + 3) { // INET6_ADDRSTRLEN, and a mask
            errors.push_back("addr_match_cidr_list: list entry \"" + shown + "\" too long");
            break;
        }
        if (entry.find_first_not_of("0123456789abcdefABCDEF.:/") != std::string_view::npos)
            errors.push_back("addr_match_cidr_list: list entry \"" + shown + "\" contains invalid characters");
        if (!valid_cidr(entry)) {
            // A good address with a mask that does not fit it, or junk.
            const auto slash = entry.find('/');
            const bool mask_problem = slash != std::string_view::npos && valid_cidr(entry.substr(0, slash)) &&
                                      slash + 1 < entry.size() && slash + 4 >= entry.size() &&
                                      entry.substr(slash + 1).find_first_not_of("0123456789") == std::string_view::npos;
            errors.push_back(mask_problem ? "Inconsistent mask length for network \"" + shown + "\""
                                          : "Invalid network entry \"" + shown + "\"");
            break;
        }
        if (comma == std::string_view::npos)
            break;
        rest.remove_prefix(comma + 1);
    }
    return errors;
}

cert_signature_choice choose_cert_signature(key_type ca, const std::optional<std::string>& name)
{
    if (!name)
        return {ca == key_type::rsa ? "rsa-sha2-512" : std::string(key_type_name(ca)), std::nullopt};
    // sshkey_type_from_name: full names, or the short names of plain keys
    // in any case ("RSA", "ed25519"); ECDSA names match any curve's CA.
    const bool rsa_alg = *name == "ssh-rsa" || *name == "rsa-sha2-256" || *name == "rsa-sha2-512";
    std::optional<key_type> named;
    if (rsa_alg || iequals(*name, "RSA"))
        named = key_type::rsa;
    else if (*name == "ssh-ed25519" || iequals(*name, "ED25519"))
        named = key_type::ed25519;
    else if (name->rfind("ecdsa-sha2-nistp", 0) == 0 && key_type_from_name(*name))
        named = key_type::ecdsa_p256;
    else if (iequals(*name, "ECDSA"))
        named = key_type::ecdsa_p256;
    const auto family = [](key_type t) {
        return t == key_type::ecdsa_p384 || t == key_type::ecdsa_p521 ? key_type::ecdsa_p256 : t;
    };
    if (!named || *named != family(ca))
        fatal("CA key type " + std::string(key_type_name(ca)) + " doesn't match specified " + *name);
    cert_signature_choice c{*name, std::nullopt};
    if (ca == key_type::rsa) {
        if (!rsa_alg)
            c.failure = "invalid argument";
    } else if (*name != key_type_name(ca)) {
        c.failure = "signature algorithm not supported";
    }
    return c;
}

} // namespace longhaul::keygen
