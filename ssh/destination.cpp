#include "ssh/destination.hpp"

#include "common/bytes.hpp"
#include "common/text_parse.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>

namespace longhaul {

namespace {

// %XX and '+' decoding of URI components; like OpenSSH's C string, a
// decoded NUL ends the text.
std::optional<std::string> url_decode(std::string_view s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out.push_back(' ');
        } else if (s[i] == '%') {
            if (i + 2 >= s.size())
                return std::nullopt;
            const int hi = hex_digit_value(s[i + 1]);
            const int lo = hex_digit_value(s[i + 2]);
            if (hi < 0 || lo < 0)
                return std::nullopt;
            const char c = static_cast<char>(hi * 16 + lo);
            if (c == '\0')
                return out;
            out.push_back(c);
            i += 2;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

} // namespace

bool valid_domain(std::string_view name)
{
    if (name.empty())
        return false;
    if (!std::isalnum(static_cast<unsigned char>(name[0])))
        return false;
    char last = 0;
    for (char ch : name) {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (last == '.' && c == '.')
            return false;
        if (c != '.' && c != '-' && c != '_' && !std::isalnum(static_cast<unsigned char>(c)))
            return false;
        last = c;
    }
    return name.back() != '.';
}

uri_result parse_ssh_uri(std::string_view s, user_host_port& out)
{
    constexpr std::string_view scheme = "ssh://";
    if (s.substr(0, scheme.size()) != scheme)
        return uri_result::not_uri;
    s.remove_prefix(scheme.size());
    user_host_port r;
    if (auto at = s.find('@'); at != std::string_view::npos) {
        auto info = s.substr(0, at);
        info = info.substr(0, info.find(';')); // connection parameters are ignored
        if (info.empty())
            return uri_result::invalid;
        auto user = url_decode(info);
        if (!user)
            return uri_result::invalid;
        r.user = std::move(*user);
        s.remove_prefix(at + 1);
    }
    const auto f = hpdelim2(s);
    if (!f || f->field.empty())
        return uri_result::invalid;
    r.host = std::string(clean_hostname(f->field));
    if (!valid_domain(r.host))
        return uri_result::invalid;
    s = f->rest;
    if (!s.empty()) {
        if (f->delim == ':') {
            auto slash = s.find('/');
            r.port = parse_port(s.substr(0, slash));
            if (r.port <= 0)
                return uri_result::invalid;
            s = slash == std::string_view::npos ? std::string_view{} : s.substr(slash + 1);
        }
        if (!s.empty())
            return uri_result::invalid; // a path: not allowed for ssh
    }
    out = std::move(r);
    return uri_result::ok;
}

bool parse_user_host_port(std::string_view s, user_host_port& out)
{
    user_host_port r;
    if (auto at = s.rfind('@'); at != std::string_view::npos) {
        if (at == 0)
            return false;
        r.user = std::string(s.substr(0, at));
        s.remove_prefix(at + 1);
    }
    // hpdelim, as OpenSSH 9.2's parse_user_host_port: "host/22" is refused
    // (only a URI has '/' after the host).
    const auto f = hpdelim(s);
    if (!f || f->field.empty())
        return false;
    r.host = std::string(clean_hostname(f->field));
    if (!f->rest.empty()) {
        r.port = parse_port(f->rest);
        if (r.port <= 0)
            return false;
    }
    out = std::move(r);
    return true;
}

bool parse_proxy_jump(std::string_view s, client_config& cfg, bool apply)
{
    const bool active = apply && !cfg.proxy_command && !cfg.jump_host;
    // Comments and trailing blanks are dropped before the hops are checked,
    // but "none" and jump_extra are taken from the text as given (as OpenSSH).
    std::string_view body = s.substr(0, s.find('#'));
    while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back())))
        body.remove_suffix(1);
    const bool is_none = s.size() == 4 && strncasecmp(s.data(), "none", 4) == 0;

    user_host_port first;
    if (!is_none) {
        bool last = true;
        while (true) {
            const auto comma = body.rfind(',');
            const auto hop = comma == std::string_view::npos ? body : body.substr(comma + 1);
            user_host_port parsed;
            const auto u = parse_ssh_uri(hop, parsed);
            if (u == uri_result::invalid || (u == uri_result::not_uri && !parse_user_host_port(hop, parsed)))
                return false;
            if (last)
                first = std::move(parsed);
            last = false;
            if (comma == std::string_view::npos)
                break;
            body = body.substr(0, comma);
        }
    }
    if (!active)
        return true;
    if (is_none) {
        cfg.jump_host = "none";
        cfg.jump_port = 0;
        return true;
    }
    cfg.jump_user = first.user;
    cfg.jump_host = first.host;
    cfg.jump_port = first.port;
    cfg.proxy_command = "none";
    if (auto comma = s.rfind(','); comma != std::string_view::npos && comma != 0)
        cfg.jump_extra = std::string(s.substr(0, comma));
    return true;
}

std::string proxy_jump_command(const client_config& cfg, std::string_view argv0,
                               const std::optional<std::string>& config_file, int verbose)
{
    const int port = cfg.port.value_or(0) > 0 ? *cfg.port : 22;
    const int jump_port = cfg.jump_port.value_or(0) > 0 ? *cfg.jump_port : 22;
    const std::string& host = cfg.hostname.value_or(cfg.host_arg);
    const std::string jump_user = cfg.jump_user.value_or(cfg.user.value_or(""));
    if (cfg.jump_host && *cfg.jump_host == host && port == jump_port && jump_user == cfg.user.value_or(""))
        throw std::runtime_error("jumphost loop via " + *cfg.jump_host);
    std::string ssh(argv0);
    if (ssh.find('/') != std::string::npos && access(ssh.c_str(), X_OK) != 0)
        ssh = "ssh";
    std::string cmd = ssh;
    if (cfg.jump_user)
        cmd += " -l " + *cfg.jump_user;
    if (cfg.jump_port.value_or(0) > 0)
        cmd += " -p " + std::to_string(*cfg.jump_port);
    if (cfg.jump_extra)
        cmd += " -J " + *cfg.jump_extra;
    if (config_file)
        cmd += " -F " + *config_file;
    if (verbose > 0)
        cmd += " -" + std::string("vvv").substr(0, static_cast<std::size_t>(std::min(verbose, 3)));
    cmd += " -W '[%h]:%p' " + cfg.jump_host.value_or("");
    return cmd;
}

bool valid_hostname(std::string_view host)
{
    if (!host.empty() && host[0] == '-')
        return false;
    for (char c : host) {
        if (std::strchr("'`\"$\\;&<>|(){}", c) != nullptr && c != '\0')
            return false;
        if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
            return false;
    }
    return true;
}

bool valid_remote_user(std::string_view user)
{
    if (!user.empty() && user[0] == '-')
        return false;
    for (std::size_t i = 0; i < user.size(); ++i) {
        const char c = user[i];
        if (c != '\0' && std::strchr("'`\";&<>|(){}", c) != nullptr)
            return false;
        if (std::isspace(static_cast<unsigned char>(c)) && i + 1 < user.size() && user[i + 1] == '-')
            return false;
        if (c == '\\' && i + 1 == user.size())
            return false;
    }
    return true;
}

std::string host_with_port(std::string_view host, int port)
{
    if (port == 0 || port == 22)
        return std::string(host);
    return "[" + std::string(host) + "]:" + std::to_string(port);
}

} // namespace longhaul
