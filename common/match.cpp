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

list_match match_address_list(std::string_view address, std::string_view list, bool& ok) noexcept
{
    ok = true;
    parsed_address addr;
    const bool have_addr = parse_address(address, addr);
    return walk_list(list, [&](std::string_view item) {
        // Entries with wildcards are patterns; the rest must be addresses or CIDR blocks.
        if (item.find_first_of("*?") != std::string_view::npos)
            return match_pattern(address, item);
        parsed_address net;
        int prefix = 0;
        if (!parse_cidr(item, net, prefix)) {
            ok = false;
            return false;
        }
        return have_addr && in_cidr(addr, net, prefix);
    });
}

} // namespace longhaul
