#include "sshd/sshd_config_syntax.hpp"

#include "common/config_line.hpp"
#include "common/name_list.hpp"

#include <cctype>
#include <climits>

namespace longhaul::detail {

// sscanf("%d:%d:%d")-like: how many integers were read before a mismatch.
int scan_ints(std::string_view s, int* out, int max)
{
    int n = 0;
    std::size_t i = 0;
    while (n < max) {
        if (n > 0) {
            if (i >= s.size() || s[i] != ':')
                break;
            ++i;
        }
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
            ++i;
        bool neg = false;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            neg = s[i++] == '-';
        if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i])))
            break;
        long long v = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
            if (v < INT_MAX)
                v = v * 10 + (s[i] - '0');
            ++i;
        }
        if (v > INT_MAX)
            v = INT_MAX;
        out[n++] = static_cast<int>(neg ? -v : v);
    }
    return n;
}

bool valid_channel_timeout(std::string_view s)
{
    const auto eq = s.find('=');
    if (eq == 0 || eq == std::string_view::npos)
        return false;
    auto t = parse_time_interval(s.substr(eq + 1));
    return t.has_value();
}

bool valid_auth_method_list(std::string_view list, parse_log& log)
{
    if (list.empty()) {
        log.error("empty authentication method list");
        return false;
    }
    static constexpr std::string_view methods[] = {"none",      "publickey", "password", "keyboard-interactive",
                                                   "hostbased", "gssapi-with-mic"};
    while (true) {
        const auto comma = list.find(',');
        auto method = list.substr(0, comma);
        method = method.substr(0, method.find(':'));
        bool found = false;
        for (auto m : methods)
            found = found || m == method;
        if (!found) {
            log.error("Unknown authentication method \"" + std::string(method) + "\" in list");
            return false;
        }
        if (comma == std::string_view::npos)
            return true;
        list.remove_prefix(comma + 1);
    }
}

bool valid_gss_kex(std::string_view list, parse_log& log)
{
    static constexpr std::string_view names[] = {"gss-gex-sha1-",       "gss-group1-sha1-",    "gss-group14-sha1-",
                                                 "gss-group14-sha256-", "gss-group16-sha512-", "gss-nistp256-sha256-",
                                                 "gss-curve25519-sha256-"};
    while (true) {
        const auto comma = list.find(',');
        const auto name = list.substr(0, comma);
        bool found = false;
        for (auto n : names)
            found = found || n == name;
        if (!found) {
            log.error("Unsupported KEX algorithm \"" + std::string(name.substr(0, 100)) + "\"");
            return false;
        }
        if (comma == std::string_view::npos)
            return true;
        list.remove_prefix(comma + 1);
    }
}

// The first name of a list OpenSSH does not know (for its message).
std::string first_unknown(sshd_algorithm_list kind, std::string_view spec)
{
    if (!spec.empty() && (spec[0] == '+' || spec[0] == '^'))
        spec.remove_prefix(1);
    const auto all = openssh_all_algorithms(kind);
    while (true) {
        const auto comma = spec.find(',');
        const auto name = spec.substr(0, comma);
        if (name.empty() || !name_list_contains(all, name))
            return std::string(name);
        if (comma == std::string_view::npos)
            return {};
        spec.remove_prefix(comma + 1);
    }
}


} // namespace longhaul::detail
