// The sshd_config keywords whose arguments have a syntax of their own
// (ListenAddress, RekeyLimit, Subsystem, AuthenticationMethods,
// LogVerbose, ChannelTimeout, a command for the rest of the line) and the
// deprecated ones' notice: line_applier's members beyond its shared
// parsers, apart from the keyword switch in sshd_config_apply.cpp.
#include "sshd/sshd_config_line_applier.hpp"

#include "common/text_parse.hpp"
#include "sshd/sshd_config_syntax.hpp"

namespace longhaul::detail {

void line_applier::listen_address()
{
    const std::string& arg = required("missing address");
    std::string host;
    int port = 0;
    const auto colon = arg.find(':');
    if (arg.find('[') == std::string::npos && colon != std::string::npos &&
        arg.find(':', colon + 1) != std::string::npos) {
        host = arg; // a bare IPv6 address
    } else {
        const auto f = hpdelim(arg);
        if (!f)
            fatal("bad address:port usage");
        host = std::string(clean_hostname(f->field));
        if (f->more) {
            port = parse_port(f->rest);
            if (port <= 0)
                fatal("bad port number");
        }
    }
    std::string rdomain;
    if (const std::string* extra = next()) {
        const std::string* name = next();
        if (*extra != "rdomain" || name == nullptr)
            fatal("bad ListenAddress syntax");
        // Routing domains (Linux VRF) are not supported by this server.
        fatal("bad routing domain");
    }
    if (active())
        d_.listen.push_back({host, port, rdomain});
}

void line_applier::rekey_limit()
{
    const std::string& arg = required_kw();
    long long limit = 0;
    if (arg != "default") {
        const char* why = nullptr;
        auto v = scan_scaled(arg, why);
        if (!v)
            fatal("Bad " + kw_ + " number '" + arg + "': " + why);
        if (*v != 0 && *v < 16)
            fatal(kw_ + " too small");
        limit = *v;
    }
    if (take())
        cfg_.rekey_limit = static_cast<std::uint64_t>(limit);
    if (const std::string* interval = peek()) {
        if (*interval == "none") {
            next();
            return;
        }
        const int v = time_value();
        if (active() && !d_.rekey_interval_seen) {
            d_.rekey_interval_seen = true;
            cfg_.rekey_interval = v;
        }
    }
}

void line_applier::subsystem()
{
    if (cfg_.subsystems.size() >= 256)
        fatal("too many subsystems defined.");
    const std::string& name = required_kw();
    if (!active()) {
        next();
        return;
    }
    for (const auto& s : cfg_.subsystems)
        if (s.name == name)
            fatal("Subsystem '" + name + "' already defined.");
    const std::string& command = required("Missing subsystem command.");
    subsystem_config s{name, command, command};
    while (const std::string* arg = next())
        s.args += " " + *arg;
    cfg_.subsystems.push_back(std::move(s));
}

void line_applier::authentication_methods()
{
    const auto id = static_cast<std::size_t>(e_.keyword->id);
    const bool apply = active() && !d_.seen[id];
    if (apply)
        cfg_.authentication_methods.clear();
    bool any_seen = false, parsed = false;
    while (const std::string* arg = next()) {
        if (*arg == "any") {
            // OpenSSH counts the methods already in the structure being
            // parsed: the global one at start-up (so "any" after an earlier
            // line is fatal even inside a Match), a Match layer's own later.
            const bool have = d_.match_layer ? (d_.seen[id] || (apply && !cfg_.authentication_methods.empty()))
                                             : !cfg_.authentication_methods.empty();
            if (have)
                fatal("\"any\" must appear alone in " + kw_);
            any_seen = true;
        } else if (any_seen) {
            fatal("\"any\" must appear alone in " + kw_);
        } else if (!valid_auth_method_list(*arg, log_)) {
            fatal("invalid " + kw_ + " method list.");
        }
        parsed = true;
        if (apply)
            cfg_.authentication_methods.push_back(*arg);
    }
    if (!parsed)
        fatal("no " + kw_ + " specified");
    if (apply)
        d_.seen[id] = true;
}

bool line_applier::log_verbose()
{
    const auto id = static_cast<std::size_t>(e_.keyword->id);
    const bool apply = active() && !d_.seen[id];
    if (apply)
        cfg_.log_verbose.clear();
    std::size_t i = 0;
    while (const std::string* arg = next()) {
        if (arg->empty()) {
            consume_all();
            return error("keyword " + kw_ + " empty argument");
        }
        if (iequals(*arg, "none") && (i > 0 || peek() != nullptr)) {
            consume_all();
            return error("keyword " + kw_ + " \"none\" argument must appear alone.");
        }
        ++i;
        if (apply)
            cfg_.log_verbose.push_back(*arg);
    }
    if (apply)
        d_.seen[id] = true;
    return true;
}

bool line_applier::channel_timeout()
{
    const auto id = static_cast<std::size_t>(e_.keyword->id);
    const bool apply = active() && !d_.seen[id];
    if (apply)
        cfg_.channel_timeouts.clear();
    std::size_t i = 0;
    while (const std::string* arg = next()) {
        if (iequals(*arg, "none")) {
            if (i > 0 || peek() != nullptr) {
                consume_all();
                return error("keyword " + kw_ + " \"none\" argument must appear alone.");
            }
        } else if (!valid_channel_timeout(*arg)) {
            fatal("invalid channel timeout " + *arg);
        }
        ++i;
        if (apply && !iequals(*arg, "none"))
            cfg_.channel_timeouts.push_back(*arg);
    }
    if (apply)
        d_.seen[id] = true;
    return true;
}

void line_applier::rest_of_line(std::string& field, bool command)
{
    std::string_view rest = e_.rest;
    if (command && (rest.empty() || rest[0] != '/') && !iequals(rest, "none"))
        fatal(kw_ + " must be an absolute path");
    if (take())
        field = std::string(rest);
    consume_all();
}

void line_applier::deprecated(const char* what)
{
    log_.info(where_ + ": " + what + " option " + kw_);
    consume_all();
}

} // namespace longhaul::detail
