#include "ssh/sftp/sftp_listing.hpp"

#include "common/sftp/sftp_mode.hpp"
#include "ssh/sftp_client/text.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace longhaul::sftp_cli {

using sftp::strprintf;

std::string strmode(std::uint32_t mode) { return sftp::mode_string(mode); }

std::string fmt_scaled(long long number)
{
    static const long long scale[] = {1LL,
                                      1024LL,
                                      1024LL * 1024,
                                      1024LL * 1024 * 1024,
                                      1024LL * 1024 * 1024 * 1024,
                                      1024LL * 1024 * 1024 * 1024 * 1024,
                                      1024LL * 1024 * 1024 * 1024 * 1024 * 1024};
    static const char chars[] = "BKMGTPE";
    constexpr int n = 7;
    if (number == LLONG_MIN)
        return "error";
    const long long abval = std::llabs(number);
    if (abval / 1024 >= scale[n - 1])
        return "error";
    long long fract = 0;
    int unit = 0;
    for (int i = 0; i < n; ++i) {
        if (abval / 1024 < scale[i]) {
            unit = i;
            fract = i == 0 ? 0 : abval % scale[i];
            number /= scale[i];
            if (i > 0)
                fract /= scale[i - 1];
            break;
        }
    }
    fract = (10 * fract + 512) / 1024;
    if (fract >= 10) {
        number += number >= 0 ? 1 : -1;
        fract = 0;
    } else if (fract < 0) {
        fract = 0;
    }
    if (number == 0)
        return "0B";
    if (unit == 0 || number >= 100 || number <= -100) {
        if (fract >= 5)
            number += number >= 0 ? 1 : -1;
        return strprintf("%lld%c", number, chars[unit]);
    }
    return strprintf("%lld.%1lld%c", number, fract, chars[unit]);
}

struct stat attrs_to_stat(const sftp::attrs& a)
{
    struct stat st{};
    if (a.has(sftp::attr::size))
        st.st_size = off_t(a.size);
    if (a.has(sftp::attr::uidgid)) {
        st.st_uid = a.uid;
        st.st_gid = a.gid;
    }
    if (a.has(sftp::attr::permissions))
        st.st_mode = a.permissions;
    if (a.has(sftp::attr::acmodtime)) {
        st.st_atime = a.atime;
        st.st_mtime = a.mtime;
    }
    return st;
}

std::string ls_file(const std::string& name, const struct stat& st, bool remote, bool si_units,
                    const std::string* user, const std::string* group, std::time_t now)
{
    const std::string mode = strmode(st.st_mode);
    std::string u, g, lc;
    if (remote) {
        u = user ? *user : std::to_string(unsigned(st.st_uid));
        g = group ? *group : std::to_string(unsigned(st.st_gid));
        lc = "?";
    } else {
        u = user ? *user : std::to_string(unsigned(st.st_uid));
        g = group ? *group : std::to_string(unsigned(st.st_gid));
        lc = std::to_string(unsigned(st.st_nlink));
    }
    char tbuf[32] = "";
    struct tm tmv{};
    const std::time_t mtime = st.st_mtime;
    if (::localtime_r(&mtime, &tmv) != nullptr) {
        std::size_t sz;
        if (now - (365 * 24 * 60 * 60) / 2 < mtime && now >= mtime)
            sz = std::strftime(tbuf, sizeof tbuf, "%b %e %H:%M", &tmv);
        else
            sz = std::strftime(tbuf, sizeof tbuf, "%b %e  %Y", &tmv);
        if (sz == 0)
            tbuf[0] = '\0';
    }
    const int ulen = int(std::max<std::size_t>(u.size(), 8));
    const int glen = int(std::max<std::size_t>(g.size(), 8));
    if (si_units)
        return strprintf("%s %3s %-*s %-*s %8s %s %s", mode.c_str(), lc.c_str(), ulen, u.c_str(), glen, g.c_str(),
                         fmt_scaled(static_cast<long long>(st.st_size)).c_str(), tbuf, name.c_str());
    return strprintf("%s %3s %-*s %-*s %8llu %s %s", mode.c_str(), lc.c_str(), ulen, u.c_str(), glen, g.c_str(),
                     static_cast<unsigned long long>(st.st_size), tbuf, name.c_str());
}

