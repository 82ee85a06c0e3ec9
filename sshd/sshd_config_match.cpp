// Match blocks: parsing and checking the criteria at load time, deciding
// them for a connection, and the `sshd -C` connection specification.
#include "sshd/sshd_config_internal.hpp"

#include "common/match.hpp"
#include "common/text_parse.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <vector>

namespace longhaul::detail {

namespace {

[[noreturn]] void missing_attribute(const char* criteria, const char* attribute)
{
    throw config_error(std::string("'Match ") + criteria + "' in configuration but '" + attribute +
                       "' not in connection test specification.");
}

} // namespace

match_condition parse_match_line(const config_entry& entry, parse_log& log)
{
    const std::string where = entry.file + " line " + std::to_string(entry.line);
    auto bad = [&](const std::string& why) {
        log.error(why);
        log.fatal(where + ": Bad Match condition");
    };
    match_condition c;
    c.line = entry.line;
    const auto& args = entry.args;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string attribute = lowercase(args[i]);
        if (attribute == "all") {
            if (!c.criteria.empty() || i + 1 < args.size())
                bad("'all' cannot be combined with other Match attributes");
            c.criteria.push_back({"all", {}});
            continue;
        }
        if (i + 1 >= args.size() || args[i + 1].empty())
            bad("Missing Match criteria for " + args[i]);
        const std::string& argument = args[++i];
        if (attribute == "address" || attribute == "localaddress") {
            if (addr_match_list({}, argument) == addr_list_result::invalid)
                log.fatal("Invalid Match " + attribute + " argument '" + argument + "' at line " +
                          std::to_string(entry.line));
        } else if (attribute == "localport") {
            if (parse_port(argument) == -1)
                bad("Invalid LocalPort '" + argument + "' on Match line");
        } else if (attribute != "user" && attribute != "group" && attribute != "host" && attribute != "rdomain") {
            bad("Unsupported Match attribute " + args[i - 1]);
        }
        c.criteria.push_back({attribute, argument});
    }
    if (c.criteria.empty())
        bad("One or more attributes required for Match");
    return c;
}

bool match_condition_at_load(const match_condition& c)
{
    // Without a connection every criterion but "all" fails (OpenSSH then
    // checks the block's lines for syntax only).
    return c.criteria.size() == 1 && c.criteria[0].attribute == "all";
}

bool match_condition_for(const match_condition& c, const connection_info& info)
{
    bool result = true;
    // Every criterion is evaluated, as OpenSSH does, so that a missing
    // attribute is reported even after a mismatch.
    for (const auto& cr : c.criteria) {
        const std::string& a = cr.attribute;
        const std::string& arg = cr.argument;
        if (a == "all")
            return true;
        if (a == "user") {
            if (!info.user || match_pattern_list(*info.user, arg, false) != list_match::positive)
                result = false;
        } else if (a == "group") {
            bool found = false, negated = false;
            if (info.user) {
                for (const auto& g : info.groups) {
                    const auto m = match_pattern_list(g, arg, false);
                    if (m == list_match::negated)
                        negated = true;
                    else if (m == list_match::positive)
                        found = true;
                }
            }
            if (!found || negated)
                result = false;
        } else if (a == "host") {
            if (!info.host || match_hostname(*info.host, arg) != list_match::positive)
                result = false;
        } else if (a == "address") {
            if (!info.address || addr_match_list(*info.address, arg) != addr_list_result::positive)
                result = false;
        } else if (a == "localaddress") {
            if (!info.local_address || addr_match_list(*info.local_address, arg) != addr_list_result::positive)
                result = false;
        } else if (a == "localport") {
            if (!info.local_port)
                missing_attribute("LocalPort", "lport");
            if (parse_port(arg) != *info.local_port)
                result = false;
        } else if (a == "rdomain") {
            if (!info.rdomain || match_pattern_list(*info.rdomain, arg, false) != list_match::positive)
                result = false;
        }
    }
    return result;
}

} // namespace longhaul::detail

namespace longhaul {

std::vector<std::string> user_group_names(const std::string& user)
{
    std::vector<std::string> out;
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
        return out;
    int n = 64;
    std::vector<gid_t> gids(static_cast<std::size_t>(n));
    if (getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &n) < 0) {
        // Too small: n now holds the number needed (bounded for safety).
        if (n <= 0 || n > 65536)
            return out;
        gids.resize(static_cast<std::size_t>(n));
        if (getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &n) < 0)
            return out;
    }
    gids.resize(static_cast<std::size_t>(n));
    std::vector<char> gbuf(65536);
    for (gid_t gid : gids) {
        group gr{};
        group* g = nullptr;
        if (getgrgid_r(gid, &gr, gbuf.data(), gbuf.size(), &g) == 0 && g != nullptr)
            out.emplace_back(g->gr_name);
    }
    return out;
}

result<connection_info> parse_connection_spec(std::string_view spec, std::string& error)
{
    connection_info ci;
    ci.test = true;
    while (!spec.empty()) {
        const auto comma = spec.find(',');
        const std::string_view p = spec.substr(0, comma);
        if (p.empty())
            break;
        auto value = [&](std::size_t n) { return std::string(p.substr(n)); };
        if (p.substr(0, 5) == "addr=") {
            ci.address = value(5);
        } else if (p.substr(0, 5) == "host=") {
            ci.host = value(5);
        } else if (p.substr(0, 5) == "user=") {
            ci.user = value(5);
        } else if (p.substr(0, 6) == "laddr=") {
            ci.local_address = value(6);
        } else if (p.substr(0, 8) == "rdomain=") {
            ci.rdomain = value(8);
        } else if (p.substr(0, 6) == "lport=") {
            const int port = parse_port(p.substr(6));
            if (port == -1) {
                error = "Invalid port '" + value(6) + "' in test mode specification " + std::string(p);
                return errc::invalid_argument;
            }
            ci.local_port = port;
        } else {
            error = "Invalid test mode specification " + std::string(p);
            return errc::invalid_argument;
        }
        if (comma == std::string_view::npos)
            break;
        spec.remove_prefix(comma + 1);
    }
    if (ci.user)
        ci.groups = user_group_names(*ci.user);
    return ci;
}

} // namespace longhaul
