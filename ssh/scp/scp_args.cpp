#include "ssh/scp/scp_args.hpp"

#include "common/short_options.hpp"
#include "ssh/sftp_client/program_args.hpp"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace longhaul::scp {

const char* usage_text() noexcept
{
    return "usage: scp [-346ABCOpqRrsTv] [-c cipher] [-D sftp_server_path] [-F ssh_config]\n"
           "           [-i identity_file] [-J destination] [-l limit] [-o ssh_option]\n"
           "           [-P port] [-S program] [-X sftp_option] source ... target\n";
}

namespace {

using sftp::parse_bounded_number;

void apply(scp_options& o, char c, const std::string& arg)
{
    // ssh's options go to the local ssh and to the origin host's of -R.
    auto both = [&](const std::vector<std::string>& a) {
        for (const auto& s : a) {
            o.ssh.args.push_back(s);
            o.remote_remote_args.push_back(s);
        }
    };
    std::vector<std::string> passed;
    if (sftp::ssh_passthrough_option(c, arg, passed)) {
        both(passed);
        return;
    }
    bool ok = false;
    switch (c) {
    case '1':
        throw option_error("SSH protocol v.1 is no longer supported");
    case '2':
        break; // ignored, as OpenSSH does
    case 'A':
        // The agent goes to the hosts scp's ssh reaches (the origin host of
        // a -R copy uses it to reach the target); -A comes after the
        // "-oForwardAgent=no" every transfer's ssh gets, and wins, as in
        // OpenSSH's ssh.
        both({"-A"});
        break;
    case '3':
        o.through_local = true;
        break;
    case 'R':
        o.through_local = false;
        break;
    case 'B':
        both({"-oBatchmode=yes"});
        break;
    case 'l': {
        const auto v = parse_bounded_number(arg, 1, 100ull * 1024 * 1024, ok);
        if (!ok)
            throw usage_error("");
        o.limit_kbps = v;
        break;
    }
    case 'p':
        o.preserve = true;
        break;
    case 'P': {
        const auto v = parse_bounded_number(arg, 1, 65535, ok);
        if (!ok)
            throw option_error("bad port \"" + arg + "\"\n"); // OpenSSH's, newline and all
        o.port = int(v);
        break;
    }
    case 'q':
        o.quiet = true;
        o.ssh.args.push_back("-q");
        o.remote_remote_args.push_back("-q");
        break;
    case 'r':
        o.recursive = true;
        break;
    case 'S':
        o.ssh.program = arg;
        break;
    case 'v':
        ++o.verbose;
        both({"-v"});
        break;
    case 'O':
        o.mode = transfer_mode::legacy;
        break;
    case 's':
        o.mode = transfer_mode::sftp;
        break;
    case 'T':
        o.strict_names = false;
        break;
    case 'D':
        o.sftp_direct = arg;
        break;
    case 'X': {
        const std::string error = sftp::apply_sftp_x_option(arg, o.buffer_size, o.num_requests);
        if (!error.empty())
            throw option_error(error);
        break;
    }
    case 'a':
        o.resume = true;
        break;
    case 'd':
        o.target_must_be_dir = true;
        break;
    case 'f':
        o.server_from = true;
        break;
    case 't':
        o.server_to = true;
        break;
    case 'M':
        throw usage_error(""); // OpenSSH's scp answers -M with its usage too
    default:
        break;
    }
}

} // namespace

scp_options parse_command_line(int argc, char** argv)
{
    scp_options o;
    const std::vector<std::string> words(argv, argv + argc);
    const auto scan = scan_short_options(words, 1, "12346ABCTdfOpqRrstvaD:F:J:M:P:S:c:i:l:o:X:",
                                         [&o](char c, const std::string& arg) {
                                             apply(o, c, arg);
                                             return true;
                                         });
    if (!scan.ok())
        throw usage_error(std::string(argv[0]) + ": " + scan.error + "\r");
    o.operands.assign(words.begin() + static_cast<std::ptrdiff_t>(scan.next), words.end());
    if (o.ssh.program.empty())
        o.ssh.program = sftp::sibling_program(argv[0], "ssh");
    o.progname = argv[0];
    return o;
}

