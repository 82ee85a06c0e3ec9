#include "ssh/sftp/sftp_command_line.hpp"

#include "common/short_options.hpp"
#include "ssh/sftp_client/text.hpp"

#include <strings.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>

namespace longhaul::sftp_cli {

using sftp::strprintf;

namespace {

bool is_glob_char(char c)
{
    return c == '*' || c == '?' || c == '[';
}

// getopt over one command's words (flags first, as OpenSSH's optind
// loop): calls `on` for each flag; -1 after OpenSSH's message for an
// unknown one.
int parse_flags(const std::vector<std::string>& argv, const char* allowed, const std::string& cmd,
                const sftp::output_sink& out, const std::function<void(char)>& on)
{
    const auto scan = scan_short_options(argv, 1, allowed, [&](char c, const std::string&) {
        on(c);
        return true;
    });
    if (!scan.ok()) {
        out.err(strprintf("%s: Invalid flag -%c", cmd.c_str(), scan.error.back()));
        return -1;
    }
    return static_cast<int>(scan.next);
}

} // namespace

const std::vector<command_spec>& command_table()
{
    static const std::vector<command_spec> t = {
        {"bye", i_quit, command_spec::none},       {"cd", i_chdir, command_spec::remote},
        {"chdir", i_chdir, command_spec::remote},  {"chgrp", i_chgrp, command_spec::remote},
        {"chmod", i_chmod, command_spec::remote},  {"chown", i_chown, command_spec::remote},
        {"copy", i_copy, command_spec::remote},    {"cp", i_copy, command_spec::remote},
        {"df", i_df, command_spec::remote},        {"dir", i_ls, command_spec::remote},
        {"exit", i_quit, command_spec::none},      {"get", i_get, command_spec::remote},
        {"help", i_help, command_spec::none},      {"lcd", i_lchdir, command_spec::local},
        {"lchdir", i_lchdir, command_spec::local}, {"lls", i_lls, command_spec::local},
        {"lmkdir", i_lmkdir, command_spec::local}, {"ln", i_link, command_spec::remote},
        {"lpwd", i_lpwd, command_spec::local},     {"ls", i_ls, command_spec::remote},
        {"lumask", i_lumask, command_spec::none},  {"mkdir", i_mkdir, command_spec::remote},
        {"mget", i_get, command_spec::remote},     {"mput", i_put, command_spec::local},
        {"progress", i_progress, command_spec::none}, {"put", i_put, command_spec::local},
        {"pwd", i_pwd, command_spec::remote},      {"quit", i_quit, command_spec::none},
        {"reget", i_reget, command_spec::remote},  {"rename", i_rename, command_spec::remote},
        {"reput", i_reput, command_spec::local},   {"rm", i_rm, command_spec::remote},
        {"rmdir", i_rmdir, command_spec::remote},  {"symlink", i_symlink, command_spec::remote},
        {"version", i_version, command_spec::none}, {"!", i_shell, command_spec::none},
        {"?", i_help, command_spec::none},
    };
    return t;
}

std::optional<std::vector<std::string>> split_words(const std::string& arg, std::string& error)
{
    std::vector<std::string> out;
    std::string cur;
    bool in_word = false;
    char quot = 0;
    for (std::size_t i = 0; i < arg.size(); ++i) {
        const char c = arg[i];
        if (quot == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            if (in_word) {
                out.push_back(cur);
                cur.clear();
                in_word = false;
            }
            continue;
        }
        if (c == '\\') {
            in_word = true;
            if (i + 1 >= arg.size()) {
                error = "Invalid escape character";
                return std::nullopt;
            }
            const char n = arg[i + 1];
            if (quot != 0) {
                if (n == quot) {
                    cur += n;
                    ++i;
                } else if (is_glob_char(n)) {
                    // A quoted, escaped glob character stays escaped twice
                    // over (glob undoes one level).
                    cur += "\\\\";
                    cur += n;
                    ++i;
                } else if (n == '\\') {
                    cur += "\\\\";
                    ++i;
                } else {
                    cur += c;
                }
            } else {
                if (is_glob_char(n) || n == '\\') {
                    cur += '\\';
                    cur += n;
                } else {
                    cur += n;
                }
                ++i;
            }
            continue;
        }
        if (c == '#' && quot == 0) {
            if (!in_word)
                break; // a comment
            cur += c;
            continue;
        }
        if (c == '\'' || c == '"') {
            in_word = true;
            if (quot == 0) {
                quot = c;
                continue;
            }
            if (quot == c) {
                quot = 0;
                continue;
            }
            cur += c;
            continue;
        }
        in_word = true;
        if (quot != 0 && is_glob_char(c))
            cur += '\\'; // quoted glob characters are literal
        cur += c;
    }
    if (quot != 0) {
        error = "Unterminated quoted argument";
        return std::nullopt;
    }
    if (in_word)
        out.push_back(cur);
    return out;
}

std::string undo_glob_escape(const std::string& s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && (is_glob_char(s[i + 1]) || s[i + 1] == '\\')) {
            out += s[++i];
            continue;
        }
        out += s[i];
    }
    return out;
}

