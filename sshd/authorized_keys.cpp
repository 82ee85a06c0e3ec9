#include "sshd/authorized_keys.hpp"

#include "common/keys/fingerprint.hpp"
#include "common/keys/key_lines.hpp"
#include "common/match.hpp"
#include "common/percent_expand.hpp"
#include "common/text_parse.hpp"
#include "sshd/certificate_auth.hpp"
#include "sshd/sshd_config_keywords.hpp"

#include <cctype>
#include <cstring>

namespace longhaul {

namespace {

constexpr std::size_t max_environment = 1024; // OpenSSH's SSH_AUTHOPT_ENV_MAX
constexpr std::size_t max_permits = 4096;     // SSH_AUTHOPT_PERMIT_MAX

bool valid_env_name(std::string_view name)
{
    if (name.empty())
        return false;
    for (char c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
            return false;
    return true;
}

// permitopen/permitlisten values after OpenSSH's hpdelim: "host:port" or
// "[v6]:port", port a number or "*". nullptr when valid, else the reason.
const char* permit_problem(std::string_view v)
{
    const auto f = hpdelim(v);
    // NI_MAXHOST, counting the brackets as OpenSSH does.
    if (!f || f->field.size() >= 1025)
        return "invalid permission hostname";
    if (!f->more || (f->rest != "*" && parse_port(f->rest) <= 0))
        return "invalid permission port";
    return nullptr;
}

std::string format_time(std::uint64_t t)
{
    const std::time_t tt = static_cast<std::time_t>(t);
    std::tm tm{};
    char buf[64];
    if (localtime_r(&tt, &tm) == nullptr || std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        return std::to_string(t);
    return buf;
}

// Whether an options field that failed to parse as a key line has an
// unterminated quote (OpenSSH's "invalid key option string").
bool unterminated_options(std::string_view line)
{
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (!quoted && (c == ' ' || c == '\t'))
            return false;
        if (c == '\\' && i + 1 < line.size() && line[i + 1] == '"')
            ++i;
        else if (c == '"')
            quoted = !quoted;
    }
    return quoted;
}

} // namespace

int match_cidr_list(std::string_view address, std::string_view list)
{
    // OpenSSH's addr_match_cidr_list: CIDR blocks and addresses only (no
    // patterns, no negation); any other entry makes the list invalid.
    int result = 0;
    while (true) {
        const auto comma = list.find(',');
        const std::string_view entry = list.substr(0, comma);
        if (entry.empty() || entry.size() > 46 + 3 || !valid_cidr(entry))
            return -1;
        if (!address.empty() && addr_match_list(address, entry) == addr_list_result::positive)
            result = 1;
        if (comma == std::string_view::npos)
            return result;
        list.remove_prefix(comma + 1);
    }
}

std::optional<std::uint64_t> parse_expiry_time(std::string_view s)
{
    return parse_absolute_time(s);
}

result<authorized_key_options> parse_authorized_key_options(std::string_view options, std::string& reason)
{
    authorized_key_options o;
    if (options.empty())
        return o;
    auto parsed = parse_key_options(options);
    if (!parsed) {
        reason = "unexpected end-of-options";
        return errc::invalid_format;
    }
    auto fail = [&](const char* why) -> result<authorized_key_options> {
        reason = why;
        return errc::invalid_format;
    };
    for (const auto& opt : *parsed) {
        const std::string& n = opt.name;
        const bool has_value = opt.value.has_value();
        const std::string v = opt.value.value_or("");
        // Flags take no value, valued options need one.
        auto flag = [&](std::string_view name) { return !has_value && iequals(n, name); };
        auto valued = [&](std::string_view name) { return has_value && iequals(n, name); };
        if (flag("restrict")) {
            o.restricted = true;
            o.permit_port_forwarding = o.permit_agent_forwarding = o.permit_x11_forwarding = false;
            o.permit_pty = o.permit_user_rc = false;
        } else if (flag("cert-authority")) {
            o.cert_authority = true;
        } else if (flag("port-forwarding") || flag("no-port-forwarding")) {
            o.permit_port_forwarding = !iequals(n.substr(0, 3), "no-");
        } else if (flag("agent-forwarding") || flag("no-agent-forwarding")) {
            o.permit_agent_forwarding = !iequals(n.substr(0, 3), "no-");
        } else if (flag("x11-forwarding") || flag("no-x11-forwarding")) {
            o.permit_x11_forwarding = !iequals(n.substr(0, 3), "no-");
        } else if (flag("pty") || flag("no-pty")) {
            o.permit_pty = !iequals(n.substr(0, 3), "no-");
        } else if (flag("user-rc") || flag("no-user-rc")) {
            o.permit_user_rc = !iequals(n.substr(0, 3), "no-");
        } else if (flag("touch-required") || flag("no-touch-required")) {
            o.no_touch_required = iequals(n.substr(0, 3), "no-");
        } else if (flag("verify-required") || flag("no-verify-required")) {
            o.verify_required = !iequals(n.substr(0, 3), "no-");
        } else if (valued("command")) {
            if (o.force_command)
                return fail("multiple \"command\" clauses");
            o.force_command = v;
        } else if (valued("principals")) {
            if (o.principals)
                return fail("multiple \"principals\" clauses");
            o.principals = v;
        } else if (valued("from")) {
            if (o.required_from)
                return fail("multiple \"from\" clauses");
            o.required_from = v;
        } else if (valued("expiry-time")) {
            auto t = parse_expiry_time(v);
            if (!t)
                return fail("invalid expires time");
            // Several expiry-time options: the earliest counts.
            if (!o.valid_before || *t < *o.valid_before)
                o.valid_before = *t;
        } else if (valued("environment")) {
            if (o.environment.size() > max_environment)
                return fail("too many environment strings");
            const auto eq = v.find('=');
            if (eq == std::string::npos || !valid_env_name(std::string_view(v).substr(0, eq)))
                return fail("invalid environment string");
            bool duplicate = false;
            for (const auto& e : o.environment)
                duplicate = duplicate || (e.compare(0, eq + 1, v, 0, eq + 1) == 0);
            if (!duplicate) // the first value of a name wins
                o.environment.push_back(v);
        } else if (valued("permitopen") || valued("permitlisten")) {
            const bool listen = iequals(n, "permitlisten");
            auto& list = listen ? o.permit_listen : o.permit_open;
            if (list.size() > max_permits)
                return fail("too many permission directives");
            std::string entry = v;
            if (listen && entry.find(':') == std::string::npos)
                entry = "*:" + entry;
            if (const char* problem = permit_problem(entry))
                return fail(problem);
            list.push_back(std::move(entry));
        } else if (valued("tunnel")) {
            // a2tun(v, NULL): a ":remote" part is not meaningful here.
            const int t = parse_tunnel_device(v);
            if (t == tun_id_error)
                return fail("invalid tun device");
            o.force_tunnel_device = t;
        } else {
            return fail("unknown key option");
        }
    }
    return o;
}

std::vector<std::string> permitted_user_environment(const std::vector<std::string>& environment, bool permit,
                                                    std::string_view patterns)
{
    std::vector<std::string> out;
    if (!permit)
        return out;
    for (const auto& e : environment) {
        const auto eq = e.find('=');
        if (eq == std::string::npos)
            continue;
        if (patterns.empty() ||
            match_pattern_list(std::string_view(e).substr(0, eq), patterns, false) == list_match::positive)
            out.push_back(e);
    }
    return out;
}

bool authorise_key_options(const authorized_key_options& opts, bool allow_cert_authority, std::string_view where,
                           const authorized_keys_context& ctx, std::vector<log_message>& out)
{
    auto log = [&](syslog_level level, std::string text) { out.push_back({level, std::move(text)}); };
    const std::string loc(where);
    if (opts.valid_before && ctx.now > 0 && *opts.valid_before < static_cast<std::uint64_t>(ctx.now)) {
        log(syslog_level::debug1, loc + ": entry expired at " + format_time(*opts.valid_before));
        return false;
    }
    if (opts.principals && !opts.cert_authority) {
        log(syslog_level::debug1, loc + ": principals on non-CA key");
        return false;
    }
    if (!allow_cert_authority && opts.cert_authority) {
        log(syslog_level::debug1, loc + ": cert-authority flag invalid here");
        return false;
    }
    if (opts.required_from) {
        const int m = match_host_and_ip(ctx.remote_host, ctx.remote_address, *opts.required_from);
        if (m != 1) {
            if (m < 0)
                log(syslog_level::debug1, loc + ": invalid from criteria");
            log(syslog_level::info, loc + ": Authentication tried for " + ctx.user.substr(0, 100) +
                                        " with correct key but not from a permitted host (host=" +
                                        ctx.remote_host.substr(0, 200) + ", ip=" + ctx.remote_address.substr(0, 200) +
                                        ", required=" + opts.required_from->substr(0, 200) + ").");
            return false;
        }
    }
    if (opts.required_from_cert) {
        const int m = match_cidr_list(ctx.remote_address, *opts.required_from_cert);
        if (m != 1) {
            if (m < 0)
                log(syslog_level::error, loc + ": Certificate source-address invalid");
            log(syslog_level::info, loc + ": Authentication tried for " + ctx.user.substr(0, 100) +
                                        " with valid certificate but not from a permitted source address (" +
                                        ctx.remote_address.substr(0, 200) + ").");
            return false;
        }
    }
    return true;
}

namespace {

// Reads every line of an authorized_keys file or command output, as
// OpenSSH does, and hands each key line to `check` until one matches.
template <typename Check>
authorized_keys_result scan_authorized_keys(std::string_view contents, std::string_view source, Check check)
{
    authorized_keys_result r;
    std::size_t line_number = 0;
    while (!contents.empty()) {
        const auto nl = contents.find('\n');
        std::string_view line = contents.substr(0, nl);
        contents = nl == std::string_view::npos ? std::string_view{} : contents.substr(nl + 1);
        ++line_number;
        // Every line is read; the first accepted one counts.
        if (r.match || is_blank_or_comment(line))
            continue;
        const std::string loc = std::string(source) + ":" + std::to_string(line_number);
        auto parsed = parse_authorized_keys_line(line);
        if (!parsed) {
            std::string_view trimmed = line;
            while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\t'))
                trimmed.remove_prefix(1);
            if (unterminated_options(trimmed))
                r.log.push_back({syslog_level::error, "invalid key option string"});
            continue;
        }
        check(*parsed, loc, r);
    }
    return r;
}

} // namespace

authorized_keys_result check_authorized_keys(std::string_view contents, std::string_view source,
                                             const public_key& key, const authorized_keys_context& ctx)
{
    return scan_authorized_keys(contents, source, [&](const public_key_line& parsed, const std::string& loc,
                                                      authorized_keys_result& r) {
        auto log = [&](syslog_level level, std::string text) { r.log.push_back({level, std::move(text)}); };
        if (!(parsed.key == key))
            return;
        std::string reason;
        auto opts = parse_authorized_key_options(parsed.options, reason);
        if (!opts) {
            log(syslog_level::debug1, loc + ": bad key options: " + reason);
            return;
        }
        // A plain key on a cert-authority line is not a match.
        if (opts->cert_authority)
            return;
        const std::string fp = key_fingerprint(key, ctx.fingerprint);
        const std::string type(key_type_short_name(key.type()));
        log(syslog_level::debug1, loc + ": matching key found: " + type + " " + fp);
        if (!authorise_key_options(*opts, true, loc, ctx, r.log)) {
            log(syslog_level::error, "Refused by key options");
            return;
        }
        log(syslog_level::verbose, "Accepted key " + type + " " + fp + " found at " + loc);
        authorized_key_match m;
        m.location = loc;
        m.environment = permitted_user_environment(opts->environment, ctx.permit_user_environment,
                                                   ctx.permit_user_environment_patterns);
        m.options = std::move(*opts);
        r.match = std::move(m);
    });
}

authorized_keys_result check_authorized_keys(std::string_view contents, std::string_view source,
                                             const certificate& cert, const authorized_keys_context& ctx)
{
    return scan_authorized_keys(contents, source, [&](const public_key_line& parsed, const std::string& loc,
                                                      authorized_keys_result& r) {
        // Only the CA's key can match, and only on a cert-authority line.
        if (!(parsed.key == cert.signature_key()))
            return;
        std::string reason;
        auto opts = parse_authorized_key_options(parsed.options, reason);
        if (!opts) {
            r.log.push_back({syslog_level::debug1, loc + ": bad key options: " + reason});
            return;
        }
        if (!opts->cert_authority)
            return;
        r.match = check_certificate_authority_line(cert, *opts, loc, ctx, r.log);
    });
}

result<std::string> expand_authorized_keys_path(std::string_view pattern, const user_account& user, std::string& error)
{
    auto expanded = percent_expand(pattern, {{'h', user.home}, {'u', user.name}, {'U', std::to_string(user.uid)}}, error);
    if (!expanded)
        return expanded.error();
    if (!expanded->empty() && (*expanded)[0] == '/')
        return expanded;
    std::string out = user.home + "/" + *expanded;
    if (out.size() >= 4096) {
        error = "expand_authorized_keys: path too long";
        return errc::too_large;
    }
    return out;
}

std::vector<std::string> authorized_keys_paths(const server_config& config, const user_account& user,
                                               std::vector<log_message>& log)
{
    std::vector<std::string> out;
    for (const auto& pattern : config.authorized_keys_files) {
        if (iequals(pattern, "none"))
            continue;
        std::string error;
        auto path = expand_authorized_keys_path(pattern, user, error);
        if (!path) {
            log.push_back({syslog_level::error, error});
            continue;
        }
        out.push_back(std::move(*path));
    }
    return out;
}

std::optional<authorized_key_match> merge_key_options(const authorized_key_match& primary,
                                                      const authorized_key_match& additional, std::string& error)
{
    const authorized_key_options& a = primary.options;
    const authorized_key_options& b = additional.options;
    authorized_key_match out;
    out.location = primary.location + "," + additional.location;
    authorized_key_options& o = out.options;
    if (a.force_command && b.force_command && *a.force_command != *b.force_command) {
        error = "forced command options do not match";
        return std::nullopt;
    }
    o.force_command = a.force_command ? a.force_command : b.force_command;
    // A permission holds only if both keys grant it.
    o.permit_port_forwarding = a.permit_port_forwarding && b.permit_port_forwarding;
    o.permit_agent_forwarding = a.permit_agent_forwarding && b.permit_agent_forwarding;
    o.permit_x11_forwarding = a.permit_x11_forwarding && b.permit_x11_forwarding;
    o.permit_pty = a.permit_pty && b.permit_pty;
    o.permit_user_rc = a.permit_user_rc && b.permit_user_rc;
    o.restricted = a.restricted || b.restricted;
    o.verify_required = a.verify_required || b.verify_required;
    o.no_touch_required = a.no_touch_required && b.no_touch_required;
    // The earliest expiry wins.
    o.valid_before = a.valid_before;
    if (b.valid_before && (!o.valid_before || *b.valid_before < *o.valid_before))
        o.valid_before = b.valid_before;
    // Lists and the rest prefer the primary (cert_authority and principals
    // are cleared, as OpenSSH clears them).
    o.required_from = a.required_from ? a.required_from : b.required_from;
    o.required_from_cert = a.required_from_cert ? a.required_from_cert : b.required_from_cert;
    o.force_tunnel_device = a.force_tunnel_device ? a.force_tunnel_device : b.force_tunnel_device;
    o.environment = !a.environment.empty() ? a.environment : b.environment;
    o.permit_open = !a.permit_open.empty() ? a.permit_open : b.permit_open;
    o.permit_listen = !a.permit_listen.empty() ? a.permit_listen : b.permit_listen;
    out.environment = !primary.environment.empty() ? primary.environment : additional.environment;
    return out;
}

} // namespace longhaul
