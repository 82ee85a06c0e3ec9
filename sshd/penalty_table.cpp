#include "sshd/penalty_table.hpp"

#include "common/config_line.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace longhaul {

namespace {

// Which fields a PerSourcePenalties line set (first value wins per field,
// as OpenSSH keeps each at -1 until set).
enum penalty_field : unsigned {
    f_enabled = 1u << 0,
    f_crash = 1u << 1,
    f_authfail = 1u << 2,
    f_noauth = 1u << 3,
    f_invaliduser = 1u << 4,
    f_grace = 1u << 5,
    f_refuse = 1u << 6,
    f_max = 1u << 7,
    f_min = 1u << 8,
    f_sources4 = 1u << 9,
    f_sources6 = 1u << 10,
    f_overflow4 = 1u << 11,
    f_overflow6 = 1u << 12,
};

std::string seconds_text(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", v);
    return buf;
}

std::string three_decimals(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

const char* reason_of(penalty_kind k) noexcept
{
    switch (k) {
    case penalty_kind::crash: return "penalty: caused crash";
    case penalty_kind::authfail: return "penalty: failed authentication";
    case penalty_kind::noauth: return "penalty: connections without attempting authentication";
    case penalty_kind::invaliduser: return "penalty: attempted authentication by invalid user";
    case penalty_kind::refuseconnection: return "penalty: connection prohibited by RefuseConnection";
    case penalty_kind::grace_exceeded: return "penalty: exceeded LoginGraceTime";
    case penalty_kind::none: break;
    }
    return "";
}

// The peer's numeric address, an IPv4-mapped IPv6 one as plain IPv4 (what
// the listener logs and what PerSourcePenaltyExemptList is matched against).
std::string address_text(const sockaddr_storage& peer)
{
    char text[INET6_ADDRSTRLEN] = "UNKNOWN";
    if (peer.ss_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, text, sizeof text);
    } else if (peer.ss_family == AF_INET6) {
        const auto& a = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&a))
            inet_ntop(AF_INET, a.s6_addr + 12, text, sizeof text);
        else
            inet_ntop(AF_INET6, &a, text, sizeof text);
    }
    return text;
}

} // namespace

double penalty_settings::seconds(penalty_kind k) const noexcept
{
    switch (k) {
    case penalty_kind::crash: return crash;
    case penalty_kind::authfail: return authfail;
    case penalty_kind::noauth: return noauth;
    case penalty_kind::invaliduser: return invaliduser;
    case penalty_kind::grace_exceeded: return grace_exceeded;
    case penalty_kind::refuseconnection: return refuseconnection;
    case penalty_kind::none: break;
    }
    return 0;
}

double convtime_double(std::string_view s) noexcept
{
    if (s.empty())
        return -1;
    double total = 0;
    bool seen_seconds = false;
    std::size_t i = 0;
    while (i < s.size()) {
        const std::size_t start = i;
        bool decimal = false;
        while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) {
            decimal = decimal || s[i] == '.';
            ++i;
        }
        // A point needs a digit after it ("1." is refused, ".5" is not).
        if (i == start || s[i - 1] == '.')
            return -1;
        // Digits and at most one point, as strtod reads a plain decimal.
        const std::string number(s.substr(start, i - start));
        char* end = nullptr;
        const double val = std::strtod(number.c_str(), &end);
        if (end != number.c_str() + number.size() || val < 0)
            return -1;
        const char unit = i < s.size() ? s[i] : '\0';
        const auto multiplier = static_cast<double>(unit == '\0' ? 1 : time_unit_seconds(unit));
        if (multiplier == 0)
            return -1;
        if (multiplier == 1) { // seconds, with or without the 's'
            if (seen_seconds)
                return -1;
            seen_seconds = true;
        }
        if (unit != '\0')
            ++i;
        // A fraction only in seconds, the last field ("1m1.5", "1.5s";
        // not "2.5m" or "1.5s30m"), as OpenSSH 10.5 takes them.
        if (decimal && (multiplier != 1 || i < s.size()))
            return -1;
        if (val >= DBL_MAX / multiplier || total >= DBL_MAX - val * multiplier)
            return -1;
        total += val * multiplier;
    }
    return total;
}

