// sshd: OpenSSH's server command line, sshd_config and process model over
// Longhaul's protocol core.
#include "common/config_line.hpp"
#include "common/keys/key_file.hpp"
#include "common/log.hpp"
#include "common/short_options.hpp"
#include "sshd/host_certificates.hpp"
#include "sshd/host_key_agent.hpp"
#include "sshd/host_key_loading.hpp"
#include "sshd/listener.hpp"
#include "sshd/auth_policy.hpp"
#include "sshd/moduli_provider.hpp"
#include "sshd/remote_hostname.hpp"
#include "sshd/rexec_state.hpp"
#include "sshd/server_connection.hpp"
#include "sshd/sshd_config.hpp"

#include <openssl/crypto.h>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

using namespace longhaul;

namespace {

struct options {
    std::string config_path = "/etc/ssh/sshd_config";
    std::vector<std::string> option_lines;
    std::vector<int> ports;
    std::vector<std::string> host_keys;
    std::optional<std::string> log_file;
    std::optional<std::string> test_spec; // -C
    int debug = 0;                        // -d count
    bool no_detach = false;               // -D
    bool log_stderr = false;              // -e
    bool inetd = false;                   // -i
    bool quiet = false;                   // -q
    bool test = false;                    // -t
    bool extended_test = false;           // -T
    int family = AF_UNSPEC;               // -4 / -6
    unsigned utmp_length = default_utmp_length; // -u
    bool rexeced = false;                 // -R: a connection process the listener executed
    bool no_rexec = false;                // -r: serve connections in the forked listener (debugging)
};

void print_version() { std::cerr << "Longhaul_0.1 (OpenSSH_9.2 compatible), " << OpenSSL_version(OPENSSL_VERSION) << "\n"; }

// As OpenSSH's: the version line, then the options.
[[noreturn]] void usage()
{
    print_version();
    std::cerr << "usage: sshd [-46DdeiqTtV] [-C connection_spec] [-c host_cert_file]\n"
                 "            [-E log_file] [-f config_file] [-g login_grace_time]\n"
                 "            [-h host_key_file] [-o option] [-p port] [-u len]\n";
    std::exit(1);
}

// A number option's value, or exit with OpenSSH's message for it.
long number_or_exit(const std::string& arg, long low, long high, const char* message)
{
    char* end = nullptr;
    const long n = std::strtol(arg.c_str(), &end, 10);
    if (arg.empty() || *end != 0 || n < low || n > high) {
        std::cerr << message << "\n";
        std::exit(1);
    }
    return n;
}

options parse_args(int argc, char** argv)
{
    options o;
    const std::vector<std::string> words(argv, argv + argc);
    auto option = [&o](char c, const std::string& arg) {
        switch (c) {
        case '4': o.family = AF_INET; break;
        case '6': o.family = AF_INET6; break;
        case 'C': o.test_spec = arg; break;
        case 'c': o.option_lines.push_back("HostCertificate " + arg); break;
        case 'D': o.no_detach = true; break;
        case 'd': ++o.debug; break;
        case 'E': o.log_file = arg; break;
        case 'e': o.log_stderr = true; break;
        case 'f': o.config_path = arg; break;
        case 'g': {
            // LoginGraceTime ahead of the file's and of every -o line: OpenSSH
            // assigns it outright, so the last -g wins over all.
            const auto t = parse_time_interval(arg);
            if (!t || *t > INT_MAX) {
                std::cerr << "Invalid login grace time.\n";
                std::exit(1);
            }
            o.option_lines.insert(o.option_lines.begin(), "LoginGraceTime " + std::to_string(*t));
            break;
        }
        case 'h': o.host_keys.push_back(arg); break;
        case 'i': o.inetd = true; break;
        case 'k': break; // key regeneration: protocol 1 only, ignored as by OpenSSH
        case 'o': o.option_lines.push_back(arg); break;
        case 'p': o.ports.push_back(static_cast<int>(number_or_exit(arg, 1, 65535, "Bad port number."))); break;
        case 'q': o.quiet = true; break;
        case 'R': o.rexeced = true; break;
        case 'r': o.no_rexec = true; break;
        case 'T': o.extended_test = true; break;
        case 't': o.test = true; break;
        case 'u':
            // OpenSSH's bound: HOST_NAME_MAX + 1 (0: addresses only).
            o.utmp_length = static_cast<unsigned>(
                number_or_exit(arg, 0, long(default_utmp_length), "Invalid utmp length."));
            break;
        case 'V': print_version(); std::exit(0);
        }
        return true;
    };
    // OpenSSH's BSD getopt: options end at the first operand.
    const auto scan = scan_short_options(words, 1, "46C:c:DdE:ef:g:h:ik:o:p:qRrTtu:V", option);
    if (!scan.error.empty()) {
        std::cerr << scan.error << "\r\n";
        usage();
    }
    if (scan.next < words.size()) {
        std::cerr << "Extra argument " << words[scan.next] << ".\n";
        std::exit(1);
    }
    if (o.test_spec && !o.extended_test) {
        std::cerr << "sshd: -C requires -T\n";
        std::exit(1);
    }
    return o;
}

// The ModuliFile's text, or nothing when it cannot be read whole
// (moduli_groups::load then says why, as OpenSSH does).
std::optional<std::string> read_moduli_text(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<std::size_t>(in.gcount()));
        if (text.size() > rexec_max_state / 2)
            return std::nullopt;
    }
    if (in.bad())
        return std::nullopt;
    return text;
}

