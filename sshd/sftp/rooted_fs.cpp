#include "sshd/sftp/rooted_fs.hpp"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace longhaul::sftp {

namespace {

constexpr unsigned resolve_flags = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;

// Closes a descriptor at scope exit.
struct fd_guard {
    int fd = -1;
    ~fd_guard()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

std::string proc_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

} // namespace

struct rooted_filesystem::located {
    fd_guard dir;       // the parent directory (or, when self, the object)
    std::string name;   // the last component; empty when self
    bool self = false;  // the path names "/", ".", "..", or ends in "/"
};

std::unique_ptr<rooted_filesystem> rooted_filesystem::open_root(const std::string& root, int& error)
{
    const int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        error = errno;
        return nullptr;
    }
    char* real = ::realpath(root.c_str(), nullptr);
    if (real == nullptr) {
        error = errno;
        ::close(fd);
        return nullptr;
    }
    std::string root_real(real);
    std::free(real);
    error = 0;
    return std::unique_ptr<rooted_filesystem>(new rooted_filesystem(fd, std::move(root_real)));
}

rooted_filesystem::rooted_filesystem(int root_fd, std::string root_real)
    : root_fd_(root_fd), root_real_(std::move(root_real))
{
}

rooted_filesystem::~rooted_filesystem() { ::close(root_fd_); }

std::string rooted_filesystem::absolute(const std::string& path) const
{
    if (path.empty() || path[0] == '/')
        return path;
    return cwd_ == "/" ? "/" + path : cwd_ + "/" + path;
}

int rooted_filesystem::resolve(const std::string& path, int flags, int& fd, mode_t mode) const
{
    // An empty path names nothing; absolute() would leave it empty, and
    // every operation refuses it the same way before touching fd.
    if (path.empty())
        return ENOENT;
    struct open_how how {};
    how.flags = static_cast<std::uint64_t>(flags) | O_CLOEXEC;
    how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? mode : 0;
    how.resolve = resolve_flags;
    const std::string p = absolute(path);
    const long rc = ::syscall(SYS_openat2, root_fd_, p.c_str(), &how, sizeof how);
    if (rc < 0) {
        fd = -1;
        return errno;
    }
    fd = static_cast<int>(rc);
    return 0;
}

int rooted_filesystem::locate(const std::string& path, bool strip_trailing_slash, located& where) const
{
    if (path.empty())
        return ENOENT;
    std::string p = absolute(path);
    bool trailing = false;
    while (p.size() > 1 && p.back() == '/') {
        p.pop_back();
        trailing = true;
    }
    const auto slash = p.rfind('/');
    std::string name = p.substr(slash + 1);
    const std::string parent = slash == 0 ? "/" : p.substr(0, slash);
    if (name.empty() || name == "." || name == ".." || (trailing && !strip_trailing_slash)) {
        // The object itself, resolved (confined) through any symlink.
        where.self = true;
        return resolve(p, O_PATH, where.dir.fd);
    }
    where.name = std::move(name);
    return resolve(parent, O_PATH | O_DIRECTORY, where.dir.fd);
}

int rooted_filesystem::locate_object(const std::string& path, bool follow, located& where) const
{
    if (!follow)
        return locate(path, false, where);
    if (int e = resolve(path, O_PATH, where.dir.fd))
        return e;
    where.self = true;
    return 0;
}

int rooted_filesystem::open(const std::string& path, int flags, mode_t mode, int& fd)
{
    return resolve(path, flags, fd, mode);
}

int rooted_filesystem::open_directory(const std::string& path, int& fd)
{
    return resolve(path, O_RDONLY | O_DIRECTORY, fd);
}

int rooted_filesystem::stat(const std::string& path, bool follow, struct stat& st)
{
    located at;
    if (int e = locate_object(path, follow, at))
        return e;
    if (at.self)
        return status_of(::fstatat(at.dir.fd, "", &st, AT_EMPTY_PATH));
    return status_of(::fstatat(at.dir.fd, at.name.c_str(), &st, AT_SYMLINK_NOFOLLOW));
}

int rooted_filesystem::truncate(const std::string& path, off_t size)
{
    fd_guard f;
    if (int e = resolve(path, O_PATH, f.fd))
        return e;
    // truncate(2) through the descriptor's /proc link: the object already
    // resolved inside the root, with truncate's own permission check.
    return status_of(::truncate(proc_path(f.fd).c_str(), size));
}

int rooted_filesystem::chmod(const std::string& path, mode_t mode, bool follow)
{
    located at;
    if (int e = locate_object(path, follow, at))
        return e;
    if (at.self)
        return status_of(::chmod(proc_path(at.dir.fd).c_str(), mode));
    return status_of(::fchmodat(at.dir.fd, at.name.c_str(), mode, AT_SYMLINK_NOFOLLOW));
}

