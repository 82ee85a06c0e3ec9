#include "ssh/sftp/sftp_commands.hpp"

#include "ssh/sftp_client/text.hpp"
#include "ssh/sftp_client/tree.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

// The listing commands of sftp_shell: ls (a directory, or a glob's matches)
// and df. The rest of the shell is in sftp_commands.cpp.
namespace longhaul::sftp_cli {

using sftp::strprintf;

namespace {
int terminal_width()
{
    struct winsize ws{};
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) != -1 && ws.ws_col != 0)
        return ws.ws_col;
    return 80;
}

// path_strip(): `path` without the leading `strip` + '/'.
std::string path_strip(const std::string& path, const std::string* strip)
{
    if (strip == nullptr || strip->empty())
        return path;
    std::size_t len = strip->size();
    if (path.compare(0, len, *strip) == 0) {
        if ((*strip)[len - 1] != '/' && path.size() > len && path[len] == '/')
            ++len;
        return path.substr(std::min(len, path.size()));
    }
    return path;
}

// ls -l shows owner and group names (not with -n): ask the server for all
// of a listing's names at once rather than one round trip per line.
void prefetch_owner_names(sftp::remote_fs& fs, const std::vector<sftp::name_entry>& entries, const ls_flags& f)
{
    if (!f.long_view || f.numeric || !fs.can_get_users_groups())
        return;
    std::vector<std::uint32_t> uids, gids;
    for (const auto& e : entries) {
        uids.push_back(e.attributes.uid);
        gids.push_back(e.attributes.gid);
    }
    fs.prefetch_names(uids, gids);
}

// One ls -l line made here from the attributes (names from the cache).
std::string long_line(sftp::remote_fs& fs, const std::string& name, const sftp::attrs& a, const ls_flags& f,
                      std::time_t now)
{
    const struct stat st = attrs_to_stat(a);
    return ls_file(name, st, true, f.si_units, fs.user_name(st.st_uid), fs.group_name(st.st_gid), now) + "\n";
}

} // namespace

int sftp_shell::do_ls_dir(const std::string& path, const std::string& strip, const ls_flags& f)
{
    auto& fs = conn_.fs();
    auto entries = fs.readdir(path, false);
    if (!entries)
        return -1;
    std::vector<sftp::name_entry>& d = *entries;
    column_printer* cols = nullptr;
    std::optional<column_printer> printer;
    const bool short_view = f.short_view || f.long_view;
    std::size_t m = 0;
    for (const auto& e : d)
        if (e.filename[0] != '.' || f.show_all)
            m = std::max(m, e.filename.size());
    m += path_strip(path, &strip).size();
    printer.emplace(m, short_view ? 80 : terminal_width(), short_view);
    cols = &*printer;
    sort_entries(d, f);
    // Names are fetched for -l, not -n; what the cache holds is shown
    // either way, as OpenSSH's ruser_name() does.
    prefetch_owner_names(fs, d, f);
    std::string out;
    const std::time_t now = std::time(nullptr);
    for (const auto& e : d) {
        if (interrupted())
            break;
        if (e.filename[0] == '.' && !f.show_all)
            continue;
        const std::string fname = path_strip(sftp::path_append(path, e.filename), &strip);
        if (f.long_view) {
            if (f.numeric || f.si_units || fs.can_get_users_groups()) {
                out += long_line(fs, fname, e.attributes, f, now);
            } else {
                out += e.longname + "\n";
            }
        } else {
            out += cols->add(fname);
        }
    }
    if (!f.long_view)
        out += cols->finish();
    print(out);
    return 0;
}

int sftp_shell::do_globbed_ls(const std::string& path, const std::string* strip, const ls_flags& f)
{
    auto& fs = conn_.fs();
    const auto g = sftp::remote_glob(fs, path, true, true);
    if (g.matched == 0) {
        out_.err(strprintf("Can't ls: \"%s\" not found", path.c_str()));
        return -1;
    }
    if (g.matched == 1 && !g.paths[0].empty() && g.paths[0].back() == '/')
        return do_ls_dir(g.paths[0], strip ? *strip : std::string(), f);
    // Files (and directories among several matches, shown with their
    // '/') listed by name.
    struct item {
        std::string path;
        sftp::attrs a;
    };
    std::vector<item> items;
    std::size_t m = 0;
    for (const auto& p : g.paths) {
        std::string target = p;
        if (target.size() > 1 && target.back() == '/')
            target.pop_back();
        // The attributes of what a name leads to (a link shows its target).
        auto a = fs.stat(target, true);
        if (!a)
            a = fs.lstat(target, true);
        const std::string fname = path_strip(p, strip);
        m = std::max(m, fname.size());
        items.push_back({p, a.value_or(sftp::attrs{})});
    }
    std::vector<sftp::name_entry> sortable;
    for (const auto& it : items)
        sortable.push_back(sftp::name_entry{it.path, {}, it.a});
    sort_entries(sortable, f);
    column_printer cols(m, (f.short_view || f.long_view) ? 80 : terminal_width(), f.short_view || f.long_view);
    prefetch_owner_names(fs, sortable, f);
    std::string out;
    const std::time_t now = std::time(nullptr);
    for (const auto& e : sortable) {
        const std::string fname = path_strip(e.filename, strip);
        if (f.long_view) {
            out += long_line(fs, fname, e.attributes, f, now);
        } else {
            out += cols.add(fname);
        }
    }
    if (!f.long_view)
        out += cols.finish();
    print(out);
    return 0;
}

int sftp_shell::do_df(const std::string& path, bool human, bool inodes)
{
    auto st = conn_.fs().statvfs(path, false);
    if (!st)
        return -1;
    print(df_text(*st, human, inodes));
    return 0;
}

} // namespace longhaul::sftp_cli
