// File-system helpers for the targets that run on a real temporary tree
// (sftp_server_fuzz, sftp_client_fuzz).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace longhaul::fuzz {

// Empties a directory without following any symlink in it; directories an
// input left unusable (mode 0, say) are made usable first.
inline void empty_directory(int dirfd)
{
    DIR* dir = ::fdopendir(::dup(dirfd));
    if (dir == nullptr)
        std::abort();
    while (const struct dirent* e = ::readdir(dir)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0)
            continue;
        if (::unlinkat(dirfd, e->d_name, 0) == 0)
            continue;
        ::fchmodat(dirfd, e->d_name, 0700, 0);
        const int sub = ::openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
            empty_directory(sub);
            ::close(sub);
        }
        ::unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
    }
    ::closedir(dir);
}

} // namespace longhaul::fuzz
