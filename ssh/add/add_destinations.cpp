#include "ssh/add/add_destinations.hpp"

#include "ssh/add/add_fatal.hpp"
#include "ssh/known_hosts.hpp"

namespace longhaul::add {

namespace {

// What OpenSSH 9.2's ssh-add makes of "[host]": it calls cleanhostname()
// but keeps the string it passed in, so only the closing bracket goes
// ("[host"; "[host]:port", how known_hosts names ports, is kept whole).
std::string clean_hostname(std::string host)
{
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host.pop_back();
    return host;
}

std::string expand_tilde(const std::string& path, const std::string& home)
{
    if (path == "~")
        return home;
    if (path.rfind("~/", 0) == 0)
        return home + path.substr(1);
    return path;
}

agent::destination_hop resolve_hop(const std::string& spec, const std::vector<std::string>& files,
                                   const std::string& home)
{
    agent::destination_hop hop;
    std::string host = spec;
    bool have_user = false;
    if (const auto at = spec.find('@'); at != std::string::npos) {
        hop.user = spec.substr(0, at);
        host = spec.substr(at + 1);
        have_user = true;
    }
    host = clean_hostname(host);
    if (host.empty()) {
        // "user@": that user on any host.
        if (!have_user)
            throw add_fatal(255, "Invalid key destination constraint \"" + spec +
                                     "\": does not specify user or host");
        return hop;
    }
    known_host_keys known;
    for (const auto& f : files)
        known.load_file(host, expand_tilde(f, home));
    hop.hostname = host;
    for (const auto& e : known.entries()) {
        if (e.marker == known_hosts_marker::revoked)
            continue;
        hop.keys.push_back({e.key.blob(), e.marker == known_hosts_marker::cert_authority});
    }
    if (hop.keys.empty())
        throw add_fatal(255, "No host keys found for destination \"" + host + "\"");
    return hop;
}

} // namespace

std::vector<std::string> default_hostkey_files(const std::string& home)
{
    return {home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2", "/etc/ssh/ssh_known_hosts",
            "/etc/ssh/ssh_known_hosts2"};
}

std::vector<agent::destination_constraint> resolve_destinations(const std::vector<std::string>& specs,
                                                                const std::vector<std::string>& hostkey_files,
                                                                const std::string& home)
{
    std::vector<agent::destination_constraint> out;
    for (const auto& spec : specs) {
        agent::destination_constraint c;
        const auto gt = spec.find('>');
        if (gt == std::string::npos) {
            c.to = resolve_hop(spec, hostkey_files, home);
        } else {
            const std::string from = spec.substr(0, gt);
            c.from = resolve_hop(from, hostkey_files, home);
            c.to = resolve_hop(spec.substr(gt + 1), hostkey_files, home);
            if (!c.from.user.empty() || from.find('@') != std::string::npos)
                throw add_fatal(255, "Invalid key constraint " + from + ": cannot specify user on 'from' host");
        }
        out.push_back(std::move(c));
    }
    return out;
}

} // namespace longhaul::add
