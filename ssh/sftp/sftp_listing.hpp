// What sftp prints for ls and df, character for character as OpenSSH's
// sftp does: ls_file() (sftp-common.c), strmode(3), fmt_scaled(3), the
// column layout of do_ls_dir(), the sort orders of -f -t -S -r, and
// do_df()'s three tables. Pure functions, so the tests pin the text.
#pragma once

#include "common/sftp/sftp_attrs.hpp"
#include "common/sftp/sftp_replies.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace longhaul::sftp_cli {

// ls flags (OpenSSH's LS_*).
struct ls_flags {
    bool long_view = false;  // -l
    bool short_view = false; // -1
    bool numeric = false;    // -n
    bool si_units = false;   // -h
    bool show_all = false;   // -a
    bool reverse = false;    // -r
    enum sort_kind { by_name, by_time, by_size, none } sort = by_name; // -f: none
};

// "drwxr-xr-x " (strmode(3): ten characters and a space).
std::string strmode(std::uint32_t mode);
// fmt_scaled(3): "0B", "3B", "4.0K", "28.6M", "252G".
std::string fmt_scaled(long long number);
// ls_file(): one long line. remote: the link count is "?" and missing
// names print as numbers. `now` decides between "%b %e %H:%M" (the last
// six months) and "%b %e  %Y".
std::string ls_file(const std::string& name, const struct stat& st, bool remote, bool si_units,
                    const std::string* user, const std::string* group, std::time_t now);
// attrib_to_stat().
struct stat attrs_to_stat(const sftp::attrs& a);

// Sorts a listing in place as sdirent_comp() does (stable, so equal keys
// keep the server's order).
void sort_entries(std::vector<sftp::name_entry>& v, const ls_flags& f);

// Names laid out in columns across `width` (do_ls_dir()/do_globbed_ls()):
// `longest` is the longest name shown.
class column_printer {
public:
    column_printer(std::size_t longest, int width, bool one_per_line);
    // Returns the text to print for one more name.
    std::string add(const std::string& name);
    // The final newline, if a row is open.
    std::string finish() const;

private:
    std::size_t columns_ = 1, colspace_ = 0, c_ = 1;
};

// do_df(): the heading and the line.
std::string df_text(const sftp::statvfs_reply& st, bool human, bool inodes);

} // namespace longhaul::sftp_cli
