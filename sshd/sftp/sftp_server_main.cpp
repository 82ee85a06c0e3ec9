#include "sshd/sftp/sftp_server_main.hpp"

#include "common/log.hpp"
#include "common/percent_expand.hpp"
#include "common/short_options.hpp"
#include "common/text.hpp"
#include "sshd/sftp/sftp_server.hpp"

#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace longhaul::sftp {

namespace {

// Descriptors kept back from the handle limit: stdio, syslog, spares (the
// "- 5" of OpenSSH's limits reply, with room for directory streams).
constexpr rlim_t reserved_descriptors = 16;
// The descriptors sftp-server asks for (its soft limit is raised up to the
// hard limit, never beyond this).
constexpr rlim_t wanted_descriptors = 65536;

struct facility_name {
    const char* name;
    int facility;
};
constexpr facility_name facilities[] = {
    {"DAEMON", LOG_DAEMON}, {"USER", LOG_USER},     {"AUTH", LOG_AUTH},     {"AUTHPRIV", LOG_AUTHPRIV},
    {"LOCAL0", LOG_LOCAL0}, {"LOCAL1", LOG_LOCAL1}, {"LOCAL2", LOG_LOCAL2}, {"LOCAL3", LOG_LOCAL3},
    {"LOCAL4", LOG_LOCAL4}, {"LOCAL5", LOG_LOCAL5}, {"LOCAL6", LOG_LOCAL6}, {"LOCAL7", LOG_LOCAL7},
};

std::optional<int> parse_facility(const std::string& s)
{
    for (const auto& f : facilities)
        if (strcasecmp(f.name, s.c_str()) == 0)
            return f.facility;
    return std::nullopt;
}

std::string base_name(const std::string& argv0)
{
    const auto slash = argv0.rfind('/');
    return slash == std::string::npos ? argv0 : argv0.substr(slash + 1);
}

void usage(const std::string& prog)
{
    std::fprintf(stderr,
                 "usage: %s [-ehR] [-d start_directory] [-f log_facility] [-l log_level]\n"
                 "\t[-P denied_requests] [-p allowed_requests] [-u umask]\n"
                 "       %s -Q protocol_feature\n",
                 prog.c_str(), prog.c_str());
}

std::vector<std::string> split_commas(const std::string& s)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const auto comma = s.find(',', start);
        out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos)
            return out;
        start = comma + 1;
    }
}

// OpenSSH's tilde_expand_filename() for -d: "~" and "~/..." are the user's
// home, "~name/..." another user's.
std::optional<std::string> tilde_expand(const std::string& path, const server_user& user, name_service& names,
                                        std::string& error)
{
    if (path.empty() || path[0] != '~')
        return path;
    const auto slash = path.find('/');
    const std::string who = path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    std::string home;
    if (who.empty()) {
        home = user.home;
    } else if (auto h = names.home_directory(who)) {
        home = *h;
    } else {
        error = "tilde_expand_filename: No such user " + who;
        return std::nullopt;
    }
    if (slash == std::string::npos)
        return home;
    std::string rest = path.substr(slash + 1);
    if (!home.empty() && home.back() == '/')
        home.pop_back();
    return home + "/" + rest;
}

// Runs the core over the two descriptors until the session ends.
int serve(server& core, int in_fd, int out_fd, logger& log)
{
    for (;;) {
        core.process();
        if (core.finished() && core.output().empty())
            return core.exit_status();
        struct pollfd pfd[2] = {{-1, POLLIN, 0}, {-1, POLLOUT, 0}};
        mutable_byte_span space = core.finished() ? mutable_byte_span{} : core.input_space();
        if (!space.empty())
            pfd[0].fd = in_fd;
        if (!core.output().empty())
            pfd[1].fd = out_fd;
        if (pfd[0].fd < 0 && pfd[1].fd < 0)
            return core.exit_status(); // nothing can move (cannot happen: output drains)
        if (::poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            log.error(std::string("poll: ") + std::strerror(errno));
            core.close_session(2);
            return 2;
        }
        if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            const ssize_t n = ::read(in_fd, space.data(), space.size());
            if (n == 0) {
                core.input_eof();
            } else if (n < 0) {
                if (errno != EAGAIN && errno != EINTR) {
                    log.error(std::string("read: ") + std::strerror(errno));
                    core.close_session(1);
                    return 1;
                }
            } else {
                core.commit_input(static_cast<std::size_t>(n));
            }
        }
        if (pfd[1].revents & (POLLOUT | POLLHUP | POLLERR)) {
            const auto out = core.output();
            const ssize_t n = ::write(out_fd, out.data(), out.size());
            if (n == 0 || (n < 0 && errno == EPIPE)) {
                log.debug("write eof");
                core.close_session(0);
                return 0;
            }
            if (n < 0) {
                if (errno != EAGAIN && errno != EINTR) {
                    log.error(std::string("write: ") + std::strerror(errno));
                    core.close_session(1);
                    return 1;
                }
            } else {
                core.consume_output(static_cast<std::size_t>(n));
            }
        }
    }
}

} // namespace

std::vector<std::string> split_internal_sftp_command(const std::string& command)
{
    std::vector<std::string> argv;
    std::size_t i = 0;
    while (i < command.size()) {
        while (i < command.size() && command[i] == ' ')
            ++i;
        const std::size_t start = i;
        while (i < command.size() && command[i] != ' ')
            ++i;
        if (i > start)
            argv.push_back(command.substr(start, i - start));
    }
    if (argv.empty())
        argv.push_back("sftp-server");
    return argv;
}