std::string escape_glob(const std::string& s)
{
    std::string out;
    for (char c : s) {
        if (is_glob_char(c) || c == ']' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

int parse_command_line(const std::string& line, command_args& a, line_marks& m, const sftp::output_sink& out)
{
    std::size_t pos = line.find_first_not_of(" \t\r\n");
    m = line_marks{};
    std::string cp = pos == std::string::npos ? "" : line.substr(pos);
    std::size_t k = 0;
    for (; k < cp.size(); ++k) {
        if (cp[k] == '-')
            m.ignore_errors = true;
        else if (cp[k] == '@')
            m.no_echo = true;
        else
            break;
    }
    cp = cp.substr(k);
    pos = cp.find_first_not_of(" \t\r\n");
    cp = pos == std::string::npos ? "" : cp.substr(pos);
    if (cp.empty() || cp[0] == '#') {
        m.blank = true;
        return 0;
    }
    std::string error;
    auto words = split_words(cp, error);
    if (!words) {
        out.err(error);
        return -1;
    }
    auto& argv = *words;
    const command_spec* spec = nullptr;
    if (!argv.empty()) {
        for (const auto& c : command_table())
            if (::strcasecmp(c.name, argv[0].c_str()) == 0) {
                spec = &c;
                break;
            }
    }
    if (cp[0] == '!') {
        a.id = i_shell;
        a.name.assign(1, '!'); // (GCC 12 warns, wrongly, on = "!" here: -Wrestrict)
        a.rest.assign(cp, 1, std::string::npos);
        return 0;
    }
    if (spec == nullptr) {
        out.err("Invalid command.");
        return -1;
    }
    a.id = spec->id;
    a.name = spec->name;
    const std::string& cmd = a.name;
    int optidx = 1;
    auto need_paths = [&](int n, bool glob_first) -> int {
        if (int(argv.size()) - optidx < n) {
            out.err(n == 2 ? strprintf("You must specify two paths after a %s command.", cmd.c_str())
                            : strprintf("You must specify a path after a %s command.", cmd.c_str()));
            return -1;
        }
        a.path1 = glob_first ? argv[optidx] : undo_glob_escape(argv[optidx]);
        if (n == 2)
            a.path2 = undo_glob_escape(argv[optidx + 1]);
        return 0;
    };
    switch (a.id) {
    case i_get:
    case i_reget:
    case i_put:
    case i_reput: {
        optidx = parse_flags(argv, "afPpRr", cmd, out, [&](char c) {
            switch (c) {
            case 'a': a.a = true; break;
            case 'f': a.f = true; break;
            case 'p':
            case 'P': a.p = true; break;
            case 'r':
            case 'R': a.r = true; break;
            }
        });
        if (optidx < 0)
            return -1;
        if (int(argv.size()) - optidx < 1) {
            out.err(strprintf("You must specify at least one path after a %s command.", cmd.c_str()));
            return -1;
        }
        a.path1 = argv[optidx];
        if (int(argv.size()) - optidx > 1)
            a.path2 = undo_glob_escape(argv[optidx + 1]);
        return 0;
    }
    case i_link:
        optidx = parse_flags(argv, "s", cmd, out, [&](char) { a.s = true; });
        if (optidx < 0)
            return -1;
        return need_paths(2, false);
    case i_copy:
    case i_symlink:
        optidx = parse_flags(argv, "", cmd, out, [](char) {});
        if (optidx < 0)
            return -1;
        return need_paths(2, false);
    case i_rename:
        optidx = parse_flags(argv, "l", cmd, out, [&](char) { a.l_flag = true; });
        if (optidx < 0)
            return -1;
        return need_paths(2, false);
    case i_rm:
    case i_mkdir:
    case i_rmdir:
    case i_lmkdir:
    case i_chdir:
    case i_lchdir: {
        const bool mandatory = a.id != i_chdir && a.id != i_lchdir;
        optidx = parse_flags(argv, "", cmd, out, [](char) {});
        if (optidx < 0)
            return -1;
        if (int(argv.size()) - optidx < 1) {
            if (!mandatory)
                return 0;
            out.err(strprintf("You must specify a path after a %s command.", cmd.c_str()));
            return -1;
        }
        a.path1 = a.id == i_rm ? argv[optidx] : undo_glob_escape(argv[optidx]);
        return 0;
    }
    case i_df:
        optidx = parse_flags(argv, "hi", cmd, out, [&](char c) {
            if (c == 'h')
                a.h = true;
            else
                a.i = true;
        });
        if (optidx < 0)
            return -1;
        if (int(argv.size()) - optidx >= 1)
            a.path1 = undo_glob_escape(argv[optidx]);
        return 0;
    case i_ls:
        optidx = parse_flags(argv, "1Safhlnrt", cmd, out, [&](char c) {
            switch (c) {
            case '1': a.ls.short_view = true; a.ls.long_view = false; break;
            case 'S': a.ls.sort = ls_flags::by_size; break;
            case 'a': a.ls.show_all = true; break;
            case 'f': a.ls.sort = ls_flags::none; break;
            case 'h': a.ls.si_units = true; break;
            case 'l': a.ls.long_view = true; a.ls.short_view = false; break;
            case 'n': a.ls.numeric = true; a.ls.long_view = true; a.ls.short_view = false; break;
            case 'r': a.ls.reverse = true; break;
            case 't': a.ls.sort = ls_flags::by_time; break;
            }
        });
        if (optidx < 0)
            return -1;
        if (int(argv.size()) - optidx > 0)
            a.path1 = argv[optidx];
        return 0;
    case i_lls: {
        // Everything after the command word goes to ls(1).
        std::size_t p = cp.find_first_of(" \t");
        a.rest = p == std::string::npos ? "" : cp.substr(p);
        const auto q = a.rest.find_first_not_of(" \t");
        a.rest = q == std::string::npos ? "" : a.rest.substr(q);
        return 0;
    }
    case i_lumask:
    case i_chmod:
    case i_chown:
    case i_chgrp: {
        const int base = (a.id == i_lumask || a.id == i_chmod) ? 8 : 10;
        optidx = parse_flags(argv, "h", cmd, out, [&](char) { a.h = true; });
        if (optidx < 0)
            return -1;
        bool bad = int(argv.size()) - optidx < 1;
        if (!bad) {
            errno = 0;
            char* end = nullptr;
            const long long ll = std::strtoll(argv[optidx].c_str(), &end, base);
            bad = end == argv[optidx].c_str() || *end != '\0' || errno == ERANGE || ll < 0 || ll > UINT32_MAX;
            a.n = static_cast<unsigned long>(ll);
        }
        if (bad) {
            out.err(strprintf("You must supply a numeric argument to the %s command.", cmd.c_str()));
            return -1;
        }
        if (a.id == i_lumask)
            return 0;
        if (int(argv.size()) - optidx < 2) {
            out.err(strprintf("You must specify a path after a %s command.", cmd.c_str()));
            return -1;
        }
        a.path1 = argv[optidx + 1];
        return 0;
    }
    default:
        optidx = parse_flags(argv, "", cmd, out, [](char) {});
        return optidx < 0 ? -1 : 0;
    }
}

} // namespace longhaul::sftp_cli
