#include "ssh/sftp/sftp_args.hpp"

#include "common/short_options.hpp"
#include "ssh/sftp_client/program_args.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace longhaul::sftp_cli {

const char* usage_text() noexcept
{
    return "usage: sftp [-46AaCfNpqrv] [-B buffer_size] [-b batchfile] [-c cipher]\n"
           "          [-D sftp_server_command] [-F ssh_config] [-i identity_file]\n"
           "          [-J destination] [-l limit] [-o ssh_option] [-P port]\n"
           "          [-R num_requests] [-S program] [-s subsystem | sftp_server]\n"
           "          [-X sftp_option] destination\n";
}

namespace {

using sftp::parse_bounded_number;

// [user@]host[:path] / sftp://[user@]host[:port][/path].
void parse_destination(const std::string& arg, sftp_options& o)
{
    if (arg.rfind("sftp://", 0) == 0) {
        std::string rest = arg.substr(7);
        const auto slash = rest.find('/');
        std::string auth = rest.substr(0, slash);
        if (slash != std::string::npos && slash + 1 < rest.size())
            o.file1 = rest.substr(slash + 1);
        const auto at = auth.rfind('@');
        if (at != std::string::npos) {
            o.user = auth.substr(0, at);
            const auto semi = o.user.find(';');
            if (semi != std::string::npos)
                o.user.resize(semi);
            auth = auth.substr(at + 1);
        }
        std::string port;
        if (!auth.empty() && auth[0] == '[') {
            const auto close = auth.find(']');
            if (close == std::string::npos)
                throw usage_error("");
            o.host = auth.substr(1, close - 1);
            if (close + 1 < auth.size()) {
                if (auth[close + 1] != ':')
                    throw usage_error("");
                port = auth.substr(close + 2);
            }
        } else {
            const auto colon = auth.find(':');
            o.host = auth.substr(0, colon);
            if (colon != std::string::npos)
                port = auth.substr(colon + 1);
        }
        if (!port.empty()) {
            bool ok = false;
            o.port = int(parse_bounded_number(port, 1, 65535, ok));
            if (!ok)
                throw usage_error("");
        }
        // %XX escapes in the path.
        std::string decoded;
        for (std::size_t i = 0; i < o.file1.size(); ++i) {
            if (o.file1[i] == '%' && i + 2 < o.file1.size()) {
                decoded += char(std::strtol(o.file1.substr(i + 1, 2).c_str(), nullptr, 16));
                i += 2;
            } else {
                decoded += o.file1[i];
            }
        }
        o.file1 = decoded;
        return;
    }
    std::string s = arg;
    // host:path, unless a '/' comes before the ':' ([v6] in brackets).
    std::size_t colon = std::string::npos;
    bool bracket = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '[')
            bracket = true;
        else if (s[i] == ']')
            bracket = false;
        else if (s[i] == ':' && !bracket) {
            colon = i;
            break;
        } else if (s[i] == '/')
            break;
    }
    if (colon != std::string::npos) {
        o.file1 = s.substr(colon + 1);
        s = s.substr(0, colon);
    }
    const auto at = s.rfind('@');
    if (at != std::string::npos) {
        o.user = s.substr(0, at);
        s = s.substr(at + 1);
    }
    if (s.size() >= 2 && s.front() == '[' && s.back() == ']')
        s = s.substr(1, s.size() - 2);
    o.host = s;
}

void apply(sftp_options& o, char c, const std::string& arg)
{
    if (sftp::ssh_passthrough_option(c, arg, o.ssh.args))
        return;
    bool ok = false;
    switch (c) {
    case '1':
        throw option_error("SSH protocol v.1 is no longer supported");
    case '2':
        break;
    case 'A':
        // After the "-oForwardAgent=no" every transfer's ssh gets: -A wins.
        o.ssh.args.push_back("-A");
        break;
    case 'a':
        o.resume = true;
        break;
    case 'f':
        o.fsync = true;
        break;
    case 'h':
        throw usage_error("");
    case 'N':
        o.quiet = false;
        break;
    case 'p':
        o.preserve = true;
        break;
    case 'q':
        o.show_progress = false;
        o.quiet = true;
        o.ssh.args.push_back("-q");
        break;
    case 'r':
        o.recursive = true;
        break;
    case 'v':
        ++o.verbose;
        o.ssh.args.push_back("-v");
        break;
    case 'D':
        o.sftp_direct = arg;
        break;
    case 'l':
        o.limit_kbps = parse_bounded_number(arg, 1, 100ull * 1024 * 1024, ok);
        if (!ok)
            throw usage_error("");
        break;
    case 's':
        o.server = arg;
        break;
    case 'S':
        o.ssh.program = arg;
        break;
    case 'b':
        if (o.batch)
            throw option_error("Batch file already specified.");
        o.batch_file = arg;
        o.batch = true;
        o.quiet = true;
        o.show_progress = false;
        o.ssh.args.push_back("-oBatchMode=yes");
        break;
    case 'P':
        o.port = int(parse_bounded_number(arg, 1, 65535, ok));
        if (!ok)
            throw option_error("Bad port \"" + arg + "\"\n"); // OpenSSH's, newline and all
        break;
    case 'B':
        if (const auto v = sftp::parse_sftp_size_option(arg, sftp::max_buffer_size))
            o.buffer_size = *v;
        else
            throw option_error("Invalid buffer size \"" + arg + "\"");
        break;
    case 'R':
        if (const auto v = sftp::parse_sftp_size_option(arg, sftp::max_requests_in_flight))
            o.num_requests = *v;
        else
            throw option_error("Invalid number of requests \"" + arg + "\"");
        break;
    case 'X': {
        const std::string error = sftp::apply_sftp_x_option(arg, o.buffer_size, o.num_requests);
        if (!error.empty())
            throw option_error(error);
        break;
    }
    }
}

} // namespace

sftp_options parse_command_line(int argc, char** argv)
{
    sftp_options o;
    const auto scan = scan_short_options(std::vector<std::string>(argv, argv + argc), 1,
                                         "1246AafhNpqrvCc:D:i:l:o:s:S:b:B:F:J:P:R:X:", [&o](char c, const std::string& arg) {
                                             apply(o, c, arg);
                                             return true;
                                         });
    if (!scan.ok())
        throw usage_error(scan.error + "\r");
    const int i = static_cast<int>(scan.next);
    if (o.ssh.program.empty())
        o.ssh.program = sftp::sibling_program(argv[0], "ssh");
    if (o.sftp_direct.empty()) {
        if (i == argc || argc > i + 2)
            throw usage_error("");
        parse_destination(argv[i], o);
        if (i + 1 < argc)
            o.file2 = argv[i + 1];
        if (o.host.empty()) {
            throw usage_error("Missing hostname");
        }
    }
    return o;
}

std::vector<std::string> ssh_argv(const sftp_options& o)
{
    const std::string server = o.server.empty() ? "sftp" : o.server;
    // No subsystem when the server is a path (-s /usr/lib/.../sftp-server).
    const bool subsystem = server.find('/') == std::string::npos;
    return sftp::ssh_command_line(o.ssh, o.host, o.user, o.port, subsystem, server);
}

} // namespace longhaul::sftp_cli
