// The file system the SFTP server acts on, by path. Operations on open
// handles (pread, pwrite, fstat, ...) are plain system calls on the
// descriptor; everything that names a path goes through this interface, so
// the same server core can run on the real file system (sftp-server,
// internal-sftp) or confined below a directory (rooted_fs: the fuzz target,
// tests, and a chroot-less jail).
//
// Every call returns 0 or an errno value; nothing throws.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include <cerrno>
#include <ctime>
#include <string>

namespace longhaul::sftp {

// What an implementation returns for a system call's result: 0, or errno.
inline int status_of(int rc) noexcept { return rc == 0 ? 0 : errno; }

class filesystem {
public:
    virtual ~filesystem() = default;

    // open(2); fd receives a new descriptor (O_CLOEXEC added).
    virtual int open(const std::string& path, int flags, mode_t mode, int& fd) = 0;
    // A directory opened for reading entries (O_RDONLY | O_DIRECTORY).
    virtual int open_directory(const std::string& path, int& fd) = 0;
    // stat(2) (follow) or lstat(2).
    virtual int stat(const std::string& path, bool follow, struct stat& st) = 0;
    virtual int truncate(const std::string& path, off_t size) = 0;
    virtual int chmod(const std::string& path, mode_t mode, bool follow) = 0;
    virtual int chown(const std::string& path, uid_t uid, gid_t gid, bool follow) = 0;
    // Whole seconds, as SFTP v3 carries them.
    virtual int set_times(const std::string& path, std::time_t atime, std::time_t mtime, bool follow) = 0;
    virtual int unlink(const std::string& path) = 0;
    virtual int mkdir(const std::string& path, mode_t mode) = 0;
    virtual int rmdir(const std::string& path) = 0;
    virtual int rename(const std::string& from, const std::string& to) = 0;
    virtual int link(const std::string& from, const std::string& to) = 0;
    virtual int symlink(const std::string& target, const std::string& link_path) = 0;
    virtual int readlink(const std::string& path, std::string& target) = 0;
    virtual int statvfs(const std::string& path, struct statvfs& st) = 0;
    virtual int getcwd(std::string& cwd) = 0;
    virtual int chdir(const std::string& path) = 0;
};

// The process's own view: paths resolved by the kernel against the current
// directory (and the chroot, where sshd set one).
class posix_filesystem final : public filesystem {
public:
    int open(const std::string& path, int flags, mode_t mode, int& fd) override;
    int open_directory(const std::string& path, int& fd) override;
    int stat(const std::string& path, bool follow, struct stat& st) override;
    int truncate(const std::string& path, off_t size) override;
    int chmod(const std::string& path, mode_t mode, bool follow) override;
    int chown(const std::string& path, uid_t uid, gid_t gid, bool follow) override;
    int set_times(const std::string& path, std::time_t atime, std::time_t mtime, bool follow) override;
    int unlink(const std::string& path) override;
    int mkdir(const std::string& path, mode_t mode) override;
    int rmdir(const std::string& path) override;
    int rename(const std::string& from, const std::string& to) override;
    int link(const std::string& from, const std::string& to) override;
    int symlink(const std::string& target, const std::string& link_path) override;
    int readlink(const std::string& path, std::string& target) override;
    int statvfs(const std::string& path, struct statvfs& st) override;
    int getcwd(std::string& cwd) override;
    int chdir(const std::string& path) override;
};

} // namespace longhaul::sftp
