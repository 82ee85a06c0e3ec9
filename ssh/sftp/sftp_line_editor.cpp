#include "ssh/sftp/sftp_line_editor.hpp"

#include "ssh/sftp_client/tree.hpp"

#include <glob.h>
#include <histedit.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace longhaul::sftp_cli {

namespace {

std::string common_prefix(const std::vector<std::string>& v)
{
    if (v.empty())
        return {};
    std::string p = v[0];
    for (const auto& s : v) {
        std::size_t i = 0;
        while (i < p.size() && i < s.size() && p[i] == s[i])
            ++i;
        p.resize(i);
    }
    return p;
}

// Backslash before the characters the command line would take apart.
std::string quote_for_line(const std::string& s)
{
    std::string out;
    for (char c : s) {
        if (std::strchr(" \t'\"\\*?[#", c) != nullptr)
            out += '\\';
        out += c;
    }
    return out;
}

std::vector<std::string> local_matches(const std::string& word)
{
    std::vector<std::string> out;
    glob_t g{};
    const std::string pattern = escape_glob(word) + "*";
    if (::glob(pattern.c_str(), GLOB_MARK, nullptr, &g) == 0) {
        for (std::size_t i = 0; i < g.gl_pathc; ++i)
            out.push_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
    return out;
}

std::vector<std::string> remote_matches(const std::string& word, sftp_shell& shell)
{
    std::vector<std::string> out;
    const bool absolute = !word.empty() && word[0] == '/';
    const std::string base = absolute ? "" : escape_glob(shell.pwd());
    const std::string pattern = (absolute ? "" : base + "/") + escape_glob(word) + "*";
    const auto g = sftp::remote_glob(shell.conn().fs(), pattern, true, false);
    for (auto p : g.paths) {
        if (!absolute) {
            const std::string prefix = shell.pwd() + "/";
            if (p.compare(0, prefix.size(), prefix) == 0)
                p = p.substr(prefix.size());
            else if (shell.pwd() == "/" && !p.empty() && p[0] == '/')
                p = p.substr(1);
        }
        out.push_back(p);
    }
    return out;
}

} // namespace

completion complete_line(const std::string& line, sftp_shell* shell)
{
    completion c;
    std::string err;
    // The word being completed starts after the last unquoted blank.
    std::size_t start = line.size();
    while (start > 0 && line[start - 1] != ' ' && line[start - 1] != '\t')
        --start;
    const std::string before = line.substr(0, start);
    auto words = split_words(before, err).value_or(std::vector<std::string>{});
    const std::string partial = line.substr(start);
    // Strip the '-'/'@' prefixes from the command word.
    if (words.empty()) {
        std::string p = partial;
        while (!p.empty() && (p[0] == '-' || p[0] == '@'))
            p.erase(0, 1);
        std::vector<std::string> names;
        for (const auto& cmd : command_table())
            if (std::strncmp(cmd.name, p.c_str(), p.size()) == 0 && std::strcmp(cmd.name, "!") != 0 &&
                std::strcmp(cmd.name, "?") != 0)
                names.push_back(cmd.name);
        if (names.size() == 1) {
            c.insert = names[0].substr(p.size()) + " ";
        } else if (!names.empty()) {
            c.insert = common_prefix(names).substr(p.size());
            c.listing = names;
        }
        return c;
    }
    std::string cmd = words[0];
    while (!cmd.empty() && (cmd[0] == '-' || cmd[0] == '@'))
        cmd.erase(0, 1);
    const command_spec* spec = nullptr;
    for (const auto& t : command_table())
        if (cmd == t.name)
            spec = &t;
    if (spec == nullptr || spec->completes == command_spec::none)
        return c;
    // Which argument is this (flags do not count)? get/put swap sides for
    // their second path.
    int argno = 0;
    for (std::size_t i = 1; i < words.size(); ++i)
        if (words[i].empty() || words[i][0] != '-')
            ++argno;
    bool remote = spec->completes == command_spec::remote;
    if (argno == 1 && (cmd == "get" || cmd == "reget" || cmd == "put" || cmd == "reput" || cmd == "mget" ||
                       cmd == "mput"))
        remote = !remote;
    std::string word;
    std::string e2;
    if (auto w = split_words(partial, e2); w && !w->empty())
        word = undo_glob_escape((*w)[0]);
    std::vector<std::string> matches;
    if (remote) {
        if (shell == nullptr)
            return c;
        matches = remote_matches(word, *shell);
    } else {
        matches = local_matches(word);
    }
    if (matches.empty())
        return c;
    const std::string prefix = common_prefix(matches);
    if (prefix.size() >= word.size()) {
        c.insert = quote_for_line(prefix.substr(word.size()));
        if (matches.size() == 1 && (prefix.empty() || prefix.back() != '/'))
            c.insert += ' ';
    }
    if (matches.size() > 1) {
        for (auto& m : matches) {
            const auto slash = m.find_last_of('/', m.size() > 1 ? m.size() - 2 : 0);
            c.listing.push_back(slash == std::string::npos ? m : m.substr(slash + 1));
        }
    }
    return c;
}

struct line_editor::impl {
    sftp_shell& shell;
    EditLine* el = nullptr;
    History* hl = nullptr;
    HistEvent hev{};