std::size_t find_colon(const std::string& cp) noexcept
{
    bool bracket = false;
    if (cp.empty() || cp[0] == ':')
        return std::string::npos;
    std::size_t i = 0;
    if (cp[0] == '[')
        bracket = true;
    for (; i < cp.size(); ++i) {
        const char c = cp[i];
        if (c == '@' && i + 1 < cp.size() && cp[i + 1] == '[')
            bracket = true;
        if (c == ']' && i + 1 < cp.size() && cp[i + 1] == ':' && bracket)
            return i + 1;
        if (c == ':' && !bracket)
            return i;
        if (c == '/')
            return std::string::npos;
    }
    return std::string::npos;
}

bool ok_user_name(const std::string& user)
{
    if (user.empty())
        return false;
    for (unsigned char c : user) {
        if (c & 0x80)
            continue;
        if (!std::isalnum(c) && c != '-' && c != '_' && c != '.' && c != '@')
            return false;
    }
    return user[0] != '-';
}

std::optional<operand> parse_operand(const std::string& arg)
{
    operand op;
    if (arg.rfind("scp://", 0) == 0) {
        // scp://[user@]host[:port][/path]; the path is relative to the home
        // directory unless it starts with "//"... OpenSSH keeps the text
        // after the first '/' (empty: the home directory).
        std::string rest = arg.substr(6);
        const auto slash = rest.find('/');
        std::string authority = rest.substr(0, slash);
        op.path = slash == std::string::npos ? "" : rest.substr(slash + 1);
        const auto at = authority.rfind('@');
        if (at != std::string::npos) {
            op.user = authority.substr(0, at);
            authority = authority.substr(at + 1);
            const auto semi = op.user.find(';');
            if (semi != std::string::npos)
                op.user.resize(semi); // ;fingerprint= parameters are not used
        }
        if (!authority.empty() && authority[0] == '[') {
            const auto close = authority.find(']');
            if (close == std::string::npos)
                return std::nullopt;
            op.host = authority.substr(1, close - 1);
            authority = authority.substr(close + 1);
            if (!authority.empty() && authority[0] != ':')
                return std::nullopt;
            if (!authority.empty())
                authority = authority.substr(1);
            else
                authority.clear();
            if (!authority.empty()) {
                char* end = nullptr;
                const long p = std::strtol(authority.c_str(), &end, 10);
                if (*end != '\0' || p <= 0 || p > 65535)
                    return std::nullopt;
                op.port = int(p);
            }
        } else {
            const auto colon = authority.find(':');
            op.host = authority.substr(0, colon);
            if (colon != std::string::npos) {
                char* end = nullptr;
                const std::string ps = authority.substr(colon + 1);
                const long p = std::strtol(ps.c_str(), &end, 10);
                if (ps.empty() || *end != '\0' || p <= 0 || p > 65535)
                    return std::nullopt;
                op.port = int(p);
            }
        }
        if (op.host.empty())
            return std::nullopt;
        // %XX escapes in the path.
        std::string decoded;
        for (std::size_t i = 0; i < op.path.size(); ++i) {
            if (op.path[i] == '%' && i + 2 < op.path.size() && std::isxdigit(static_cast<unsigned char>(op.path[i + 1])) &&
                std::isxdigit(static_cast<unsigned char>(op.path[i + 2]))) {
                decoded += char(std::strtol(op.path.substr(i + 1, 2).c_str(), nullptr, 16));
                i += 2;
            } else {
                decoded += op.path[i];
            }
        }
        op.path = decoded;
        return op;
    }
    const std::size_t colon = find_colon(arg);
    if (colon == std::string::npos) {
        op.path = arg;
        return op;
    }
    std::string userhost = arg.substr(0, colon);
    op.path = arg.substr(colon + 1);
    const auto at = userhost.rfind('@');
    if (at != std::string::npos) {
        op.user = userhost.substr(0, at);
        userhost = userhost.substr(at + 1);
    }
    if (userhost.size() >= 2 && userhost.front() == '[' && userhost.back() == ']')
        userhost = userhost.substr(1, userhost.size() - 2);
    op.host = userhost;
    return op;
}

} // namespace longhaul::scp