bool is_internal_sftp(const std::string& command) noexcept
{
    constexpr std::string_view name = "internal-sftp";
    return command.compare(0, name.size(), name) == 0 &&
           (command.size() == name.size() || command[name.size()] == ' ' || command[name.size()] == '\t');
}

int sftp_server_main(const server_invocation& inv)
{
    const std::string prog = base_name(inv.argv.empty() ? std::string("sftp-server") : inv.argv[0]);
    system_names names;
    server_options options;
    options.user = inv.user.name;
    options.home = inv.user.home;
    bool log_stderr = false;
    int facility = LOG_AUTH;
    std::optional<mode_t> mask;

    // OpenSSH reports fatal option errors through its log, which is syslog
    // unless -e came first.
    const auto fatal = [&](const std::string& message) {
        logger l(prog, log_level::error);
        if (!log_stderr)
            l.to_syslog(facility);
        l.fatal(message);
        return 255;
    };

    // getopt("d:f:l:P:p:Q:u:cehR"); -c ends the options.
    std::optional<int> exit_status; // an option that ends the program here
    auto finish = [&](int status) {
        exit_status = status;
        return false;
    };
    auto option = [&](char opt, const std::string& value) {
        switch (opt) {
        case 'Q':
            if (strcasecmp(value.c_str(), "requests") != 0) {
                std::fprintf(stderr, "Invalid query type\n");
                return finish(1);
            }
            for (auto n : server::request_names())
                std::printf("%.*s\n", static_cast<int>(n.size()), n.data());
            std::fflush(stdout);
            return finish(0);
        case 'R': options.read_only = true; break;
        case 'c': return false; // invoked as a shell: "sftp-server -c command"
        case 'e': log_stderr = true; break;
        case 'l':
            if (auto l = parse_log_level(value)) {
                options.level = *l;
            } else {
                std::fprintf(stderr, "Unrecognized internal syslog level code -1\n");
                return finish(1);
            }
            break;
        case 'f':
            if (auto f = parse_facility(value)) {
                facility = *f;
            } else {
                std::fprintf(stderr, "Unrecognized internal syslog facility code -1\n");
                return finish(1);
            }
            break;
        case 'd': {
            std::string error;
            auto expanded = tilde_expand(value, inv.user, names, error);
            if (!expanded)
                return finish(fatal(error));
            percent_tokens tokens{{'d', inv.user.home}, {'u', inv.user.name}, {'U', std::to_string(inv.user.uid)}};
            auto dir = percent_expand(*expanded, tokens, error);
            if (!dir)
                return finish(fatal(error));
            options.start_directory = *dir;
            break;
        }
        case 'p':
            if (options.allowed)
                return finish(fatal("Permitted requests already set"));
            options.allowed = split_commas(value);
            break;
        case 'P':
            if (options.denied)
                return finish(fatal("Refused requests already set"));
            options.denied = split_commas(value);
            break;
        case 'u': {
            char* end = nullptr;
            errno = 0;
            const long m = std::strtol(value.c_str(), &end, 8);
            if (m < 0 || m > 0777 || *end != '\0' || end == value.c_str() || (m == 0 && errno != 0))
                return finish(fatal("Invalid umask \"" + value + "\""));
            mask = static_cast<mode_t>(m);
            break;
        }
        case 'h':
            usage(prog);
            return finish(1);
        }
        return true;
    };
    const auto scan = scan_short_options(inv.argv, 1, "d:f:l:P:p:Q:u:cehR", option);
    if (exit_status)
        return *exit_status;
    if (!scan.error.empty()) { // OpenSSH's getopt says nothing more
        usage(prog);
        return 1;
    }

    logger log(prog, options.level);
    if (!log_stderr)
        log.to_syslog(facility);
    if (mask)
        ::umask(*mask);

    if (!inv.ssh_connection.empty()) {
        const auto space = inv.ssh_connection.find(' ');
        if (space == std::string::npos) {
            log.error("Malformed SSH_CONNECTION variable: \"" + printable(inv.ssh_connection) + "\"");
            return 255;
        }
        options.client_address = inv.ssh_connection.substr(0, space);
    }

    // Many open handles: raise the descriptor limit as far as allowed, and
    // promise (limits@openssh.com) only what fits below it.
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        const rlim_t want = std::min<rlim_t>(rl.rlim_max, wanted_descriptors);
        if (rl.rlim_cur < want) {
            rl.rlim_cur = want;
            ::setrlimit(RLIMIT_NOFILE, &rl);
            ::getrlimit(RLIMIT_NOFILE, &rl);
        }
        const rlim_t usable = rl.rlim_cur > reserved_descriptors ? rl.rlim_cur - reserved_descriptors : 1;
        options.max_handles = std::min<std::size_t>(options.max_handles, static_cast<std::size_t>(usable));
        options.max_directory_handles = std::min(options.max_directory_handles, options.max_handles);
    }
    // A closed client pipe is an EPIPE to handle, not a signal.
    std::signal(SIGPIPE, SIG_IGN);

    posix_filesystem fs;
    server core(std::move(options), fs, names, [&log](log_level l, std::string_view m) { log.log(l, m); });
    core.start();
    return serve(core, inv.in_fd, inv.out_fd, log);
}

} // namespace longhaul::sftp