// A connection process: the listener's configuration, keys and moduli from
// the state it handed over (rexec_state.hpp), never from disk.
struct rexec_inputs {
    std::shared_ptr<const config_sources> config;
    std::vector<secret_bytes> host_keys;
    std::optional<std::string> moduli;
    std::vector<bytes> agent_host_keys;
};

std::optional<rexec_inputs> read_rexec_inputs(std::string& error)
{
    auto encoded = read_rexec_state_fd(rexec_state_fd);
    ::close(rexec_state_fd);
    if (!encoded) {
        error = "sshd -R: cannot read the listener's state: " + std::string(to_string(encoded.error()));
        return std::nullopt;
    }
    auto state = decode_rexec_state(encoded->span());
    if (!state) {
        error = "sshd -R: the listener's state is malformed";
        return std::nullopt;
    }
    rexec_inputs in;
    in.config = std::make_shared<const config_sources>(std::move(state->config));
    in.host_keys = std::move(state->host_keys);
    in.moduli = std::move(state->moduli);
    in.agent_host_keys = std::move(state->agent_host_keys);
    return in;
}

connection_facts facts_for(int fd, bool use_dns, logger& log)
{
    connection_facts f;
    sockaddr_storage peer{}, local{};
    socklen_t plen = sizeof peer, llen = sizeof local;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &plen) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen) != 0) {
        // Not a socket (sshd -i on pipes): OpenSSH's placeholders.
        f.remote_address = "UNKNOWN";
        f.remote_port = 65535;
        f.remote_host = "UNKNOWN";
        f.local_address = "UNKNOWN";
        f.local_port = 65535;
        return f;
    }
    f.remote_address = address_string(peer);
    f.remote_port = address_port(peer);
    f.local_address = address_string(local);
    f.local_port = address_port(local);
    f.remote_host = f.remote_address;
    if (use_dns) {
        // Forward-confirmed, as OpenSSH's get_remote_hostname().
        auto name = lookup_remote_hostname(f.remote_address, system_resolver());
        for (const auto& m : name.log)
            log.log(to_log_level(m.level), m.text);
        f.remote_host = std::move(name.host);
    }
    return f;
}

