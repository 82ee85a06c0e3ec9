#include "sshd/address_match.hpp"

#include "common/match.hpp"

#include <arpa/inet.h>

#include <cstring>

namespace longhaul {

namespace {

bool parses_as_address(std::string_view s)
{
    char buf[INET6_ADDRSTRLEN];
    if (s.empty() || s.size() >= sizeof buf)
        return false;
    std::memcpy(buf, s.data(), s.size());
    buf[s.size()] = 0;
    unsigned char out[16];
    return inet_pton(AF_INET, buf, out) == 1 || inet_pton(AF_INET6, buf, out) == 1;
}

enum class entry_kind { cidr, pattern, invalid };

// OpenSSH's addr_pton_cidr: an address with an optional decimal mask of at
// most 128 is an address entry (invalid when the mask does not suit the
// family or host bits are set); anything else is a pattern.
entry_kind classify(std::string_view entry)
{
    const auto slash = entry.find('/');
    if (slash != std::string_view::npos) {
        const auto mask = entry.substr(slash + 1);
        if (mask.empty() || mask.size() > 3)
            return entry_kind::pattern;
        unsigned value = 0;
        for (char c : mask) {
            if (c < '0' || c > '9')
                return entry_kind::pattern;
            value = value * 10 + static_cast<unsigned>(c - '0');
        }
        if (value > 128)
            return entry_kind::pattern;
    }
    if (!parses_as_address(entry.substr(0, slash)))
        return entry_kind::pattern;
    return valid_cidr(entry) ? entry_kind::cidr : entry_kind::invalid;
}

} // namespace

addr_list_result addr_match_list(std::string_view address, std::string_view list)
{
    addr_list_result result = addr_list_result::none;
    while (true) {
        const auto comma = list.find(',');
        std::string_view entry = list.substr(0, comma);
        const bool negate = !entry.empty() && entry[0] == '!';
        if (negate)
            entry.remove_prefix(1);
        if (!entry.empty()) {
            bool matched = false;
            switch (classify(entry)) {
            case entry_kind::invalid: return addr_list_result::invalid;
            case entry_kind::cidr:
                if (!address.empty()) {
                    bool ok = true;
                    matched = match_address_list(address, entry, ok) == list_match::positive;
                }
                break;
            case entry_kind::pattern: matched = !address.empty() && match_pattern(address, entry); break;
            }
            if (matched) {
                if (negate)
                    return addr_list_result::negated;
                result = addr_list_result::positive;
            }
        }
        if (comma == std::string_view::npos)
            break;
        list.remove_prefix(comma + 1);
    }
    return result;
}

int match_host_and_ip(std::string_view host, std::string_view address, std::string_view patterns)
{
    const auto ip = addr_match_list(address, patterns);
    if (ip == addr_list_result::invalid)
        return -1;
    if (host.empty() || address.empty() || ip == addr_list_result::negated)
        return 0;
    const auto by_name = match_hostname(host, patterns);
    if (by_name == list_match::negated)
        return 0;
    if (by_name == list_match::none && ip == addr_list_result::none)
        return 0;
    return 1;
}

int match_user_pattern(std::string_view user, std::string_view host, std::string_view address,
                       std::string_view pattern)
{
    const auto at = pattern.find('@');
    if (user.empty() && host.empty() && address.empty()) {
        if (at != std::string_view::npos && addr_match_list({}, pattern.substr(at + 1)) == addr_list_result::invalid)
            return -1;
        return 0;
    }
    if (at == std::string_view::npos)
        return match_pattern(user, pattern) ? 1 : 0;
    if (!match_pattern(user, pattern.substr(0, at)))
        return 0;
    return match_host_and_ip(host, address, pattern.substr(at + 1));
}

} // namespace longhaul
