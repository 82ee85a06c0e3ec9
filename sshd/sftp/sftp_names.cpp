#include "sshd/sftp/sftp_names.hpp"

#include "common/sftp/sftp_mode.hpp"

#include <grp.h>
#include <locale.h>
#include <pwd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace longhaul::sftp {

namespace {

// Enough for any passwd/group entry we would look at; a larger one is
// treated as unknown rather than retried without bound.
constexpr std::size_t lookup_buffer_size = 64 * 1024;
constexpr std::size_t cache_limit = 256;

template <class Map, class Key, class Fn>
std::optional<std::string> cached(Map& cache, Key key, Fn lookup)
{
    if (auto it = cache.find(key); it != cache.end())
        return it->second;
    auto v = lookup();
    if (cache.size() >= cache_limit)
        cache.clear();
    cache.emplace(key, v);
    return v;
}

} // namespace

std::optional<std::string> system_names::user_name(uid_t uid)
{
    return cached(users_, uid, [uid]() -> std::optional<std::string> {
        std::vector<char> buf(lookup_buffer_size);
        struct passwd pw {};
        struct passwd* found = nullptr;
        if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
            return std::nullopt;
        return std::string(pw.pw_name);
    });
}

std::optional<std::string> system_names::group_name(gid_t gid)
{
    return cached(groups_, gid, [gid]() -> std::optional<std::string> {
        std::vector<char> buf(lookup_buffer_size);
        struct group gr {};
        struct group* found = nullptr;
        if (getgrgid_r(gid, &gr, buf.data(), buf.size(), &found) != 0 || found == nullptr)
            return std::nullopt;
        return std::string(gr.gr_name);
    });
}

std::optional<std::string> system_names::home_directory(const std::string& user)
{
    std::vector<char> buf(lookup_buffer_size);
    struct passwd pw {};
    struct passwd* found = nullptr;
    if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
        return std::nullopt;
    return std::string(pw.pw_dir);
}

std::string long_name(std::string_view name, const struct stat& st, name_service& names, std::time_t now)
{
    const std::string user = names.user_name(st.st_uid).value_or(std::to_string(st.st_uid));
    const std::string group = names.group_name(st.st_gid).value_or(std::to_string(st.st_gid));
    const std::string links = std::to_string(static_cast<unsigned>(st.st_nlink));

    char date[32] = "";
    struct tm tm {};
    const std::time_t mtime = st.st_mtime;
    if (localtime_r(&mtime, &tm) != nullptr) {
        // Month names in English whatever the process locale, as OpenSSH's
        // sftp-server (which never calls setlocale) writes them.
        static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
        const bool recent = now - (365 * 24 * 60 * 60) / 2 < mtime && now >= mtime;
        if (strftime_l(date, sizeof date, recent ? "%b %e %H:%M" : "%b %e  %Y", &tm, c_locale) == 0)
            date[0] = '\0';
    }
    const int ulen = static_cast<int>(std::max<std::size_t>(user.size(), 8));
    const int glen = static_cast<int>(std::max<std::size_t>(group.size(), 8));
    const std::string mode = sftp::mode_string(st.st_mode);
    std::string out(mode.size() + links.size() + user.size() + group.size() + name.size() + 96, '\0');
    const int n = std::snprintf(out.data(), out.size(), "%s %3s %-*s %-*s %8llu %s %.*s", mode.c_str(), links.c_str(),
                                ulen, user.c_str(), glen, group.c_str(),
                                static_cast<unsigned long long>(st.st_size), date, static_cast<int>(name.size()),
                                name.data());
    out.resize(n > 0 ? std::min(static_cast<std::size_t>(n), out.size() - 1) : 0);
    return out;
}

} // namespace longhaul::sftp
