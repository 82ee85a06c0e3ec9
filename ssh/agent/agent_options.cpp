#include "ssh/agent/agent_options.hpp"

#include "common/config_line.hpp"
#include "common/short_options.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace longhaul::agent {

namespace {

constexpr std::string_view usage_text =
    "usage: ssh-agent [-c | -s] [-Dd] [-a bind_address] [-E fingerprint_hash]\n"
    "                 [-O option] [-P allowed_providers] [-t life]\n"
    "       ssh-agent [-a bind_address] [-E fingerprint_hash] [-O option]\n"
    "                 [-P allowed_providers] [-t life] command [arg ...]\n"
    "       ssh-agent [-c | -s] -k\n";

agent_parse_result usage(std::string before = {})
{
    return {std::nullopt, {before + std::string(usage_text), 1}};
}

// OpenSSH's fatal(): the message, "\r\n", status 255.
agent_parse_result fatal(const std::string& message)
{
    return {std::nullopt, {message + "\r\n", 255}};
}

} // namespace

agent_parse_result parse_agent_args(const std::vector<std::string>& args, const char* shell)
{
    agent_options o;
    // The first complaint ends the scan (OpenSSH's usage() or fatal()).
    std::optional<agent_parse_result> failed;
    auto fail = [&](agent_parse_result r) {
        failed = std::move(r);
        return false;
    };
    auto option = [&](char c, const std::string& value) {
        switch (c) {
        case 'c':
            if (o.sh)
                return fail(usage());
            o.csh = true;
            break;
        case 's':
            if (o.csh)
                return fail(usage());
            o.sh = true;
            break;
        case 'k': o.kill = true; break;
        case 'd':
        case 'D':
            if (o.debug || o.foreground)
                return fail(usage());
            (c == 'd' ? o.debug : o.foreground) = true;
            break;
        case 'E': {
            auto h = parse_fingerprint_hash(value);
            if (!h)
                return fail(fatal("Invalid hash algorithm \"" + value + "\""));
            o.hash = *h;
            break;
        }
        case 'a': o.bind_address = value; break;
        case 'O':
            if (value == "no-restrict-websafe")
                o.no_restrict_websafe = true;
            else if (value == "allow-remote-pkcs11")
                o.allow_remote_pkcs11 = true;
            else
                return fail(fatal("Unknown -O option"));
            break;
        case 'P':
            if (o.allowed_providers)
                return fail(fatal("-P option already specified"));
            o.allowed_providers = value;
            break;
        case 't': {
            auto t = parse_time_interval(value);
            if (!t || *t < 0 || *t > INT_MAX)
                return fail(usage("Invalid lifetime\n"));
            o.lifetime = *t;
            break;
        }
        }
        return true;
    };
    const auto scan = scan_short_options(args, 0, "cDdksE:a:O:P:t:", option);
    if (failed)
        return std::move(*failed);
    if (!scan.ok())
        return usage(scan.error + "\r\n");
    o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(scan.next), args.end());
    if (!o.command.empty() && (o.csh || o.kill || o.sh || o.debug || o.foreground))
        return usage();
    if (o.command.empty() && !o.csh && !o.sh && shell) {
        const std::string_view s(shell);
        if (s.size() > 2 && s.substr(s.size() - 3) == "csh")
            o.csh = true;
    }
    return {std::move(o), {}};
}

std::string environment_lines(bool csh, const std::string& socket, const std::string* pid, long echo_pid)
{
    auto line = [&](std::string_view name, const std::string& value) {
        return csh ? "setenv " + std::string(name) + " " + value + ";\n"
                   : std::string(name) + "=" + value + "; export " + std::string(name) + ";\n";
    };
    std::string out = line("SSH_AUTH_SOCK", socket);
    if (pid)
        out += line("SSH_AGENT_PID", *pid);
    out += "echo Agent pid " + std::to_string(echo_pid) + ";\n";
    return out;
}

std::string kill_lines(bool csh, long pid)
{
    const char* unset = csh ? "unsetenv " : "unset ";
    return std::string(unset) + "SSH_AUTH_SOCK;\n" + unset + "SSH_AGENT_PID;\n" + "echo Agent pid " +
           std::to_string(pid) + " killed;\n";
}

agent_pid_check parse_agent_pid(const char* value)
{
    if (!value)
        return {0, "SSH_AGENT_PID not set, cannot kill agent\n"};
    auto bad = [&](const char* why) {
        return agent_pid_check{0, "SSH_AGENT_PID=\"" + std::string(value) + "\", which is not a good PID: " + why + "\n"};
    };
    // strtonum: decimal long long, whole string, then the range.
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(value, &end, 10);
    if (end == value || *end != '\0')
        return bad("invalid");
    if ((errno == ERANGE && v == LLONG_MIN) || v < 2)
        return bad("too small");
    if (errno == ERANGE || v > INT_MAX)
        return bad("too large");
    return {static_cast<long>(v), {}};
}

std::string socket_dir_template(const char* tmpdir)
{
    return std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/ssh-XXXXXXXXXXXX";
}

} // namespace longhaul::agent
