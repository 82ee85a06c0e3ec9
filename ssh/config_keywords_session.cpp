// The ssh_config keywords of what a session forwards and carries: port
// forwards, PermitRemoteOpen, SendEnv and SetEnv, TunnelDevice, EscapeChar,
// ControlPersist and AddKeysToAgent. Apart from config_keywords.cpp, whose
// switch calls them, to keep that file to the line and its dispatch.
#include "ssh/detail/config_keyword_handlers.hpp"

#include "common/config_line.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"
#include "ssh/destination.hpp"
#include "ssh/detail/config_values.hpp"
#include "ssh/forward_spec.hpp"

#include <algorithm>

namespace longhaul::detail {

namespace {

void add_forward(std::vector<forward_spec>& list, forward_spec fwd)
{
    if (std::find(list.begin(), list.end(), fwd) == list.end())
        list.push_back(std::move(fwd));
}

} // namespace

bool forward_keyword(line_parser& p, kw op)
{
    auto& c = p.cfg();
    auto& st = p.state();
    const std::string* arg = p.next();
    if (p.missing_argument(arg))
        return p.fail("Missing argument.", true);
    const bool remote = op == kw::remote_forward;
    bool dynamic = op == kw::dynamic_forward;
    std::string spec;
    if (!dynamic) {
        const std::string* arg2 = p.next();
        if (arg2 == nullptr || arg2->empty()) {
            if (!remote)
                return p.fail("Missing target argument.", true);
            dynamic = true;
        } else {
            spec = *arg + ":" + *arg2;
            if (spec.size() > 255)
                spec.resize(255); // OpenSSH builds the spec in a 256-byte buffer
        }
    }
    if (dynamic)
        spec = arg->size() > 255 ? arg->substr(0, 255) : *arg;
    forward_spec fwd;
    if (!parse_forward(spec, dynamic, remote, fwd, st.env.getenv))
        return p.fail("Bad forwarding specification.", true);
    if (p.active())
        add_forward(remote ? c.remote_forwards : c.local_forwards, std::move(fwd));
    return true;
}

bool permit_remote_open_keyword(line_parser& p)
{
    auto& c = p.cfg();
    const std::string* arg = p.next();
    if (p.missing_argument(arg))
        p.fatal("missing permitremoteopen specification");
    const bool was_empty = c.permit_remote_open.empty();
    if (*arg == "any" || *arg == "none") {
        if (p.active() && was_empty)
            c.permit_remote_open.push_back(*arg);
        return true;
    }
    for (const std::string* a = arg; a != nullptr; a = p.next()) {
        user_host_port hp;
        // host:port with "*" allowed as the port.
        const auto colon = a->rfind(':');
        std::string host = colon == std::string::npos ? *a : a->substr(0, colon);
        if (host.empty() || colon == std::string::npos) {
            if (host.empty())
                p.fatal("missing host in permitremoteopen");
            p.fatal("bad port number in permitremoteopen");
        }
        const std::string port = a->substr(colon + 1);
        if (port != "*" && parse_port(port) <= 0)
            p.fatal("bad port number in permitremoteopen");
        if (p.active() && was_empty)
            c.permit_remote_open.push_back(*a);
    }
    return true;
}

bool send_env_keyword(line_parser& p)
{
    auto& c = p.cfg();
    while (const std::string* arg = p.next()) {
        if (arg->empty() || arg->find('=') != std::string::npos)
            return p.fail("Invalid environment name.");
        if (!p.active())
            continue;
        if ((*arg)[0] == '-') {
            // "-PATTERN" removes earlier SendEnv entries.
            const std::string pattern = arg->substr(1);
            std::erase_if(c.send_env, [&](const std::string& e) { return match_pattern(e, pattern); });
            continue;
        }
        c.send_env.push_back(*arg);
    }
    return true;
}

bool set_env_keyword(line_parser& p)
{
    auto& c = p.cfg();
    auto& st = p.state();
    const bool was_empty = c.set_env.empty();
    while (const std::string* arg = p.next()) {
        const auto eq = arg->find('=');
        if (eq == std::string::npos)
            return p.fail("Invalid SetEnv.");
        if (!p.active() || !was_empty)
            continue;
        const auto name = arg->substr(0, eq);
        const bool dup = std::any_of(c.set_env.begin(), c.set_env.end(), [&](const std::string& e) {
            return e.substr(0, e.find('=')) == name;
        });
        if (dup) {
            st.emit(log_level::debug2, p.where() + "ignoring duplicate env name \"" + name.substr(0, 64) + "\"");
            continue;
        }
        c.set_env.push_back(*arg);
    }
    return true;
}

bool tunnel_device_keyword(line_parser& p)
{
    auto& c = p.cfg();
    const std::string* arg = p.next();
    if (p.missing_argument(arg))
        return p.fail("Missing argument.", true);
    int remote = 0;
    const int local = parse_tunnel_device(*arg, remote);
    if (local == tun_id_error)
        return p.fail("Bad tun device.", true);
    if (p.active() && !c.tunnel_local) {
        c.tunnel_local = local;
        c.tunnel_remote = remote;
    }
    return true;
}

bool escape_char_keyword(line_parser& p)
{
    auto& c = p.cfg();
    const std::string* arg = p.next();
    if (p.missing_argument(arg))
        return p.fail("Missing argument.", true);
    const std::string& a = *arg;
    int v;
    if (a == "none")
        v = escape_char_none;
    else if (a.size() == 1)
        v = static_cast<unsigned char>(a[0]);
    else if (a.size() == 2 && a[0] == '^' && static_cast<unsigned char>(a[1]) >= 64 &&
             static_cast<unsigned char>(a[1]) < 128)
        v = static_cast<unsigned char>(a[1]) & 31;
    else
        return p.fail("Bad escape character.", true);
    p.set(c.escape_char, v);
    return true;
}

bool control_persist_keyword(line_parser& p)
{
    auto& c = p.cfg();
    const std::string* arg = p.next();
    if (p.missing_argument(arg))
        return p.fail("Missing ControlPersist argument.", true);
    bool on = false;
    int timeout = 0;
    if (*arg == "no" || *arg == "false") {
        on = false;
    } else if (*arg == "yes" || *arg == "true") {
        on = true;
    } else if (auto t = parse_time_interval(*arg)) {
        on = true;
        timeout = static_cast<int>(*t);
    } else {
        return p.fail("Bad ControlPersist argument.", true);
    }
    if (p.active() && !c.control_persist) {
        c.control_persist = on;
        c.control_persist_timeout = timeout;
    }
    return true;
}

bool add_keys_to_agent_keyword(line_parser& p)
{
    auto& c = p.cfg();
    const std::string* arg = p.next();
    const std::string* arg2 = p.next();
    std::optional<add_keys_to_agent> v = arg ? parse_word(add_keys_words(), *arg) : std::nullopt;
    int lifespan = 0;
    if (v == add_keys_to_agent::confirm && arg2 != nullptr) {
        auto t = parse_time_interval(*arg2);
        if (!t)
            return p.fail("invalid time value.");
        lifespan = static_cast<int>(*t);
    } else if (!v && arg2 == nullptr && arg != nullptr) {
        // A bare lifetime means "yes, for this long".
        auto t = parse_time_interval(*arg);
        if (!t)
            return p.fail("unsupported option");
        v = add_keys_to_agent::yes;
        lifespan = static_cast<int>(*t);
    } else if (!v || arg2 != nullptr) {
        return p.fail("unsupported option");
    }
    if (p.active() && !c.add_keys_to_agent) {
        c.add_keys_to_agent = v;
        c.add_keys_to_agent_lifespan = lifespan;
    }
    return true;
}

} // namespace longhaul::detail
