#include "sshd/secure_path.hpp"

#include "common/file_read.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace longhaul {

namespace {

std::optional<std::string> real_path(const std::string& p)
{
    char buf[PATH_MAX];
    if (::realpath(p.c_str(), buf) == nullptr)
        return std::nullopt;
    return std::string(buf);
}

// dirname(3) of an absolute canonical path.
std::string parent_of(const std::string& p)
{
    const auto slash = p.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    if (slash == 0)
        return "/";
    return p.substr(0, slash);
}

// OpenSSH trusts root's files everywhere (platform_sys_dir_uid).
bool owner_ok(uid_t owner, uid_t uid) { return owner == 0 || owner == uid; }

} // namespace

std::optional<std::string> secure_path_problem(const std::string& path, const struct stat& st, const std::string& home,
                                               uid_t uid)
{
    auto canonical = real_path(path);
    if (!canonical)
        return "realpath " + path + " failed: " + std::strerror(errno);
    std::optional<std::string> home_real;
    if (!home.empty())
        home_real = real_path(home);
    if (!S_ISREG(st.st_mode))
        return *canonical + " is not a regular file";
    if (!owner_ok(st.st_uid, uid) || (st.st_mode & 022) != 0)
        return "bad ownership or modes for file " + *canonical;
    std::string dir = *canonical;
    // Bounded by the depth of the path: each step removes a component.
    while (true) {
        dir = parent_of(dir);
        struct stat ds {};
        if (::stat(dir.c_str(), &ds) == -1 || !owner_ok(ds.st_uid, uid) || (ds.st_mode & 022) != 0)
            return "bad ownership or modes for directory " + dir;
        if (home_real && *home_real == dir)
            break;
        if (dir == "/" || dir == ".")
            break;
    }
    return std::nullopt;
}

user_file read_user_file(const std::string& path, const user_account& user, bool strict_modes,
                         std::string_view file_type, bool log_missing, std::size_t max_size)
{
    user_file out;
    const std::string type(file_type);
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd == -1) {
        if (log_missing || errno != ENOENT)
            out.log.push_back({syslog_level::debug1,
                               "Could not open " + type + " '" + path + "': " + std::strerror(errno)});
        return out;
    }
    struct stat st {};
    if (::fstat(fd, &st) == -1) {
        ::close(fd);
        return out;
    }
    if (!S_ISREG(st.st_mode)) {
        out.log.push_back({syslog_level::info, "User '" + user.name + "' " + type + " '" + path + "' is not a regular file"});
        ::close(fd);
        return out;
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags != -1)
        (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (strict_modes) {
        if (auto problem = secure_path_problem(path, st, user.home, user.uid)) {
            out.log.push_back({syslog_level::info, "Authentication refused: " + *problem});
            ::close(fd);
            return out;
        }
    }
    std::string data;
    const int err = read_to_end(fd, max_size, data);
    if (err == EFBIG) {
        out.log.push_back({syslog_level::error, type + " file " + path + " too large, ignored"});
        ::close(fd);
        return out;
    }
    if (err != 0) {
        out.log.push_back({syslog_level::error, "read " + path + ": " + std::strerror(err)});
        ::close(fd);
        return out;
    }
    ::close(fd);
    out.contents = std::move(data);
    return out;
}

} // namespace longhaul
