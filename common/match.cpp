#include "common/match.hpp"

#include "common/text_parse.hpp"

#include <arpa/inet.h>

#include <cstring>
#include <string>

namespace longhaul {

bool match_pattern(std::string_view s, std::string_view p) noexcept
{
    // Iterative wildcard match with single-star backtracking: linear in
    // practice and no recursion on hostile patterns.
    std::size_t si = 0, pi = 0, star = std::string_view::npos, mark = 0;
    while (si < s.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
            ++si;
            ++pi;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*')
        ++pi;
    return pi == p.size();
}

namespace {

template <class Fn>
list_match walk_list(std::string_view list, Fn&& matches)
{
    list_match result = list_match::none;
    while (!list.empty()) {
        auto comma = list.find(',');
        auto item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        bool negate = !item.empty() && item[0] == '!';
        if (negate)
            item.remove_prefix(1);
        if (item.empty())
            continue;
        if (matches(item)) {
            if (negate)
                return list_match::negated;
            result = list_match::positive;
        }
    }
    return result;
}

struct parsed_address {
    int family = 0;
    unsigned char bytes[16]{};
};

bool parse_address(std::string_view text, parsed_address& out) noexcept
{
    if (text.size() >= INET6_ADDRSTRLEN)
        return false;
    char buf[INET6_ADDRSTRLEN];
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = 0;
    if (inet_pton(AF_INET, buf, out.bytes) == 1) {
        out.family = AF_INET;
        return true;
    }
    if (inet_pton(AF_INET6, buf, out.bytes) == 1) {
        out.family = AF_INET6;
        return true;
    }
    return false;
}

// Parses "addr/len"; false when malformed or the host bits are not zero (as OpenSSH insists).
bool parse_cidr(std::string_view cidr, parsed_address& net, int& prefix) noexcept
{
    auto slash = cidr.find('/');
    if (!parse_address(cidr.substr(0, slash), net))
        return false;
    const int max = net.family == AF_INET ? 32 : 128;
    prefix = max;
    if (slash != std::string_view::npos) {
        auto len = cidr.substr(slash + 1);
        if (len.empty() || len.size() > 3)
            return false;
        prefix = 0;
        for (char c : len) {
            if (c < '0' || c > '9')
                return false;
            prefix = prefix * 10 + (c - '0');
        }
        if (prefix > max)
            return false;
    }
    for (int bit = prefix; bit < max; ++bit)
        if (net.bytes[bit / 8] & (0x80 >> (bit % 8)))
            return false;
    return true;
}

bool in_cidr(const parsed_address& a, const parsed_address& net, int prefix) noexcept
{
    if (a.family != net.family)
        return false;
    for (int bit = 0; bit < prefix; ++bit) {
        const unsigned char mask = static_cast<unsigned char>(0x80 >> (bit % 8));
        if ((a.bytes[bit / 8] & mask) != (net.bytes[bit / 8] & mask))
            return false;
    }
    return true;
}

} // namespace

list_match match_pattern_list(std::string_view s, std::string_view list, bool fold_case) noexcept
{
    if (!fold_case)
        return walk_list(list, [&](std::string_view pat) { return match_pattern(s, pat); });
    const std::string ls = lowercase(s);
    return walk_list(list, [&](std::string_view pat) { return match_pattern(ls, lowercase(pat)); });
}

bool valid_cidr(std::string_view cidr) noexcept
{
    parsed_address net;
    int prefix = 0;
    return parse_cidr(cidr, net, prefix);
}

namespace {

enum class entry_kind { cidr, pattern, invalid };

// OpenSSH's addr_pton_cidr: an address with an optional decimal mask of at
// most 128 is an address entry (invalid when the mask does not suit the
// family or host bits are set); anything else is a pattern.
entry_kind classify(std::string_view entry, parsed_address& net, int& prefix) noexcept
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
    if (entry.substr(0, slash).empty() || !parse_address(entry.substr(0, slash), net))
        return entry_kind::pattern;
    return parse_cidr(entry, net, prefix) ? entry_kind::cidr : entry_kind::invalid;
}

} // namespace

addr_list_result addr_match_list(std::string_view address, std::string_view list)
{
    parsed_address addr;
    const bool have_addr = !address.empty() && parse_address(address, addr);
    addr_list_result result = addr_list_result::none;
    while (true) {
        const auto comma = list.find(',');
        std::string_view entry = list.substr(0, comma);
        const bool negate = !entry.empty() && entry[0] == '!';
        if (negate)
            entry.remove_prefix(1);
        if (!entry.empty()) {
            parsed_address net;
            int prefix = 0;
            bool matched = false;
            switch (classify(entry, net, prefix)) {
            case entry_kind::invalid: return addr_list_result::invalid;
            case entry_kind::cidr: matched = have_addr && in_cidr(addr, net, prefix); break;
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
