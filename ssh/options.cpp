#include "ssh/options.hpp"

#include "common/short_options.hpp"
#include "ssh/algorithm_names.hpp"
#include "ssh/destination.hpp"
#include "ssh/forward_spec.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace longhaul {

namespace {

constexpr std::string_view usage =
    "usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface]\n"
    "           [-b bind_address] [-c cipher_spec] [-D [bind_address:]port]\n"
    "           [-E log_file] [-e escape_char] [-F configfile] [-I pkcs11]\n"
    "           [-i identity_file] [-J [user@]host[:port]] [-L address]\n"
    "           [-l login_name] [-m mac_spec] [-O ctl_cmd] [-o option] [-p port]\n"
    "           [-Q query_option] [-R address] [-S ctl_path] [-W host:port]\n"
    "           [-w local_tun[:remote_tun]] destination [command [argument ...]]\n";

// OpenSSH 9.2's getopt string: a letter followed by ':' takes an argument.
constexpr std::string_view optstring = "1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:PQ:R:S:TVw:W:XYy";

bool takes_argument(char c)
{
    const auto pos = optstring.find(c);
    return pos != std::string_view::npos && pos + 1 < optstring.size() && optstring[pos + 1] == ':';
}

class parser {
public:
    parser(const std::vector<std::string>& args, const config_environment& env) : args_(args), env_(env) {}

    client_options run()
    {
        std::size_t idx = 0;
        bool terminated = getopt_round(idx, 0);
        if (done_)
            return std::move(o_);
        if (idx < args_.size()) {
            set_destination(args_[idx]);
            const std::size_t host_idx = idx++;
            if (idx < args_.size() && !terminated) {
                // Options may follow the destination (OpenSSH restarts getopt there).
                getopt_round(idx, host_idx + 1);
                if (done_)
                    return std::move(o_);
            }
        }
        if (!have_host_)
            throw usage_error("");
        if (!valid_hostname(o_.host))
            throw command_line_error("hostname contains invalid characters");
        if (o_.config.user && !valid_remote_user(*o_.config.user))
            throw command_line_error("remote username contains invalid characters");
        for (; idx < args_.size(); ++idx)
            o_.command_words.push_back(args_[idx]);
        for (const auto& w : o_.command_words) {
            if (!o_.command.empty())
                o_.command.push_back(' ');
            o_.command += w;
        }
        if (o_.command_words.empty() && o_.config.session_type == session_type::subsystem)
            throw usage_error("You must specify a subsystem to invoke.");
        if (o_.use_syslog && o_.log_file)
            throw command_line_error("Can't specify both -y and -E");
        return std::move(o_);
    }

private:
    // One getopt(3) run from args_[idx]; `first` is the index getopt's optind
    // 1 stands for. Returns true when "--" ended the options.
    bool getopt_round(std::size_t& idx, std::size_t first)
    {
        const auto scan = scan_short_options(args_, idx, optstring, [this](char c, const std::string& value) {
            option(c, takes_argument(c) ? &value : nullptr);
            return !done_;
        });
        // OpenSSH's getopt reports through its logger, whose lines on
        // stderr end in CR LF (main adds the LF).
        if (!scan.error.empty())
            throw usage_error(scan.error + "\r");
        idx = scan.next;
        // A "--" taken as the argument of the last option also ends them, as
        // with OpenSSH's check of av[optind - 1].
        return idx > first && idx - 1 < args_.size() && args_[idx - 1] == "--";
    }

    void set_destination(const std::string& dest)
    {
        user_host_port uri;
        switch (parse_ssh_uri(dest, uri)) {
        case uri_result::invalid:
            throw usage_error("");
        case uri_result::ok:
            if (!o_.config.user && uri.user)
                o_.config.user = uri.user;
            if (!o_.config.port && uri.port != -1)
                o_.config.port = uri.port;
            o_.host = uri.host;
            break;
        case uri_result::not_uri: {
            const auto at = dest.rfind('@');
            if (at == std::string::npos) {
                o_.host = dest;
                break;
            }
            if (at == 0)
                throw usage_error("");
            if (!o_.config.user)
                o_.config.user = dest.substr(0, at);
            o_.host = dest.substr(at + 1);
            break;
        }
        }
        have_host_ = true;
    }

