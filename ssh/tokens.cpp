#include "ssh/tokens.hpp"

#include "common/bytes.hpp"
#include "common/crypto/hash.hpp"

#include <pwd.h>

#include <cstdlib>

namespace longhaul {

namespace {

// What ssh prints for a failed expansion: OpenSSH's error_f line from
// vdollar_percent_expand.
std::string message(const percent_expansion& r) { return "vdollar_percent_expand: " + r.reason; }

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
    auto r = vdollar_percent_expand(s, &tokens, nullptr);
    if (r.malformed)
        throw expansion_error(message(r) + "\npercent_expand: failed");
    return std::move(r.text);
}

std::string percent_dollar_expand(std::string_view s, const token_map& tokens, const env_lookup& env)
{
    auto r = vdollar_percent_expand(s, &tokens, &env);
    if (r.malformed)
        throw expansion_error(message(r) + "\npercent_dollar_expand: failed");
    if (r.missing_var)
        throw expansion_error(message(r) + "\ninvalid environment variable expansion");
    return std::move(r.text);
}

std::optional<std::string> dollar_expand(std::string_view s, const env_lookup& env, std::string& error)
{
    auto r = vdollar_percent_expand(s, nullptr, &env);
    if (r.malformed || r.missing_var) {
        error = message(r);
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
    return to_hex(h.finish());
}

} // namespace longhaul
