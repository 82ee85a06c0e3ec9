#include "channel/forward/forward_permissions.hpp"

#include "common/match.hpp"
#include "common/text_parse.hpp"

namespace longhaul::forward {

namespace {

// OpenSSH's permitopen_port(): "*", or a number or service name above 0.
std::optional<int> permission_port(std::string_view s)
{
    if (s == "*")
        return any_port;
    const int p = parse_port(s);
    if (p > 0)
        return p;
    return std::nullopt;
}

} // namespace

std::optional<permission_list> parse_permission_list(const std::vector<std::string>& values, permission_kind kind,
                                                     std::string_view what, std::string& why)
{
    permission_list out;
    if (values.empty() || (values.size() == 1 && values[0] == "any"))
        return out;
    if (values.size() == 1 && values[0] == "none") {
        out.kind = permission_list::mode::none;
        return out;
    }
    out.kind = permission_list::mode::list;
    for (const auto& v : values) {
        std::string entry = v;
        // PermitListen and permitlisten= take a bare port for any host.
        if (kind == permission_kind::listen && entry.find(':') == std::string::npos)
            entry = "*:" + entry;
        const auto f = hpdelim(entry);
        if (!f) {
            why = "missing host in " + std::string(what);
            return std::nullopt;
        }
        const auto port = f->more ? permission_port(f->rest) : std::nullopt;
        if (!port) {
            why = "bad port number in " + std::string(what);
            return std::nullopt;
        }
        out.entries.push_back({std::string(clean_hostname(f->field)), *port});
    }
    return out;
}

bool open_list_permits(const permission_list& list, std::string_view host, int port)
{
    if (list.kind != permission_list::mode::list)
        return list.kind == permission_list::mode::any;
    for (const auto& e : list.entries) {
        if (e.port != any_port && e.port != port)
            continue;
        if (e.host != "*" && e.host != host)
            continue;
        return true;
    }
    return false;
}

bool listen_list_permits(const permission_list& list, std::string_view listen_host, int port)
{
    if (list.kind != permission_list::mode::list)
        return list.kind == permission_list::mode::any;
    // Host names match case-insensitively: the request is lowercased, the
    // pattern is taken as written (so an upper-case pattern never matches).
    const std::string host = lowercase(listen_host);
    for (const auto& e : list.entries) {
        if (e.port != any_port && e.port != port)
            continue;
        if (match_pattern(host, e.host))
            return true;
    }
    return false;
}

bool open_permitted(const permission_list& admin, const permission_list& user, std::string_view host, int port)
{
    return open_list_permits(user, host, port) && open_list_permits(admin, host, port);
}

bool path_open_permitted(const permission_list& admin, const permission_list& user, std::string_view path)
{
    return open_permitted(admin, user, path, port_streamlocal);
}

bool listen_permitted(const permission_list& admin, const permission_list& user, std::string_view listen_host,
                      int port)
{
    return listen_list_permits(user, listen_host, port) && listen_list_permits(admin, listen_host, port);
}

} // namespace longhaul::forward