    void option(char c, const std::string* arg)
    {
        auto& cfg = o_.config;
        o_.flags_seen.push_back(c);
        switch (c) {
        case '1': throw command_line_error("SSH protocol v.1 is no longer supported");
        case '2': break;
        case '4': cfg.address_family = address_family::inet; break;
        case '6': cfg.address_family = address_family::inet6; break;
        case 'n': cfg.stdin_null = true; break;
        case 'f':
            cfg.fork_after_authentication = true;
            cfg.stdin_null = true;
            break;
        case 'x': cfg.forward_x11 = false; break;
        case 'X': cfg.forward_x11 = true; break;
        case 'Y':
            cfg.forward_x11 = true;
            cfg.forward_x11_trusted = true;
            break;
        case 'y': o_.use_syslog = true; break;
        case 'E': o_.log_file = *arg; break;
        case 'G': o_.dump_config = true; break;
        case 'g': cfg.gateway_ports = true; break;
        case 'O':
            if (cfg.stdio_forward_host)
                throw command_line_error("Cannot specify multiplexing command with -W");
            if (o_.mux != mux_command::none)
                throw command_line_error("Multiplexing command already specified");
            if (*arg == "check")
                o_.mux = mux_command::check;
            else if (*arg == "forward")
                o_.mux = mux_command::forward;
            else if (*arg == "exit")
                o_.mux = mux_command::exit;
            else if (*arg == "stop")
                o_.mux = mux_command::stop;
            else if (*arg == "cancel")
                o_.mux = mux_command::cancel;
            else if (*arg == "proxy")
                o_.mux = mux_command::proxy;
            else
                throw command_line_error("Invalid multiplex command.");
            break;
        case 'P': break; // deprecated, ignored
        case 'Q': {
            auto lines = query_algorithms(*arg);
            if (!lines)
                throw command_line_error("Unsupported query \"" + *arg + "\"");
            o_.action = command_line_action::query;
            o_.query_lines = std::move(*lines);
            done_ = true;
            break;
        }
        case 'a': cfg.forward_agent = false; break;
        case 'A': cfg.forward_agent = true; break;
        case 'k': cfg.gssapi_delegate_credentials = false; break;
        case 'K':
            cfg.gssapi_authentication = true;
            cfg.gssapi_delegate_credentials = true;
            break;
        case 'i': {
            std::string path;
            try {
                path = tilde_expand(*arg, env_.home_dir, env_.homes);
            } catch (const expansion_error& e) {
                throw command_line_error(e.what());
            }
            struct stat st {};
            if (stat(path.c_str(), &st) == -1) {
                o_.warnings.push_back("Warning: Identity file " + path + " not accessible: " + std::strerror(errno) +
                                      ".");
            } else {
                identity_file f{path, true};
                if (std::find(cfg.identity_files.begin(), cfg.identity_files.end(), f) == cfg.identity_files.end()) {
                    if (cfg.identity_files.size() >= 100)
                        throw command_line_error("Too many identity files specified (max 100)");
                    cfg.identity_files.push_back(std::move(f));
                }
            }
            break;
        }
        case 'I': cfg.pkcs11_provider = *arg; break;
        case 'J':
            if (cfg.jump_host)
                throw command_line_error(
                    "Only a single -J option is permitted (use commas to separate multiple jump hops)");
            if (cfg.proxy_command)
                throw command_line_error("Cannot specify -J with ProxyCommand");
            if (!parse_proxy_jump(*arg, cfg, true))
                throw command_line_error("Invalid -J argument");
            cfg.proxy_command = "none";
            break;
        case 't':
            cfg.request_tty = cfg.request_tty == request_tty::yes ? request_tty::force : request_tty::yes;
            break;
        case 'v':
            if (o_.verbose == 0) {
                o_.verbose = 1;
                cfg.log_level = log_level::debug1;
            } else if (cfg.log_level.value_or(log_level::info) < log_level::debug3) {
                ++o_.verbose;
                cfg.log_level = static_cast<log_level>(static_cast<int>(cfg.log_level.value_or(log_level::info)) + 1);
            }
            break;
        case 'V':
            o_.action = command_line_action::version;
            done_ = true;
            break;
        case 'w': {
            if (!cfg.tunnel)
                cfg.tunnel = tunnel_request::point_to_point;
            int remote = 0;
            const int local = parse_tunnel_device(*arg, remote);
            cfg.tunnel_local = local;
            cfg.tunnel_remote = remote;
            if (local == tun_id_error)
                throw command_line_error("Bad tun device '" + *arg + "'", false);
            break;
        }
        case 'W': {
            if (cfg.stdio_forward_host)
                throw command_line_error("stdio forward already specified");
            if (o_.mux != mux_command::none)
                throw command_line_error("Cannot specify stdio forward with -O");
            forward_spec fwd;
            if (!parse_forward(*arg, true, false, fwd, env_.getenv))
                throw command_line_error("Bad stdio forwarding specification '" + *arg + "'", false);
            cfg.stdio_forward_host = fwd.listen_host.value_or("");
            cfg.stdio_forward_port = fwd.listen_port;
            cfg.request_tty = request_tty::no;
            cfg.session_type = session_type::none;
            break;
        }
        case 'q': cfg.log_level = log_level::quiet; break;
        case 'e': {
            const std::string& a = *arg;
            if (a.size() == 2 && a[0] == '^' && static_cast<unsigned char>(a[1]) >= 64 &&
                static_cast<unsigned char>(a[1]) < 128)
                cfg.escape_char = static_cast<unsigned char>(a[1]) & 31;
            else if (a.size() == 1)
                cfg.escape_char = static_cast<unsigned char>(a[0]);
            else if (a == "none")
                cfg.escape_char = escape_char_none;
            else
                throw command_line_error("Bad escape character '" + a + "'.", false);
            break;
        }
        case 'c': {
            std::string_view names = *arg;
            if (!names.empty() && (names[0] == '+' || names[0] == '^'))
                names.remove_prefix(1);
            if (!cipher_list_valid(names))
                throw command_line_error("Unknown cipher type '" + *arg + "'", false);
            cfg.ciphers = *arg;
            break;
        }
        case 'm':
            if (!mac_list_valid(*arg))
                throw command_line_error("Unknown mac type '" + *arg + "'", false);
            cfg.macs = *arg;
            break;
        case 'M':
            cfg.control_master = cfg.control_master == control_master::yes ? control_master::ask : control_master::yes;
            break;
        case 'p':
            if (!cfg.port) {
                const int port = parse_port(*arg);
                if (port <= 0)
                    throw command_line_error("Bad port '" + *arg + "'", false);
                cfg.port = port;
            }
            break;
        case 'l':
            if (!cfg.user)
                cfg.user = *arg;
            break;
        case 'L': {
            forward_spec fwd;
            if (!parse_forward(*arg, false, false, fwd, env_.getenv))
                throw command_line_error("Bad local forwarding specification '" + *arg + "'", false);
            add_unique(cfg.local_forwards, std::move(fwd));
            break;
        }
        case 'R': {
            forward_spec fwd;
            if (!parse_forward(*arg, false, true, fwd, env_.getenv) && !parse_forward(*arg, true, true, fwd, env_.getenv))
                throw command_line_error("Bad remote forwarding specification '" + *arg + "'", false);
            add_unique(cfg.remote_forwards, std::move(fwd));
            break;
        }
        case 'D': {
            forward_spec fwd;
            if (!parse_forward(*arg, true, false, fwd, env_.getenv))
                throw command_line_error("Bad dynamic forwarding specification '" + *arg + "'", false);
            add_unique(cfg.local_forwards, std::move(fwd));
            break;
        }
        case 'C': cfg.compression = true; break;
        case 'N':
            if (cfg.session_type && *cfg.session_type != session_type::none)
                throw command_line_error("Cannot specify -N with -s/SessionType");
            cfg.session_type = session_type::none;
            cfg.request_tty = request_tty::no;
            break;
        case 'T': cfg.request_tty = request_tty::no; break;
        case 'o': apply_option(*arg); break;
        case 's':
            if (cfg.session_type && *cfg.session_type != session_type::subsystem)
                throw command_line_error("Cannot specify -s with -N/SessionType");
            cfg.session_type = session_type::subsystem;
            break;
        case 'S': cfg.control_path = *arg; break;
        case 'b': cfg.bind_address = *arg; break;
        case 'B': cfg.bind_interface = *arg; break;
        case 'F': o_.config_file = *arg; break;
        default: throw usage_error("");
        }
    }

