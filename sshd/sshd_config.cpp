// Loading sshd_config: reading files, Include, the order of -o/-p/-h and
// the file, flattening Match blocks into conditioned lines, and evaluating
// them for a connection.
#include "sshd/sshd_config_internal.hpp"

#include "common/config_line.hpp"

#include <glob.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace longhaul {

namespace detail {

void parse_log::fatal(const std::string& text) const
{
    std::string all;
    for (const auto& m : messages)
        all += m.text + "\n";
    all += text;
    throw config_error(all);
}

std::string tilde_expand(const std::string& path)
{
    if (path.empty() || path[0] != '~')
        return path;
    const auto slash = path.find('/');
    const std::string user = path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (user.empty())
        getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found);
    else
        getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found);
    if (found == nullptr)
        throw config_error(user.empty() ? "tilde_expand: No such uid " + std::to_string(getuid())
                                        : "tilde_expand: No such user " + user);
    std::string home = pw.pw_dir;
    if (slash == std::string::npos || slash + 1 >= path.size())
        return home;
    while (!home.empty() && home.back() == '/')
        home.pop_back();
    return home + "/" + path.substr(slash + 1);
}

std::string derelativise_path(const std::string& path)
{
    if (path.size() == 4 && (path[0] | 0x20) == 'n' && (path[1] | 0x20) == 'o' && (path[2] | 0x20) == 'n' &&
        (path[3] | 0x20) == 'e')
        return "none";
    std::string expanded = tilde_expand(path);
    if (!expanded.empty() && expanded[0] == '/')
        return expanded;
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == nullptr)
        throw config_error(std::string("derelativise_path: getcwd: ") + std::strerror(errno));
    return std::string(cwd) + "/" + expanded;
}

namespace {

constexpr std::size_t max_config_file = 16 * 1024 * 1024;
constexpr std::size_t max_config_lines = 1000000;
constexpr int max_include_depth = 16;

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Splits a raw line into the keyword as written and the text after the
// separator (whitespace and at most one '='), as OpenSSH's strdelim does.
void split_keyword(std::string_view line, std::string_view& keyword, std::string_view& rest)
{
    std::size_t i = 0;
    while (i < line.size() && is_ws(line[i]))
        ++i;
    if (i < line.size() && line[i] == '=') {
        // An empty keyword before '=': OpenSSH takes the next word.
        ++i;
        while (i < line.size() && is_ws(line[i]))
            ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && !is_ws(line[i]) && line[i] != '=')
        ++i;
    keyword = line.substr(start, i - start);
    const bool equals = i < line.size() && line[i] == '=';
    if (i < line.size())
        ++i;
    while (i < line.size() && is_ws(line[i]))
        ++i;
    if (!equals && i < line.size() && line[i] == '=') {
        ++i;
        while (i < line.size() && is_ws(line[i]))
            ++i;
    }
    rest = line.substr(i);
}

} // namespace

} // namespace detail

struct sshd_config::impl {
    config_load_options options;
    detail::config_draft global_draft; // before defaults are filled in
    server_config global;
    std::vector<detail::config_entry> match_entries;
    std::vector<detail::match_condition> conditions;
    std::vector<config_notice> notices;
    config_sources sources;
};

namespace {

using namespace detail;

class loader {
public:
    explicit loader(const config_load_options& options) : options_(options) {}

    std::unique_ptr<sshd_config::impl> run(const std::string* text, const std::string& filename)
    {
        auto out = std::make_unique<sshd_config::impl>();
        out->options = options_;
        draft_.ports_from_command_line = !options_.command_line_ports.empty();
        draft_.cfg.ports = options_.command_line_ports;
        for (const auto& key : options_.command_line_host_keys)
            command_line_line("HostKey " + key, "[command-line]");
        for (const auto& line : options_.command_line)
            command_line_line(line, "command-line");
        std::vector<int> chain;
        if (text != nullptr)
            parse_text(*text, filename, chain, 0);
        else
            parse_file(filename, chain, 0, /*top=*/true);
        out->global_draft = draft_;
        finalize_draft(draft_, options_.resolve_addresses, log_);
        out->global = std::move(draft_.cfg);
        out->match_entries = std::move(entries_);
        out->conditions = std::move(conditions_);
        out->notices = std::move(log_.messages);
        out->sources = std::move(sources_);
        return out;
    }

private:
    void command_line_line(const std::string& line, const std::string& name)
    {
        int bad = 0;
        std::vector<int> chain;
        process_line(line, name, 0, chain, chain, 0, bad, true);
        if (bad > 0) {
            // sshd exits 1 after the message for a bad -o option.
            std::string all;
            for (const auto& m : log_.messages)
                all += m.text + "\n";
            if (!all.empty())
                all.pop_back();
            throw config_error(all, 1);
        }
    }