void daemonize()
{
    pid_t pid = fork();
    if (pid < 0) {
        std::perror("fork");
        std::exit(1);
    }
    if (pid > 0)
        _exit(0);
    setsid();
    if (chdir("/") != 0) {
    }
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2)
            ::close(null);
    }
}

} // namespace

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    // Executed as /proc/self/exe (a connection process, a restart after
    // SIGHUP), the kernel names the process "exe": ps and pgrep show the
    // name it was started as instead.
    if (argc > 0 && argv[0] != nullptr) {
        const std::string_view a0(argv[0]);
        const std::string base(a0.substr(a0.rfind('/') == std::string_view::npos ? 0 : a0.rfind('/') + 1));
        ::prctl(PR_SET_NAME, base.c_str());
    }
    // Whatever umask sshd was started with, sessions never get group- or
    // world-writable files by default (OpenSSH's umask(umask(077) | 022)).
    ::umask(::umask(077) | 022);
    options opt = parse_args(argc, argv);
    logger log("sshd", opt.debug > 0 ? static_cast<log_level>(static_cast<int>(log_level::info) + 1 + opt.debug)
                                     : log_level::info);
    // A connection process reads what the listener read, from its state.
    std::optional<rexec_inputs> rexec;
    if (opt.rexeced) {
        std::string error;
        rexec = read_rexec_inputs(error);
        if (!rexec) {
            log.error(error);
            return 255;
        }
    }
    config_load_options lo;
    lo.path = opt.config_path;
    if (rexec)
        lo.replay = rexec->config;
    lo.command_line = opt.option_lines;
    lo.command_line_ports = opt.ports;
    lo.command_line_host_keys = opt.host_keys;
    std::optional<sshd_config> config;
    try {
        config.emplace(sshd_config::load(lo));
    } catch (const config_error& e) {
        std::cerr << e.what() << (std::string_view(e.what()).ends_with("\n") ? "" : "\n");
        return e.exit_status();
    }
    const server_config& global = config->global();
    if (opt.debug == 0)
        log.set_level(opt.quiet ? log_level::quiet : to_log_level(global.log_level));
    if (opt.log_file) {
        if (!log.to_file(*opt.log_file)) {
            std::cerr << "Couldn't open logfile " << *opt.log_file << ": " << std::strerror(errno) << "\n";
            return 1;
        }
    } else if (!(opt.debug > 0 || opt.log_stderr || opt.test || opt.extended_test)) {
        log.to_syslog(syslog_facility_code(global.log_facility));
    }
    // The listener logged these once; its connection processes do not repeat them.
    if (!opt.rexeced)
        for (const auto& n : config->notices())
            log.log(to_log_level(n.level), n.text);

    if (opt.extended_test) {
        try {
            if (opt.test_spec) {
                std::string error;
                auto info = parse_connection_spec(*opt.test_spec, error);
                if (!info) {
                    std::cerr << error << "\n";
                    return 1;
                }
                std::cout << dump(config->for_connection(*info));
            } else {
                // As OpenSSH 9.2: Match blocks are evaluated in test mode even without -C.
                connection_info test_info;
                test_info.test = true;
                std::cout << dump(config->for_connection(test_info));
            }
        } catch (const config_error& e) {
            std::cerr << e.what() << "\n";
            return e.exit_status();
        }
        return 0;
    }

    server_context ctx;
    ctx.config = &*config;
    ctx.log = &log;
    ctx.log_level_from_config = opt.debug == 0 && !opt.quiet;
    ctx.utmp_length = opt.utmp_length;
    // The PAM service is the name sshd was started as (OpenSSH's
    // SSHD_PAM_SERVICE is __progname): a copy installed as "sshd-test" reads
    // /etc/pam.d/sshd-test.
    if (argc > 0 && argv[0] != nullptr && *argv[0] != '\0') {
        const std::string_view name(argv[0]);
        const auto slash = name.rfind('/');
        ctx.pam_service = std::string(slash == std::string_view::npos ? name : name.substr(slash + 1));
    }
    host_keys keys;
    // Each connection process connects to the agent itself, when it first
    // needs a signature (host_key_agent_signer).
    ctx.host_key_agent_socket =
        rexec ? host_key_agent_socket(global.host_key_agent, std::getenv("SSH_AUTH_SOCK"))
              : reachable_host_key_agent(global, log);
    if (rexec) {
        for (std::size_t i = 0; i < rexec->host_keys.size(); ++i) {
            auto k = parse_private_key(as_string_view(rexec->host_keys[i].span()), std::nullopt);
            if (!k || !accept_host_key(global, "#" + std::to_string(i), std::move(*k), keys, log)) {
                log.error("sshd -R: host key #" + std::to_string(i) + " from the listener is unusable");
                return 255;
            }
        }
        rexec->host_keys.clear();
        for (std::size_t i = 0; i < rexec->agent_host_keys.size(); ++i) {
            auto k = public_key::from_blob(rexec->agent_host_keys[i]);
            if (!k || !accept_agent_host_key(global, "#" + std::to_string(i), std::move(*k), keys, log)) {
                log.error("sshd -R: agent host key #" + std::to_string(i) + " from the listener is unusable");
                return 255;
            }
        }
    } else {
        keys = load_host_keys(global, !ctx.host_key_agent_socket.empty(), log);
    }
    ctx.host_keys = std::move(keys.keys);
    ctx.agent_host_keys = keys.agent_keys;
    if (ctx.host_keys.empty() && ctx.agent_host_keys.empty()) {
        log.error("sshd: no hostkeys available -- exiting.");
        return 1;
    }
    // Public files, read again by each connection process; the listener
    // reports their problems once.
    ctx.host_certificates = load_host_certificates(
        global.host_certificate_files, ctx.host_keys, [&](log_level level, std::string_view text) {
            if (!rexec || level >= log_level::debug1)
                log.log(level, text);
        },
        ctx.agent_host_keys);
    // The pre-authentication sandbox's user and directory (as root), or
    // OpenSSH's fatal message when the system lacks them.
    {
        std::string error;
        auto sandbox = privsep::preauth_sandbox_settings(error);
        if (!sandbox) {
            log.error(error);
            return 255;
        }
        ctx.sandbox = std::move(*sandbox);
        // Logging to stderr: a forbidden system call says which one there.
        if (opt.debug > 0 || opt.log_stderr)
            ctx.sandbox.report_fd = STDERR_FILENO;
    }
    if (opt.test)
        return 0;
    std::vector<log_message> moduli_log;
    if (rexec) {
        // Read and reported once, by the listener; parsed here only if a
        // client asks for a group.
        ctx.moduli = rexec->moduli ? moduli_groups::deferred(std::move(*rexec->moduli), global.moduli_file)
                                   : moduli_groups::load(global.moduli_file, moduli_log);
        rexec->moduli.reset();
        connection_facts f = facts_for(STDIN_FILENO, global.use_dns, log);
        int startup = -1;
        if (::fcntl(rexec_startup_fd, F_SETFD, FD_CLOEXEC) == 0)
            startup = rexec_startup_fd;
        return serve_connection(ctx, STDIN_FILENO, STDOUT_FILENO, startup, f);
    }
    for (const auto& s : unsupported_settings(global))
        log.info(s);
    // The text is kept for the connection processes (rexec_state).
    std::optional<std::string> moduli_text = read_moduli_text(global.moduli_file);
    ctx.moduli = moduli_text ? moduli_groups::from_text(*moduli_text, global.moduli_file, moduli_log)
                             : moduli_groups::load(global.moduli_file, moduli_log);
    for (const auto& m : moduli_log)
        log.log(to_log_level(m.level), m.text);

    if (opt.inetd) {
        connection_facts f = facts_for(0, global.use_dns, log);
        return serve_connection(ctx, 0, 1, -1, f);
    }

    // Listen on every address before detaching, so errors reach the terminal.
    std::vector<int> fds;
    for (const auto& la : global.listen_addresses) {
        if (opt.family != AF_UNSPEC && la.addr.ss_family != opt.family)
            continue;
        std::string error;
        int fd = open_listen_socket(la.host, la.port, la.addr.ss_family, error);
        if (fd < 0) {
            log.error(error);
            continue;
        }
        log.info("Server listening on " + (la.host.empty() ? std::string("0.0.0.0") : la.host) + " port " +
                 std::to_string(la.port) + ".");
        fds.push_back(fd);
    }
    if (fds.empty()) {
        log.error("Cannot bind any address.");
        return 1;
    }
    if (opt.debug == 0 && !opt.no_detach)
        daemonize();
    if (opt.debug == 0 && !global.pid_file.empty() && global.pid_file != "none") {
        std::ofstream(global.pid_file) << getpid() << "\n";
    }

    auto tune_socket = [&](int fd) {
        int one = 1;
        if (global.tcp_keep_alive)
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    };
    auto serve = [&](accepted_connection& c) {
        tune_socket(c.fd);
        return serve_connection(ctx, c.fd, c.fd, c.startup_fd, facts_for(c.fd, global.use_dns, log));
    };

    if (opt.debug > 0) {
        // Debug mode: one connection, served in this process.
        sockaddr_storage peer{};
        socklen_t len = sizeof peer;
        int cfd = ::accept4(fds[0], reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
        if (cfd < 0)
            return 1;
        for (int fd : fds)
            ::close(fd);
        accepted_connection c;
        c.fd = cfd;
        return serve(c);
    }

    // Every connection runs in a fresh image of this program, handed what
    // was read here (rexec_state.hpp); -r serves it in the forked listener.
    int state_fd = -1;
    if (!opt.no_rexec) {
        rexec_state state;
        state.config = config->sources();
        state.host_keys = std::move(keys.files);
        for (const auto& k : keys.agent_keys)
            state.agent_host_keys.push_back(k.blob());
        state.moduli = std::move(moduli_text);
        auto encoded = encode_rexec_state(state);
        std::string error = encoded ? "" : std::string(to_string(encoded.error()));
        if (encoded)
            state_fd = make_rexec_state_fd(encoded->span(), error);
        if (state_fd < 0) {
            log.error("sshd: cannot prepare the connection processes' state: " + error);
            return 1;
        }
    }
    auto serve_accepted = [&](accepted_connection& c) {
        if (state_fd < 0)
            return serve(c);
        tune_socket(c.fd);
        std::string error;
        exec_connection_process(c.fd, state_fd, c.startup_fd, argv, error);
        log.error("sshd: cannot start the connection process: " + error);
        return 255;
    };

    max_startups ms{global.max_startups_begin, global.max_startups_rate, global.max_startups};
    source_limit per_source(global.per_source_max_startups, global.per_source_netblock_ipv4,
                            global.per_source_netblock_ipv6);
    penalty_table penalties(global.per_source_penalties, global.per_source_penalty_exempt,
                            global.per_source_netblock_ipv4, global.per_source_netblock_ipv6,
                            [&](log_level level, std::string m) { log.log(level, m); });
    listener l(fds, ms, per_source, std::move(penalties), [&](const std::string& m) { log.info(m); });
    int rc = l.run(serve_accepted);
    for (int fd : fds)
        ::close(fd);
    if (!global.pid_file.empty() && global.pid_file != "none")
        ::unlink(global.pid_file.c_str());
    if (rc == 1) {
        log.info("Received SIGHUP; restarting.");
        execv("/proc/self/exe", argv);
        log.error(std::string("RESTART FAILED: /proc/self/exe: ") + std::strerror(errno));
        return 1;
    }
    return 0;
}