    explicit impl(sftp_shell& s) : shell(s) {}

    static char* prompt(EditLine*)
    {
        static char p[] = "sftp> ";
        return p;
    }

    static unsigned char complete(EditLine* el, int)
    {
        void* data = nullptr;
        el_get(el, EL_CLIENTDATA, &data);
        auto* self = static_cast<impl*>(data);
        const LineInfo* li = el_line(el);
        const std::string line(li->buffer, std::size_t(li->cursor - li->buffer));
        const completion c = complete_line(line, &self->shell);
        if (!c.listing.empty()) {
            std::printf("\n");
            std::size_t m = 0;
            for (const auto& s : c.listing)
                m = std::max(m, s.size());
            column_printer cols(m, 80, false);
            std::string out;
            for (const auto& s : c.listing)
                out += cols.add(s);
            out += cols.finish();
            std::fputs(out.c_str(), stdout);
            std::fflush(stdout);
        }
        if (!c.insert.empty() && el_insertstr(el, c.insert.c_str()) == -1)
            return CC_ERROR;
        return c.listing.empty() ? CC_REFRESH : CC_REDISPLAY;
    }
};

line_editor::line_editor(sftp_shell& shell) : p_(std::make_unique<impl>(shell))
{
    p_->el = el_init("sftp", stdin, stdout, stderr);
    p_->hl = history_init();
    history(p_->hl, &p_->hev, H_SETSIZE, 100);
    el_set(p_->el, EL_HIST, history, p_->hl);
    el_set(p_->el, EL_PROMPT, &impl::prompt);
    el_set(p_->el, EL_EDITOR, "emacs");
    el_set(p_->el, EL_TERMINAL, nullptr);
    el_set(p_->el, EL_SIGNAL, 1);
    el_set(p_->el, EL_CLIENTDATA, static_cast<void*>(p_.get()));
    el_set(p_->el, EL_ADDFN, "ftp-complete", "Context sensitive argument completion", &impl::complete);
    el_set(p_->el, EL_BIND, "^I", "ftp-complete", nullptr);
    // Word editing as in OpenSSH's sftp.
    el_set(p_->el, EL_BIND, "^w", "ed-delete-prev-word", nullptr);
    el_set(p_->el, EL_BIND, "\\e[1;5C", "em-next-word", nullptr);
    el_set(p_->el, EL_BIND, "\\e[1;5D", "ed-prev-word", nullptr);
    el_source(p_->el, nullptr);
}

line_editor::~line_editor()
{
    if (p_->el != nullptr)
        el_end(p_->el);
    if (p_->hl != nullptr)
        history_end(p_->hl);
}

std::optional<std::string> line_editor::read()
{
    int count = 0;
    const char* line = el_gets(p_->el, &count);
    if (line == nullptr || count <= 0)
        return std::nullopt;
    std::string s(line, std::size_t(count));
    if (s.find_first_not_of(" \t\r\n") != std::string::npos)
        history(p_->hl, &p_->hev, H_ENTER, line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

} // namespace longhaul::sftp_cli