    void parse_file(const std::string& path, const std::vector<int>& chain, int depth, bool top)
    {
        (void)top;
        if (options_.replay) {
            for (const auto& [name, text] : options_.replay->files) {
                if (name == path) {
                    sources_.files.emplace_back(path, text);
                    parse_text(text, path, chain, depth);
                    return;
                }
            }
            errno = ENOENT;
            missing_file(path);
        }
        std::ifstream in(path, std::ios::binary);
        if (!in)
            missing_file(path);
        std::string text;
        char buf[65536];
        while (in.read(buf, sizeof buf) || in.gcount() > 0) {
            text.append(buf, static_cast<std::size_t>(in.gcount()));
            if (text.size() > max_config_file)
                log_.fatal(path + ": configuration file too large");
        }
        // A copy: what this file includes is appended to the same vector.
        sources_.files.emplace_back(path, text);
        parse_text(text, path, chain, depth);
    }

    [[noreturn]] void missing_file(const std::string& path)
    {
        const int e = errno;
        std::string all;
        for (const auto& m : log_.messages)
            all += m.text + "\n";
        throw config_error(all + path + ": " + std::strerror(e != 0 ? e : ENOENT), 1);
    }

    // The files an Include pattern names, sorted as glob(3) sorts them
    // (from the replayed sources when there are some).
    std::vector<std::string> match_include(const std::string& pattern, const std::string& where)
    {
        std::vector<std::string> files;
        if (options_.replay) {
            for (const auto& [p, matched] : options_.replay->globs) {
                if (p == pattern) {
                    files = matched;
                    break;
                }
            }
        } else {
            glob_t g{};
            const int r = ::glob(pattern.c_str(), 0, nullptr, &g);
            if (r != 0 && r != GLOB_NOMATCH) {
                globfree(&g);
                log_.fatal(where + ": include \"" + pattern + "\" glob failed");
            }
            for (std::size_t i = 0; r == 0 && i < g.gl_pathc; ++i)
                files.emplace_back(g.gl_pathv[i]);
            globfree(&g);
        }
        sources_.globs.emplace_back(pattern, files);
        return files;
    }

    void parse_text(std::string_view text, const std::string& filename, const std::vector<int>& base_chain, int depth)
    {
        if (depth > max_include_depth)
            log_.fatal("Too many recursive configuration includes");
        std::vector<int> chain = base_chain;
        int bad = 0;
        int line_number = 0;
        while (!text.empty()) {
            const auto nl = text.find('\n');
            std::string_view line = text.substr(0, nl);
            text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
            ++line_number;
            if (++total_lines_ > max_config_lines)
                log_.fatal(filename + ": too many configuration lines");
            // C string semantics: the line ends at a NUL byte.
            line = line.substr(0, line.find('\0'));
            process_line(line, filename, line_number, chain, base_chain, depth, bad, false);
        }
        if (bad > 0)
            log_.fatal(filename + ": terminating, " + std::to_string(bad) + " bad configuration options");
    }

    bool chain_active_at_load(const std::vector<int>& chain) const
    {
        for (int c : chain)
            if (!match_condition_at_load(conditions_[static_cast<std::size_t>(c)]))
                return false;
        return true;
    }