void sort_entries(std::vector<sftp::name_entry>& v, const ls_flags& f)
{
    if (f.sort == ls_flags::none)
        return;
    const int rmul = f.reverse ? -1 : 1;
    auto ncmp = [](std::uint64_t a, std::uint64_t b) { return a == b ? 0 : (a < b ? 1 : -1); };
    std::stable_sort(v.begin(), v.end(), [&](const sftp::name_entry& a, const sftp::name_entry& b) {
        int c = 0;
        switch (f.sort) {
        case ls_flags::by_name: c = std::strcmp(a.filename.c_str(), b.filename.c_str()); break;
        case ls_flags::by_time: c = ncmp(a.attributes.mtime, b.attributes.mtime); break;
        case ls_flags::by_size: c = ncmp(a.attributes.size, b.attributes.size); break;
        case ls_flags::none: break;
        }
        return rmul * c < 0;
    });
}

column_printer::column_printer(std::size_t longest, int width, bool one_per_line)
{
    if (one_per_line)
        return;
    if (width <= 0)
        width = 80;
    columns_ = std::max<std::size_t>(std::size_t(width) / (longest + 2), 1);
    colspace_ = std::min<std::size_t>(std::size_t(width) / columns_, std::size_t(width));
}

std::string column_printer::add(const std::string& name)
{
    std::string out = name;
    if (out.size() < colspace_)
        out.append(colspace_ - out.size(), ' ');
    if (c_ >= columns_) {
        out += '\n';
        c_ = 1;
    } else {
        ++c_;
    }
    return out;
}

std::string column_printer::finish() const
{
    return c_ != 1 ? "\n" : "";
}

std::string df_text(const sftp::statvfs_reply& st, bool human, bool inodes)
{
    auto pct = [](std::uint64_t used, std::uint64_t total) -> unsigned long long {
        return total == 0 ? 0 : used * 100 / total;
    };
    if (inodes) {
        const std::uint64_t used = st.files - st.ffree;
        return "     Inodes        Used       Avail      (root)    %Capacity\n" +
               strprintf("%11llu %11llu %11llu %11llu         %3llu%%\n", (unsigned long long)st.files,
                         (unsigned long long)used, (unsigned long long)st.favail, (unsigned long long)st.ffree,
                         pct(used, st.files));
    }
    if (human) {
        const std::string used = fmt_scaled((long long)((st.blocks - st.bfree) * st.frsize));
        const std::string avail = fmt_scaled((long long)(st.bavail * st.frsize));
        const std::string root = fmt_scaled((long long)(st.bfree * st.frsize));
        const std::string total = fmt_scaled((long long)(st.blocks * st.frsize));
        return "    Size     Used    Avail   (root)    %Capacity\n" +
               strprintf("%7sB %7sB %7sB %7sB         %3llu%%\n", total.c_str(), used.c_str(), avail.c_str(),
                         root.c_str(), pct(st.blocks - st.bfree, st.blocks));
    }
    const unsigned long long cap = st.blocks == 0 ? 0 : 100 * (st.blocks - st.bfree) / st.blocks;
    return "        Size         Used        Avail       (root)    %Capacity\n" +
           strprintf("%12llu %12llu %12llu %12llu         %3llu%%\n",
                     (unsigned long long)(st.frsize * st.blocks / 1024),
                     (unsigned long long)(st.frsize * (st.blocks - st.bfree) / 1024),
                     (unsigned long long)(st.frsize * st.bavail / 1024),
                     (unsigned long long)(st.frsize * st.bfree / 1024), cap);
}

} // namespace longhaul::sftp_cli
