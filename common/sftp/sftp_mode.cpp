#include "common/sftp/sftp_mode.hpp"

#include <sys/stat.h>

namespace longhaul::sftp {

std::string mode_string(std::uint32_t mode)
{
    std::string s(11, '-');
    switch (mode & S_IFMT) {
    case S_IFDIR: s[0] = 'd'; break;
    case S_IFCHR: s[0] = 'c'; break;
    case S_IFBLK: s[0] = 'b'; break;
    case S_IFREG: s[0] = '-'; break;
    case S_IFLNK: s[0] = 'l'; break;
    case S_IFSOCK: s[0] = 's'; break;
    case S_IFIFO: s[0] = 'p'; break;
    default: s[0] = '?'; break;
    }
    const auto bit = [mode](std::uint32_t b, char c) { return (mode & b) != 0 ? c : '-'; };
    // An execute bit shares its place with setuid, setgid or sticky: the
    // letter is lower case when both are set, upper case without execute.
    const auto special = [mode, &bit](std::uint32_t x, std::uint32_t sp, char set, char set_no_x) {
        return (mode & sp) != 0 ? ((mode & x) != 0 ? set : set_no_x) : bit(x, 'x');
    };
    s[1] = bit(S_IRUSR, 'r');
    s[2] = bit(S_IWUSR, 'w');
    s[3] = special(S_IXUSR, S_ISUID, 's', 'S');
    s[4] = bit(S_IRGRP, 'r');
    s[5] = bit(S_IWGRP, 'w');
    s[6] = special(S_IXGRP, S_ISGID, 's', 'S');
    s[7] = bit(S_IROTH, 'r');
    s[8] = bit(S_IWOTH, 'w');
    s[9] = special(S_IXOTH, S_ISVTX, 't', 'T');
    s[10] = ' ';
    return s;
}

} // namespace longhaul::sftp
