#include "sshd/sftp/sftp_fs.hpp"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace longhaul::sftp {

int posix_filesystem::open(const std::string& path, int flags, mode_t mode, int& fd)
{
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    return fd >= 0 ? 0 : errno;
}

int posix_filesystem::open_directory(const std::string& path, int& fd)
{
    fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? 0 : errno;
}

int posix_filesystem::stat(const std::string& path, bool follow, struct stat& st)
{
    return status_of(follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st));
}

int posix_filesystem::truncate(const std::string& path, off_t size) { return status_of(::truncate(path.c_str(), size)); }

int posix_filesystem::chmod(const std::string& path, mode_t mode, bool follow)
{
    return status_of(::fchmodat(AT_FDCWD, path.c_str(), mode, follow ? 0 : AT_SYMLINK_NOFOLLOW));
}

int posix_filesystem::chown(const std::string& path, uid_t uid, gid_t gid, bool follow)
{
    return status_of(::fchownat(AT_FDCWD, path.c_str(), uid, gid, follow ? 0 : AT_SYMLINK_NOFOLLOW));
}

int posix_filesystem::set_times(const std::string& path, std::time_t atime, std::time_t mtime, bool follow)
{
    const struct timespec ts[2] = {{atime, 0}, {mtime, 0}};
    return status_of(::utimensat(AT_FDCWD, path.c_str(), ts, follow ? 0 : AT_SYMLINK_NOFOLLOW));
}

int posix_filesystem::unlink(const std::string& path) { return status_of(::unlink(path.c_str())); }
int posix_filesystem::mkdir(const std::string& path, mode_t mode) { return status_of(::mkdir(path.c_str(), mode)); }
int posix_filesystem::rmdir(const std::string& path) { return status_of(::rmdir(path.c_str())); }

int posix_filesystem::rename(const std::string& from, const std::string& to)
{
    return status_of(::rename(from.c_str(), to.c_str()));
}

int posix_filesystem::link(const std::string& from, const std::string& to)
{
    return status_of(::link(from.c_str(), to.c_str()));
}

int posix_filesystem::symlink(const std::string& target, const std::string& link_path)
{
    return status_of(::symlink(target.c_str(), link_path.c_str()));
}

int posix_filesystem::readlink(const std::string& path, std::string& target)
{
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    if (n < 0)
        return errno;
    target.assign(buf, static_cast<std::size_t>(n));
    return 0;
}

int posix_filesystem::statvfs(const std::string& path, struct statvfs& st)
{
    return status_of(::statvfs(path.c_str(), &st));
}

int posix_filesystem::getcwd(std::string& cwd)
{
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf) == nullptr)
        return errno;
    cwd = buf;
    return 0;
}

int posix_filesystem::chdir(const std::string& path) { return status_of(::chdir(path.c_str())); }

} // namespace longhaul::sftp