penalty_parse_result parse_per_source_penalties(const std::vector<std::string>& args, penalty_settings base,
                                                unsigned& seen)
{
    static constexpr std::string_view kw = "PerSourcePenalties";
    penalty_parse_result r{base, {}};
    penalty_settings& s = r.settings;
    if (args.empty()) {
        r.error = "no " + std::string(kw) + " specified";
        return r;
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        const bool no = iequals(arg, "no");
        if (no || iequals(arg, "yes")) {
            if (i + 1 < args.size()) {
                r.error = "keyword " + std::string(kw) + " \"" + arg + "\" argument must appear alone.";
                return r;
            }
            if (!(seen & f_enabled)) {
                s.enabled = !no;
                seen |= f_enabled;
            }
            continue;
        }
        struct time_field {
            std::string_view prefix;
            double penalty_settings::*member;
            unsigned bit;
        };
        static constexpr time_field times[] = {
            {"crash:", &penalty_settings::crash, f_crash},
            {"authfail:", &penalty_settings::authfail, f_authfail},
            {"invaliduser:", &penalty_settings::invaliduser, f_invaliduser},
            {"noauth:", &penalty_settings::noauth, f_noauth},
            {"grace-exceeded:", &penalty_settings::grace_exceeded, f_grace},
            {"refuseconnection:", &penalty_settings::refuseconnection, f_refuse},
            {"max:", &penalty_settings::max, f_max},
            {"min:", &penalty_settings::min, f_min},
        };
        bool done = false;
        for (const auto& t : times) {
            if (!std::string_view(arg).starts_with(t.prefix))
                continue;
            const double v = convtime_double(std::string_view(arg).substr(t.prefix.size()));
            if (v < 0) {
                r.error = "invalid " + std::string(kw) + " time value.";
                return r;
            }
            // Any field set turns penalties on, as in OpenSSH.
            if (!(seen & t.bit)) {
                s.*t.member = v;
                seen |= t.bit;
                s.enabled = true;
            }
            done = true;
            break;
        }
        if (done)
            continue;
        if (arg.starts_with("max-sources4:") || arg.starts_with("max-sources6:")) {
            const bool v4 = arg[11] == '4';
            int value = 0;
            if (const char* why = atoi_err(std::string_view(arg).substr(13), value)) {
                r.error = std::string(kw) + " value " + why + ".";
                return r;
            }
            const unsigned bit = v4 ? f_sources4 : f_sources6;
            if (!(seen & bit)) {
                (v4 ? s.max_sources4 : s.max_sources6) = value;
                seen |= bit;
                s.enabled = true;
            }
            continue;
        }
        const bool o4 = arg == "overflow:deny-all" || arg == "overflow:permissive";
        const bool o6 = arg == "overflow6:deny-all" || arg == "overflow6:permissive";
        if (!o4 && !o6) {
            r.error = "unsupported " + std::string(kw) + " keyword " + arg;
            return r;
        }
        const bool deny = arg.ends_with(":deny-all");
        const unsigned bit = o4 ? f_overflow4 : f_overflow6;
        if (!(seen & bit)) {
            (o4 ? s.deny_all4 : s.deny_all6) = deny;
            seen |= bit;
            s.enabled = true;
            // overflow6 follows overflow unless given itself (OpenSSH's
            // fill_default_server_options).
            if (o4 && !(seen & f_overflow6))
                s.deny_all6 = deny;
        }
    }
    return r;
}

std::string describe(const penalty_settings& s)
{
    if (!s.enabled)
        return "no";
    return "crash:" + seconds_text(s.crash) + " authfail:" + seconds_text(s.authfail) +
           " noauth:" + seconds_text(s.noauth) + " invaliduser:" + seconds_text(s.invaliduser) +
           " grace-exceeded:" + seconds_text(s.grace_exceeded) +
           " refuseconnection:" + seconds_text(s.refuseconnection) + " max:" + seconds_text(s.max) +
           " min:" + seconds_text(s.min) + " max-sources4:" + std::to_string(s.max_sources4) +
           " max-sources6:" + std::to_string(s.max_sources6) +
           " overflow:" + (s.deny_all4 ? "deny-all" : "permissive") +
           " overflow6:" + (s.deny_all6 ? "deny-all" : "permissive");
}

penalty_table::penalty_table(penalty_settings s, std::string exempt, int ipv4_bits, int ipv6_bits, log_fn log)
    : settings_(s), exempt_(std::move(exempt)), masker_(INT_MAX, ipv4_bits, ipv6_bits), ipv4_bits_(ipv4_bits),
      ipv6_bits_(ipv6_bits), log_(std::move(log))
{
}

