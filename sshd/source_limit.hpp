// PerSourceMaxStartups / PerSourceNetBlockSize: how many unauthenticated
// connections one source address block may hold at once. The listener asks
// before it forks and releases the slot when the child authenticates or
// ends, as OpenSSH's srclimit.c does. Pure bookkeeping: no sockets here.
#pragma once

#include <sys/socket.h>

#include <climits>
#include <map>
#include <string>

namespace longhaul {

class source_limit {
public:
    // max_per_source INT_MAX: no limit. Prefix lengths as PerSourceNetBlockSize
    // (IPv4 0..32, IPv6 0..128).
    source_limit(int max_per_source, int ipv4_bits, int ipv6_bits) noexcept
        : max_(max_per_source), ipv4_bits_(ipv4_bits), ipv6_bits_(ipv6_bits)
    {
    }

    bool enabled() const noexcept { return max_ != INT_MAX; }
    // The block a peer belongs to: its address masked to the prefix length,
    // as bytes (an IPv4-mapped IPv6 peer counts as IPv4). Empty for other
    // families (not limited).
    std::string block_of(const sockaddr_storage& peer) const;
    // Takes a slot for the block; false when it already holds the maximum.
    bool admit(const std::string& block);
    // Gives a slot back (the connection authenticated or ended).
    void release(const std::string& block);
    int count(const std::string& block) const;
    // "10.1.2.0/24": for log lines.
    static std::string describe(const std::string& block);

private:
    int max_;
    int ipv4_bits_, ipv6_bits_;
    std::map<std::string, int> counts_; // only blocks with a live connection
};

} // namespace longhaul
