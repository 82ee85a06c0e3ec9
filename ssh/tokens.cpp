#include "ssh/tokens.hpp"

#include "common/crypto/hash.hpp"

#include <pwd.h>

#include <cstdlib>

namespace longhaul {

namespace {

struct expansion {
    std::string text;
    bool parse_error = true;  // malformed text: no result
    bool missing_var = false; // a ${VAR} was unset: no result either
    std::string error;        // what OpenSSH logs from vdollar_percent_expand
};

// OpenSSH's vdollar_percent_expand, written from its documented behaviour.
expansion expand(std::string_view s, const token_map* tokens, const env_lookup* env)
{
    expansion out;
    std::string& buf = out.text;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (env != nullptr && s[i] == '$' && i + 1 < s.size() && s[i + 1] == '{') {
            const auto start = i + 2;
            const auto end = s.find('}', start);
            if (end == std::string_view::npos) {
                out.error = "vdollar_percent_expand: environment variable '" + std::string(s.substr(start)) +
                            "' missing closing '}'";
                return out;
            }
            if (end == start) {
                out.error = "vdollar_percent_expand: zero-length environment variable";
                return out;
            }
            const std::string name(s.substr(start, end - start));
            if (auto v = (*env)(name)) {
                buf += *v;
            } else {
                // OpenSSH keeps going so every missing variable is reported; we report the first.
                if (!out.missing_var)
                    out.error = "vdollar_percent_expand: env var ${" + name + "} has no value";
                out.missing_var = true;
            }
            i = end;
            continue;
        }
        if (s[i] != '%' || tokens == nullptr) {
            buf.push_back(s[i]);
            continue;
        }
        if (++i >= s.size()) {
            out.error = "vdollar_percent_expand: invalid format";
            return out;
        }
        if (s[i] == '%') {
            buf.push_back('%');
            continue;
        }
        bool found = false;
        for (const auto& [letter, value] : *tokens) {
            if (letter == s[i]) {
                buf += value;
                found = true;
                break;
            }
        }
        if (!found) {
            out.error = std::string("vdollar_percent_expand: unknown key %") + s[i];
            return out;
        }
    }
    out.parse_error = false;
    return out;
}

} // namespace

env_lookup process_environment()
{
    return [](const std::string& name) -> std::optional<std::string> {
        if (const char* v = std::getenv(name.c_str()))
            return std::string(v);
        return std::nullopt;
    };
}

home_lookup passwd_homes()
{
    return [](const std::string& user) -> std::optional<std::string> {
        struct passwd pw {};
        struct passwd* found = nullptr;
        std::string buf(16384, '\0');
        if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
            return std::nullopt;
        return std::string(found->pw_dir);
    };
}

std::string percent_expand(std::string_view s, const token_map& tokens)
{
    auto r = expand(s, &tokens, nullptr);
    if (r.parse_error)
        throw expansion_error(r.error + "\npercent_expand: failed");
    return std::move(r.text);
}

std::string percent_dollar_expand(std::string_view s, const token_map& tokens, const env_lookup& env)
{
    auto r = expand(s, &tokens, &env);
    if (r.parse_error)
        throw expansion_error(r.error + "\npercent_dollar_expand: failed");
    if (r.missing_var)
        throw expansion_error(r.error + "\ninvalid environment variable expansion");
    return std::move(r.text);
}

std::optional<std::string> dollar_expand(std::string_view s, const env_lookup& env, std::string& error)
{
    auto r = expand(s, nullptr, &env);
    if (r.parse_error || r.missing_var) {
        error = r.error;
        return std::nullopt;
    }
    return std::move(r.text);
}

std::string tilde_expand(std::string_view path, std::string_view home, const home_lookup& homes)
{
    if (path.empty() || path[0] != '~')
        return std::string(path);
    path.remove_prefix(1);
    std::string dir(home);
    const auto slash = path.find('/');
    if (slash != std::string_view::npos && slash > 0) {
        const std::string user(path.substr(0, slash));
        auto h = homes ? homes(user) : std::nullopt;
        if (!h)
            throw expansion_error("tilde_expand: No such user " + user);
        dir = *h;
    }
    if (slash != std::string_view::npos)
        path.remove_prefix(slash + 1);
    const char* sep = (dir.empty() || dir.back() != '/') ? "/" : "";
    return dir + sep + std::string(path);
}

token_map connection_tokens::map() const
{
    return {
        {'C', conn_hash}, {'L', short_host}, {'i', uid},         {'k', key_alias},
        {'l', local_host}, {'n', host_arg},  {'p', port},        {'d', home_dir},
        {'h', remote_host}, {'r', remote_user}, {'u', local_user},
    };
}

std::string connection_hash(std::string_view local_host, std::string_view remote_host, std::string_view port,
                            std::string_view remote_user)
{
    hasher h(hash_alg::sha1);
    h.update(local_host).update(remote_host).update(port).update(remote_user);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (auto b : h.finish()) {
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 15]);
    }
    return out;
}

} // namespace longhaul
