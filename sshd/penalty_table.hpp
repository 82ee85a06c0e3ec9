// PerSourcePenalties / PerSourcePenaltyExemptList (OpenSSH 9.8+, srclimit.c):
// a source address block whose connections end badly (failed
// authentication, no authentication at all, LoginGraceTime exceeded, a
// crash) accumulates penalty time; once more than `min` seconds are
// outstanding the listener refuses its connections at accept time until the
// penalty expires. Pure bookkeeping, as source_limit: the listener passes in
// the peer, what happened and the time; no sockets, no clock here. Memory is
// bounded by max-sources4 / max-sources6 entries per family.
#pragma once

#include "common/log.hpp"
#include "sshd/source_limit.hpp"

#include <sys/socket.h>

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace longhaul {

// What ended a connection before it authenticated (OpenSSH's
// SRCLIMIT_PENALTY_*).
enum class penalty_kind { none, crash, authfail, noauth, invaliduser, grace_exceeded, refuseconnection };

// The PerSourcePenalties settings, with OpenSSH 10.5's defaults (seconds).
struct penalty_settings {
    bool enabled = false; // Longhaul's default: see docs/SECURITY.md
    double crash = 90, authfail = 5, noauth = 1, invaliduser = 5, grace_exceeded = 10, refuseconnection = 10;
    double max = 600, min = 15;
    int max_sources4 = 65536, max_sources6 = 65536;
    bool deny_all4 = false, deny_all6 = false; // overflow / overflow6: deny-all (else permissive)

    double seconds(penalty_kind k) const noexcept;
    bool operator==(const penalty_settings&) const = default;
};

// Parses one PerSourcePenalties line's arguments as OpenSSH's servconf.c
// does ("no" and "yes" alone; kind:time, max:, min:, max-sources4/6:N,
// overflow[6]:deny-all|permissive). On error returns OpenSSH's message
// without the "file line N: " prefix.
struct penalty_parse_result {
    penalty_settings settings;
    std::string error; // empty on success
};
// `base` is the value so far: OpenSSH's first-value-wins applies per field,
// so `seen` marks the fields an earlier line already set (bit per field).
penalty_parse_result parse_per_source_penalties(const std::vector<std::string>& args, penalty_settings base,
                                                unsigned& seen);

// OpenSSH's convtime_double(): "1.5", "30s", "1h30m", "2.5m"; -1 when malformed.
double convtime_double(std::string_view s) noexcept;

// The `sshd -T` value, as OpenSSH 10.5 prints it ("no", or every field).
std::string describe(const penalty_settings& s);

class penalty_table {
public:
    using log_fn = std::function<void(log_level, std::string)>;

    // `exempt` is PerSourcePenaltyExemptList (empty: none); the prefix
    // lengths are PerSourceNetBlockSize's.
    penalty_table(penalty_settings s, std::string exempt, int ipv4_bits, int ipv6_bits, log_fn log = {});

    bool enabled() const noexcept { return settings_.enabled; }
    // Why a new connection from `peer` must be refused now, or nullopt.
    std::optional<std::string> refusal(const sockaddr_storage& peer, double now);
    // Records what ended a connection from `peer` before it authenticated.
    void penalise(const sockaddr_storage& peer, penalty_kind kind, double now);

    std::size_t size4() const noexcept { return family_[0].by_block.size(); }
    std::size_t size6() const noexcept { return family_[1].by_block.size(); }

private:
    struct entry {
        double expiry = 0;
        bool active = false;
        const char* reason = "";
    };
    struct family {
        std::map<std::string, entry> by_block;
        std::set<std::pair<double, std::string>> by_expiry;
    };
    bool exempt(const sockaddr_storage& peer) const;
    void expire(double now);
    family& family_of(const std::string& block) { return family_[block[0] == '4' ? 0 : 1]; }
    void log(log_level l, std::string m) const
    {
        if (log_)
            log_(l, std::move(m));
    }

    penalty_settings settings_;
    std::string exempt_;
    source_limit masker_; // PerSourceNetBlockSize's masking, no limit of its own
    int ipv4_bits_, ipv6_bits_;
    log_fn log_;
    family family_[2]; // IPv4, IPv6
};

} // namespace longhaul
