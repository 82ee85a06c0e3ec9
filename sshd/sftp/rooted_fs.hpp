// A file system confined below one directory: "/" is that directory, and no
// path, symlink or ".." resolves outside it (Linux openat2(2) with
// RESOLVE_IN_ROOT, as a chroot would, without privileges). The fuzz target
// serves hostile request streams on it, and the unit tests use it; it is
// also the seam for serving SFTP jailed without ChrootDirectory.
//
// Operations that follow the last component open it through openat2 and
// act on the descriptor; operations on the last component itself (lstat,
// unlink, rename, ...) resolve its parent the same way and use the *at()
// call on the name, which never follows a symlink there. A name that is
// "." or "..", or a path ending in "/", is resolved as a whole (confined)
// and treated as the object itself; name operations on it fail as the
// kernel fails them on such names (EBUSY, EEXIST, EISDIR).
#pragma once

#include "common/result.hpp"
#include "sshd/sftp/sftp_fs.hpp"

#include <memory>
#include <string>

namespace longhaul::sftp {

class rooted_filesystem final : public filesystem {
public:
    // Opens the root directory; errno on failure.
    static std::unique_ptr<rooted_filesystem> open_root(const std::string& root, int& error);
    ~rooted_filesystem() override;
    rooted_filesystem(const rooted_filesystem&) = delete;
    rooted_filesystem& operator=(const rooted_filesystem&) = delete;

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

private:
    struct located; // a parent directory and a name in it, or the object itself
    rooted_filesystem(int root_fd, std::string root_real);
    std::string absolute(const std::string& path) const;
    int resolve(const std::string& path, int flags, int& fd, mode_t mode = 0) const;
    int locate(const std::string& path, bool strip_trailing_slash, located& where) const;
    // The object of an operation that takes a follow flag (stat, chmod,
    // chown, set_times): followed, the whole path resolved, as `self`;
    // not followed, its parent and last name as locate() finds them.
    int locate_object(const std::string& path, bool follow, located& where) const;

    int root_fd_;
    std::string root_real_; // the root's real path, to turn descriptors back into paths (chdir)
    std::string cwd_ = "/";
};

} // namespace longhaul::sftp
