// Small text parsers that ssh_config, sshd_config, authorized_keys and the
// command lines share. OpenSSH keeps these in misc.c, which the client and
// the server link alike, so one implementation here serves both sides and
// follows OpenSSH 9.2's behaviour (and error wording) for each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// Space, tab, CR or LF: what key files and signature armor treat as blank.
inline bool is_space_char(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
// `s` without its leading is_space_char characters.
inline std::string_view skip_spaces(std::string_view s) noexcept
{
    while (!s.empty() && is_space_char(s.front()))
        s.remove_prefix(1);
    return s;
}

// ASCII case-insensitive equality, as strcasecmp(a, b) == 0.
bool iequals(std::string_view a, std::string_view b) noexcept;

// `s` with its letters lowercased (host names, keywords, Match attributes).
std::string lowercase(std::string_view s);

// OpenBSD's strtonum(3): optional leading white space and sign, decimal
// digits and nothing after, within [lo, hi]. On failure `why` is its error
// text: "invalid", "too small" or "too large".
std::optional<long long> strtonum(std::string_view s, long long lo, long long hi, const char*& why);

// OpenSSH's atoi_err(): a count (0..INT_MAX) in `value`; nullptr on success,
// else "missing" (empty text) or strtonum's error text.
const char* atoi_err(std::string_view s, int& value);

// OpenSSH's a2port(): a decimal number 0..65535 or a TCP service name from
// /etc/services ("ssh"); -1 when neither. Callers refuse 0 where OpenSSH does.
int parse_port(std::string_view s);

// Tunnel device ids as OpenSSH's a2tun() gives them (SSH_TUNID_ANY,
// SSH_TUNID_ERR).
inline constexpr int tun_id_any = 0x7fffffff;
inline constexpr int tun_id_error = 0x7ffffffe;
// a2tun(s, NULL): "any" (any case) or a number 0..0x7ffffffd; tun_id_error
// otherwise (authorized_keys tunnel=).
int parse_tunnel_device(std::string_view s);
// a2tun(s, &remote): "local[:remote]" (-w, Tunnel). Returns the local id and
// stores the remote one (tun_id_any without a colon); tun_id_error when the
// remote part is bad, whatever the local part.
int parse_tunnel_device(std::string_view s, int& remote);

// OpenSSH's parse_ipqos(): a DSCP or TOS name (af11..af43, cs0..cs7, ef,
// le, lowdelay, throughput, reliability, none; any case) or a number
// 0..255 as strtol(3) reads it with base 0 ("0x20", "040", " +32"); -1
// otherwise. "none" is INT_MAX.
int parse_ipqos(std::string_view s);
// OpenSSH's iptos2str(): the first name with that value, else "0x%02x".
std::string ipqos_name(int value);

// OpenSSH's hpdelim2(): the first field of "host:port...", where the host
// may be "[bracketed]" (an IPv6 address); `field` keeps the brackets.
// `delim` is the ':' or '/' that ended the field and `rest` what follows
// it; both are empty (and `more` false) when the field ran to the end.
struct hpdelim_result {
    std::string_view field;
    std::string_view rest;
    char delim = 0;
    bool more = false;
};
// nullopt where hpdelim2 gives up: an unclosed '[', or a "[...]" followed by
// something other than ':', '/' or the end.
std::optional<hpdelim_result> hpdelim2(std::string_view s);
// OpenSSH's hpdelim(): hpdelim2 where only ':' may end the host
// ("host/22" is refused, as by PermitOpen, ListenAddress and permitopen=).
std::optional<hpdelim_result> hpdelim(std::string_view s);
// OpenSSH's cleanhostname(): "[addr]" -> "addr"; anything else unchanged.
std::string_view clean_hostname(std::string_view host) noexcept;

// OpenBSD's scan_scaled(3), as OpenSSH 9.2 reads RekeyLimit on both sides:
// "[+|-]N[.F][BKMGTPE]" in powers of 1024. The fraction only counts with a
// unit, and is cut to fit as scan_scaled cuts it ("1.25E" is not 1.25 * 2^60
// but 1383505805528216371); a unit may be followed by punctuation ("1K!")
// but not by a letter or digit; no digits at all reads as 0 ("K", "."). On
// failure `why` is the strerror text OpenSSH prints: "Invalid argument" or
// "Numerical result out of range".
std::optional<long long> scan_scaled(std::string_view s, const char*& why);

// ChannelWindowMax / ConnectionWindowMax (ssh_config and sshd_config):
// "auto" (0: the rule in channel/window_policy) or a size as scan_scaled
// reads it, at least 64 KiB and at most `max`.
std::optional<std::uint64_t> parse_window_size(std::string_view s, std::uint64_t max, std::string& why);

// OpenSSH's parse_absolute_time(): YYYYMMDD, YYYYMMDDHHMM or
// YYYYMMDDHHMMSS, local time unless it ends in "Z" or "UTC" (either case),
// read by strptime(3) as OpenSSH reads it; nullopt when malformed or before
// the epoch. ssh-keygen -V, authorized_keys expiry-time=, allowed_signers
// valid-after= / valid-before= and -Y's verify-time=.
std::optional<std::uint64_t> parse_absolute_time(std::string_view s);
// OpenSSH's format_absolute_time(): "2026-12-06T01:20:00", local time.
std::string format_absolute_time(std::uint64_t t);

} // namespace longhaul