    void apply_option(const std::string& line)
    {
        std::vector<std::pair<log_level, std::string>> messages;
        const log_sink sink = [&](log_level level, std::string_view text) { messages.emplace_back(level, text); };
        bool ok = false;
        try {
            ok = apply_option_line(o_.config, line, env_, sink);
        } catch (const ssh_config_error& e) {
            messages.emplace_back(log_level::fatal, e.what());
        }
        if (!ok) {
            std::string text;
            for (const auto& [level, m] : messages) {
                if (level > log_level::error)
                    continue;
                if (!text.empty())
                    text.push_back('\n');
                text += m;
            }
            throw command_line_error(text);
        }
        o_.option_lines.push_back(line);
        for (auto& m : messages)
            o_.log_messages.push_back(std::move(m));
    }

    static void add_unique(std::vector<forward_spec>& list, forward_spec fwd)
    {
        if (std::find(list.begin(), list.end(), fwd) == list.end())
            list.push_back(std::move(fwd));
    }

    const std::vector<std::string>& args_;
    const config_environment& env_;
    client_options o_;
    bool done_ = false;
    bool have_host_ = false;
};

} // namespace

std::string_view usage_text() noexcept { return usage; }

client_options parse_command_line(const std::vector<std::string>& args, const config_environment& env)
{
    return parser(args, env).run();
}

client_options parse_command_line(int argc, const char* const* argv, const config_environment& env)
{
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i)
        args.emplace_back(argv[i]);
    return parse_command_line(args, env);
}

} // namespace longhaul
