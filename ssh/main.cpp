// ssh: OpenSSH's command line, configuration and behaviour over Longhaul's
// protocol core.
#include "ssh/client.hpp"
#include "ssh/destination.hpp"
#include "ssh/options.hpp"
#include "ssh/ssh_config.hpp"

#include <openssl/crypto.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

using namespace longhaul;

namespace {

// The -O commands a later issue brings (check, exit and stop work).
const char* unsupported_mux_command(mux_command c)
{
    switch (c) {
    case mux_command::proxy: return "proxy";
    default: return nullptr;
    }
}

log_level initial_level(const client_options& o)
{
    if (o.config.log_level)
        return *o.config.log_level;
    return log_level::info;
}

} // namespace

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    logger log("ssh");
    config_environment env = config_environment::from_system();
    client_options opts;
    try {
        opts = parse_command_line(argc, argv, env);
    } catch (const usage_error& e) {
        if (*e.what())
            std::cerr << e.what() << "\n";
        std::cerr << usage_text();
        return 255;
    } catch (const command_line_error& e) {
        // OpenSSH's fatal() ends its line with CR LF, its fprintf()s with LF.
        std::cerr << e.what() << (e.logged() ? "\r\n" : "\n");
        return 255;
    }
    for (const auto& w : opts.warnings)
        std::cerr << w << "\n";
    log.set_level(initial_level(opts));
    for (const auto& [level, text] : opts.log_messages)
        log.log(level, text);
    if (opts.action == command_line_action::version) {
        std::cerr << "Longhaul_0.1 (OpenSSH_9.2 compatible), " << OpenSSL_version(OPENSSL_VERSION) << "\n";
        return 0;
    }
    if (opts.action == command_line_action::query) {
        for (const auto& l : opts.query_lines)
            std::cout << l << "\n";
        return 0;
    }
    if (const char* what = unsupported_mux_command(opts.mux)) {
        std::cerr << "ssh: multiplexing control command -O " << what << " is not supported yet\n";
        return 255;
    }
    if (opts.log_file && !log.to_file(*opts.log_file)) {
        // As OpenSSH's log_redirect_stderr_to(): errno's words, status 1.
        std::cerr << "Couldn't open logfile " << *opts.log_file << ": " << std::strerror(errno) << "\n";
        return 1;
    }
    client_config cfg = opts.config;
    try {
        load_client_config(cfg, opts.request(), env, [&](log_level l, std::string_view m) { log.log(l, m); });
    } catch (const ssh_config_error& e) {
        std::cerr << e.what() << "\r\n"; // OpenSSH's fatal()
        return 255;
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 255;
    }
    // -v on the command line wins over LogLevel in the files.
    log.set_level(cfg.log_level.value_or(log_level::info));
    if (opts.config.log_level)
        log.set_level(*opts.config.log_level);
    // Decided (and its refusal said) before -G, as OpenSSH's main() does.
    const bool tty = decide_tty(cfg, opts.have_command(), opts.mux, log);
    if (opts.dump_config) {
        std::cout << dump_config(cfg);
        return 0;
    }
    for (const auto& note : unsupported_settings(cfg))
        log.debug(note);
    if (opts.have_command() && cfg.remote_command && *cfg.remote_command != "none") {
        std::cerr << "Cannot execute command-line and remote command.\r\n";
        return 255;
    }
    if (cfg.jump_host) {
        // As OpenSSH: ProxyJump becomes a ProxyCommand running this ssh
        // with -W to the next hop (the earlier hops with -J, the same -F).
        try {
            cfg.proxy_command = proxy_jump_command(cfg, argv[0], opts.config_file, opts.verbose);
        } catch (const std::exception& e) {
            std::cerr << e.what() << "\n";
            return 255;
        }
        cfg.jump_host.reset();
    }
    client_invocation inv;
    inv.cfg = &cfg;
    inv.env = &env;
    inv.log = &log;
    inv.command = opts.command;
    inv.have_command = opts.have_command();
    inv.mux = opts.mux;
    inv.tty = tty;
    inv.subsystem = cfg.session_type.value_or(session_type::normal) == session_type::subsystem;
    return run_client(inv);
}