int rooted_filesystem::chown(const std::string& path, uid_t uid, gid_t gid, bool follow)
{
    located at;
    if (int e = locate_object(path, follow, at))
        return e;
    if (at.self)
        return status_of(::fchownat(at.dir.fd, "", uid, gid, AT_EMPTY_PATH));
    return status_of(::fchownat(at.dir.fd, at.name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW));
}

int rooted_filesystem::set_times(const std::string& path, std::time_t atime, std::time_t mtime, bool follow)
{
    const struct timespec ts[2] = {{atime, 0}, {mtime, 0}};
    located at;
    if (int e = locate_object(path, follow, at))
        return e;
    if (at.self)
        return status_of(::utimensat(AT_FDCWD, proc_path(at.dir.fd).c_str(), ts, 0));
    return status_of(::utimensat(at.dir.fd, at.name.c_str(), ts, AT_SYMLINK_NOFOLLOW));
}

int rooted_filesystem::unlink(const std::string& path)
{
    located at;
    if (int e = locate(path, false, at))
        return e;
    if (at.self) {
        struct stat st {};
        return ::fstatat(at.dir.fd, "", &st, AT_EMPTY_PATH) == 0 && S_ISDIR(st.st_mode) ? EISDIR : ENOTDIR;
    }
    return status_of(::unlinkat(at.dir.fd, at.name.c_str(), 0));
}

int rooted_filesystem::mkdir(const std::string& path, mode_t mode)
{
    located at;
    if (int e = locate(path, true, at))
        return e;
    if (at.self)
        return EEXIST;
    return status_of(::mkdirat(at.dir.fd, at.name.c_str(), mode));
}

int rooted_filesystem::rmdir(const std::string& path)
{
    located at;
    if (int e = locate(path, true, at))
        return e;
    if (at.self)
        return EBUSY;
    return status_of(::unlinkat(at.dir.fd, at.name.c_str(), AT_REMOVEDIR));
}

int rooted_filesystem::rename(const std::string& from, const std::string& to)
{
    located a, b;
    if (int e = locate(from, false, a))
        return e;
    if (int e = locate(to, false, b))
        return e;
    if (a.self || b.self)
        return EBUSY;
    return status_of(::renameat(a.dir.fd, a.name.c_str(), b.dir.fd, b.name.c_str()));
}

int rooted_filesystem::link(const std::string& from, const std::string& to)
{
    located a, b;
    if (int e = locate(from, false, a))
        return e;
    if (int e = locate(to, false, b))
        return e;
    if (a.self)
        return EPERM; // hard links to directories
    if (b.self)
        return EEXIST;
    return status_of(::linkat(a.dir.fd, a.name.c_str(), b.dir.fd, b.name.c_str(), 0));
}

int rooted_filesystem::symlink(const std::string& target, const std::string& link_path)
{
    located at;
    if (int e = locate(link_path, false, at))
        return e;
    if (at.self)
        return EEXIST;
    // The target is stored as given; it is resolved confined when followed.
    return status_of(::symlinkat(target.c_str(), at.dir.fd, at.name.c_str()));
}

int rooted_filesystem::readlink(const std::string& path, std::string& target)
{
    located at;
    if (int e = locate(path, false, at))
        return e;
    if (at.self)
        return EINVAL;
    char buf[PATH_MAX];
    const ssize_t n = ::readlinkat(at.dir.fd, at.name.c_str(), buf, sizeof buf - 1);
    if (n < 0)
        return errno;
    target.assign(buf, static_cast<std::size_t>(n));
    return 0;
}

int rooted_filesystem::statvfs(const std::string& path, struct statvfs& st)
{
    fd_guard f;
    if (int e = resolve(path, O_PATH, f.fd))
        return e;
    return status_of(::fstatvfs(f.fd, &st));
}

int rooted_filesystem::getcwd(std::string& cwd)
{
    cwd = cwd_;
    return 0;
}

int rooted_filesystem::chdir(const std::string& path)
{
    fd_guard f;
    if (int e = resolve(path, O_PATH | O_DIRECTORY, f.fd))
        return e;
    // The directory's path below the root, from what the kernel resolved.
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(proc_path(f.fd).c_str(), buf, sizeof buf - 1);
    if (n < 0)
        return errno;
    const std::string real(buf, static_cast<std::size_t>(n));
    if (real == root_real_) {
        cwd_ = "/";
    } else if (real.size() > root_real_.size() && real.compare(0, root_real_.size(), root_real_) == 0 &&
               (root_real_ == "/" || real[root_real_.size()] == '/')) {
        cwd_ = root_real_ == "/" ? real : real.substr(root_real_.size());
    } else {
        return EACCES; // moved out from under the root since: refuse
    }
    return 0;
}

} // namespace longhaul::sftp