    void process_line(std::string_view line, const std::string& file, int number, std::vector<int>& chain,
                      const std::vector<int>& base_chain, int depth, int& bad, bool command_line)
    {
        while (!line.empty() && (is_ws(line.back()) || line.back() == '\f'))
            line.remove_suffix(1);
        std::string_view keyword, rest;
        split_keyword(line, keyword, rest);
        if (keyword.empty() || keyword[0] == '#')
            return;
        const std::string where = file + " line " + std::to_string(number);
        const std::string kw(keyword);
        if (rest.empty()) {
            log_.error(where + ": no argument after keyword \"" + kw + "\"");
            ++bad;
            return;
        }
        const sshd_keyword* k = find_sshd_keyword(keyword);
        if (k == nullptr)
            log_.error(file + ": line " + std::to_string(number) + ": Bad configuration option: " + kw);
        auto args = split_arguments(rest);
        if (!args) {
            log_.error(where + ": invalid quotes");
            ++bad;
            return;
        }
        const bool active = command_line || chain_active_at_load(chain);
        const unsigned flags = k ? k->flags : 0;
        if (!active && !(flags & kw_match))
            log_.fatal(where + ": Directive '" + kw + "' is not allowed within a Match block");
        if (k == nullptr) {
            ++bad;
            return;
        }
        config_entry entry;
        entry.keyword = k;
        entry.file = file;
        entry.line = number;
        entry.keyword_text = kw;
        entry.args = std::move(*args);
        entry.rest = std::string(rest);
        entry.conditions = chain;
        if (k->id == sshd_kw::match) {
            if (command_line)
                log_.fatal("Match directive not supported as a command-line option");
            conditions_.push_back(parse_match_line(entry, log_));
            conditions_.back().parents = base_chain;
            chain = base_chain;
            chain.push_back(static_cast<int>(conditions_.size() - 1));
            return;
        }
        if (k->id == sshd_kw::include) {
            if (command_line)
                log_.fatal("Include directive not supported as a command-line option");
            include(entry, chain, depth, bad);
            return;
        }
        if (!apply_entry({entry, active, command_line}, draft_, log_))
            ++bad;
        if (!chain.empty() && (k->flags & kw_match))
            entries_.push_back(std::move(entry));
    }

    void include(const config_entry& entry, const std::vector<int>& chain, int depth, int& bad)
    {
        const std::string where = entry.file + " line " + std::to_string(entry.line);
        if (entry.args.empty())
            log_.fatal(where + ": " + entry.keyword_text + " missing filename argument");
        for (const auto& arg : entry.args) {
            if (arg.empty()) {
                log_.error(where + ": keyword " + entry.keyword_text + " empty argument");
                ++bad;
                return;
            }
            const std::string pattern = (arg[0] != '/' && arg[0] != '~') ? options_.include_base + "/" + arg : arg;
            if (!options_.allow_include)
                continue;
            const std::vector<std::string> files = match_include(pattern, where);
            for (const auto& f : files)
                parse_file(f, chain, depth + 1, false);
        }
    }

    const config_load_options& options_;
    parse_log log_;
    config_draft draft_;
    std::vector<config_entry> entries_;
    std::vector<match_condition> conditions_;
    std::size_t total_lines_ = 0;
    config_sources sources_;
};

} // namespace

sshd_config::sshd_config(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
sshd_config::sshd_config(sshd_config&&) noexcept = default;
sshd_config& sshd_config::operator=(sshd_config&&) noexcept = default;
sshd_config::~sshd_config() = default;

sshd_config sshd_config::load(const config_load_options& options)
{
    loader l(options);
    return sshd_config(l.run(nullptr, options.path));
}

sshd_config sshd_config::parse(std::string_view text, const std::string& filename, const config_load_options& options)
{
    loader l(options);
    const std::string copy(text);
    return sshd_config(l.run(&copy, filename));
}

const server_config& sshd_config::global() const noexcept { return impl_->global; }
const config_sources& sshd_config::sources() const noexcept { return impl_->sources; }
bool sshd_config::has_match_blocks() const noexcept { return !impl_->conditions.empty(); }
const std::vector<config_notice>& sshd_config::notices() const noexcept { return impl_->notices; }

server_config sshd_config::for_connection(const connection_info& info) const
{
    config_draft d = impl_->global_draft;
    d.seen.reset();
    d.rekey_interval_seen = false;
    d.match_layer = true;
    // Decide each Match line once; every line of a matching block applies.
    std::vector<signed char> decided(impl_->conditions.size(), -1);
    // In file order, as OpenSSH meets them: a Match line inside a file
    // included from a block that did not match is never evaluated.
    for (std::size_t c = 0; c < impl_->conditions.size(); ++c) {
        const auto& cond = impl_->conditions[c];
        bool parents = true;
        for (int p : cond.parents)
            parents = parents && decided[static_cast<std::size_t>(p)] == 1;
        decided[c] = parents && match_condition_for(cond, info) ? 1 : 0;
    }
    auto holds = [&](int c) { return decided[static_cast<std::size_t>(c)] == 1; };
    parse_log quiet;
    for (const auto& e : impl_->match_entries) {
        bool all = true;
        for (int c : e.conditions)
            all = all && holds(c);
        if (all)
            apply_entry({e, true, false, true}, d, quiet);
    }
    finalize_draft(d, false, quiet);
    d.cfg.listen_addresses = impl_->global.listen_addresses;
    return std::move(d.cfg);
}

} // namespace longhaul
