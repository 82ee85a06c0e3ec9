#include "sshd/source_limit.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace longhaul {

namespace {

// Keeps the first `bits` bits of an address, zeroes the rest.
std::string masked(const std::uint8_t* addr, std::size_t len, int bits, char family)
{
    std::string out(1, family);
    for (std::size_t i = 0; i < len; ++i) {
        const int keep = std::max(0, std::min(8, bits - static_cast<int>(8 * i)));
        const auto mask = static_cast<std::uint8_t>(keep == 0 ? 0 : 0xff << (8 - keep));
        out.push_back(static_cast<char>(addr[i] & mask));
    }
    out.push_back(static_cast<char>(bits));
    return out;
}

} // namespace

std::string source_limit::block_of(const sockaddr_storage& peer) const
{
    if (peer.ss_family == AF_INET) {
        const auto& a = reinterpret_cast<const sockaddr_in&>(peer).sin_addr;
        return masked(reinterpret_cast<const std::uint8_t*>(&a), 4, ipv4_bits_, '4');
    }
    if (peer.ss_family == AF_INET6) {
        const auto& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&a))
            return masked(a.s6_addr + 12, 4, ipv4_bits_, '4');
        return masked(a.s6_addr, 16, ipv6_bits_, '6');
    }
    return {};
}

bool source_limit::admit(const std::string& block)
{
    if (!enabled() || block.empty())
        return true;
    int& n = counts_[block];
    if (n >= max_)
        return false;
    ++n;
    return true;
}

void source_limit::release(const std::string& block)
{
    auto it = counts_.find(block);
    if (it == counts_.end())
        return;
    if (--it->second <= 0)
        counts_.erase(it);
}

int source_limit::count(const std::string& block) const
{
    auto it = counts_.find(block);
    return it == counts_.end() ? 0 : it->second;
}

std::string source_limit::describe(const std::string& block)
{
    if (block.size() != 6 && block.size() != 18)
        return "?";
    const bool v4 = block[0] == '4';
    char text[INET6_ADDRSTRLEN] = "?";
    inet_ntop(v4 ? AF_INET : AF_INET6, block.data() + 1, text, sizeof text);
    return std::string(text) + "/" + std::to_string(static_cast<unsigned char>(block.back()));
}

} // namespace longhaul
