// The shared mode string of sftp's and sftp-server's long listings.
#include "common/sftp/sftp_mode.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

using longhaul::sftp::mode_string;

TEST_CASE("sftp mode_string: file types and permission letters as BSD strmode(3)")
{
    CHECK(mode_string(S_IFREG | 0644) == "-rw-r--r-- ");
    CHECK(mode_string(S_IFDIR | 0755) == "drwxr-xr-x ");
    CHECK(mode_string(S_IFLNK | 0777) == "lrwxrwxrwx ");
    CHECK(mode_string(S_IFCHR | 0620) == "crw--w---- ");
    CHECK(mode_string(S_IFBLK | 0660) == "brw-rw---- ");
    CHECK(mode_string(S_IFSOCK | 0755) == "srwxr-xr-x ");
    CHECK(mode_string(S_IFIFO | 0600) == "prw------- ");
    CHECK(mode_string(0644) == "?rw-r--r-- "); // no type bits
    // setuid, setgid and sticky: lower case over execute, upper case without.
    CHECK(mode_string(S_IFREG | 04755) == "-rwsr-xr-x ");
    CHECK(mode_string(S_IFREG | 04644) == "-rwSr--r-- ");
    CHECK(mode_string(S_IFREG | 02755) == "-rwxr-sr-x ");
    CHECK(mode_string(S_IFREG | 02640) == "-rw-r-S--- ");
    CHECK(mode_string(S_IFDIR | 01777) == "drwxrwxrwt ");
    CHECK(mode_string(S_IFDIR | 01776) == "drwxrwxrwT ");
}