bool penalty_table::exempt(const sockaddr_storage& peer) const
{
    return !exempt_.empty() && addr_match_list(address_text(peer), exempt_) == addr_list_result::positive;
}

void penalty_table::expire(double now)
{
    for (family& f : family_) {
        while (!f.by_expiry.empty() && f.by_expiry.begin()->first < now) {
            f.by_block.erase(f.by_expiry.begin()->second);
            f.by_expiry.erase(f.by_expiry.begin());
        }
    }
}

std::optional<std::string> penalty_table::refusal(const sockaddr_storage& peer, double now)
{
    if (!settings_.enabled || exempt(peer))
        return std::nullopt;
    const std::string block = masker_.block_of(peer);
    if (block.empty())
        return std::nullopt;
    expire(now);
    const bool v4 = block[0] == '4';
    family& f = family_of(block);
    if (f.by_block.size() >= static_cast<std::size_t>(v4 ? settings_.max_sources4 : settings_.max_sources6) &&
        (v4 ? settings_.deny_all4 : settings_.deny_all6))
        return std::string("too many penalised addresses");
    auto it = f.by_block.find(block);
    if (it == f.by_block.end() || it->second.expiry < now || !it->second.active)
        return std::nullopt;
    return std::string(it->second.reason);
}

void penalty_table::penalise(const sockaddr_storage& peer, penalty_kind kind, double now)
{
    if (!settings_.enabled || kind == penalty_kind::none)
        return;
    if (exempt(peer)) {
        log(log_level::debug3, "srclimit_penalise: address " + address_text(peer) + " is exempt");
        return;
    }
    const double secs = settings_.seconds(kind);
    const char* reason = reason_of(kind);
    if (secs <= 0)
        return;
    const std::string block = masker_.block_of(peer);
    if (block.empty())
        return;
    const bool v4 = block[0] == '4';
    const char* t = v4 ? "ipv4" : "ipv6";
    // The peer's own address with the block's prefix length, as OpenSSH
    // logs it.
    const std::string netmask = address_text(peer) + "/" + std::to_string(v4 ? ipv4_bits_ : ipv6_bits_);
    expire(now);
    family& f = family_of(block);
    const auto max_sources = static_cast<std::size_t>(v4 ? settings_.max_sources4 : settings_.max_sources6);
    if (f.by_block.size() >= max_sources && (v4 ? settings_.deny_all4 : settings_.deny_all6)) {
        log(log_level::verbose, std::string("srclimit_penalise: ") + t + " penalty table full, cannot penalise " +
                                    netmask + " for " + reason);
        return;
    }
    auto it = f.by_block.find(block);
    if (it == f.by_block.end()) {
        entry e{now + secs, secs > settings_.min, reason};
        f.by_block.emplace(block, e);
        f.by_expiry.emplace(e.expiry, block);
        log(e.active ? log_level::info : log_level::verbose,
            std::string("srclimit_penalise: ") + t + ": new " + netmask + " " + (e.active ? "active" : "deferred") +
                " penalty of " + three_decimals(secs) + " seconds for " + reason);
        // Permissive overflow: the soonest to expire make room.
        while (f.by_block.size() > max_sources && !f.by_expiry.empty()) {
            const auto first = f.by_expiry.begin();
            log(log_level::debug3, std::string("srclimit_early_expire_penalties_from_tree: ") + t + " overflow, remove " +
                                       source_limit::describe(first->second));
            f.by_block.erase(first->second);
            f.by_expiry.erase(first);
        }
        return;
    }
    entry& e = it->second;
    log(log_level::debug1, std::string("srclimit_penalise: ") + (e.active ? "active" : "inactive") + " penalty for " +
                               t + " " + netmask + " already exists, " +
                               std::to_string(static_cast<long long>(e.expiry - now)) + " seconds remaining");
    f.by_expiry.erase({e.expiry, block});
    // Accumulate, up to max outstanding.
    e.expiry += secs;
    if (e.expiry - now > settings_.max)
        e.expiry = now + settings_.max;
    if (e.expiry - now > settings_.min && !e.active) {
        log(log_level::info, "srclimit_penalise: " + netmask + ": activating " + t + " penalty of " +
                                 three_decimals(e.expiry - now) + " seconds for " + reason);
        e.active = true;
    }
    e.reason = reason;
    f.by_expiry.emplace(e.expiry, block);
}

} // namespace longhaul
