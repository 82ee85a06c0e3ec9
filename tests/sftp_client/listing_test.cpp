// sftp's text: ls -l lines, sizes, modes, columns, df, and the command
// line splitting (quotes, escapes, comments) as OpenSSH's sftp prints and
// reads them.
#include "ssh/sftp/sftp_listing.hpp"
#include "ssh/sftp/sftp_commands.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::sftp_cli;

TEST_CASE("sftp listing: strmode and fmt_scaled as OpenBSD's")
{
    CHECK(strmode(S_IFDIR | 0755) == "drwxr-xr-x ");
    CHECK(strmode(S_IFREG | 04755) == "-rwsr-xr-x ");
    CHECK(strmode(S_IFREG | 02640) == "-rw-r-S--- ");
    CHECK(strmode(S_IFDIR | 01777) == "drwxrwxrwt ");
    CHECK(strmode(S_IFLNK | 0777) == "lrwxrwxrwx ");
    CHECK(fmt_scaled(0) == "0B");
    CHECK(fmt_scaled(3) == "3B");
    CHECK(fmt_scaled(1023) == "1023B");
    CHECK(fmt_scaled(4096) == "4.0K");
    CHECK(fmt_scaled(30000000) == "28.6M");
    CHECK(fmt_scaled(270552989696LL) == "252G");
}

TEST_CASE("sftp listing: ls -l lines as OpenSSH's ls_file()")
{
    struct stat st{};
    st.st_mode = S_IFREG | 0640;
    st.st_size = 30000000;
    st.st_uid = 0;
    st.st_gid = 0;
    st.st_mtime = 1577836800; // 2020-01-01, older than six months
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    const std::string root = "root";
    CHECK(ls_file("t/big", st, true, false, &root, &root, 1764568800) ==
          "-rw-r-----    ? root     root     30000000 Jan  1  2020 t/big");
    CHECK(ls_file("t/big", st, true, true, nullptr, nullptr, 1764568800) ==
          "-rw-r-----    ? 0        0           28.6M Jan  1  2020 t/big");
    st.st_mtime = 1764568000; // recent: hours and minutes
    CHECK(ls_file("x", st, true, false, &root, &root, 1764568800) ==
          "-rw-r-----    ? root     root     30000000 Dec  1 05:46 x");
}

TEST_CASE("sftp listing: columns across 80 characters, one per line with -1")
{
    column_printer c(3, 80, false);
    std::string out;
    for (const char* n : {"d1", "f1", "out", "t"})
        out += c.add(n);
    out += c.finish();
    // 80 / (3 + 2) = 16 columns of 5 characters.
    CHECK(out == "d1   f1   out  t    \n");
    column_printer one(3, 80, true);
    CHECK(one.add("abc") == "abc\n");
    CHECK(one.finish().empty());
}

TEST_CASE("sftp listing: df in its three forms")
{
    sftp::statvfs_reply st;
    st.frsize = 4096;
    st.blocks = 66053021;
    st.bfree = 60256786;
    st.bavail = 19288061;
    st.files = 16777216;
    st.ffree = 16321223;
    st.favail = 16321223;
    CHECK(df_text(st, false, false) ==
          "        Size         Used        Avail       (root)    %Capacity\n"
          "   264212084     23184940     77152244    241027144           8%\n");
    CHECK(df_text(st, false, true) ==
          "     Inodes        Used       Avail      (root)    %Capacity\n"
          "   16777216      455993    16321223    16321223           2%\n");
    CHECK(df_text(st, true, false).find("   252GB   22.1GB   73.6GB    230GB           8%") != std::string::npos);
}

TEST_CASE("sftp commands: words, quotes, escapes and comments as OpenSSH's makeargv()")
{
    std::string err;
    auto w = split_words("put 'a file' b\\ c \"d*\" e*  # comment", err);
    REQUIRE(w);
    CHECK(*w == std::vector<std::string>{"put", "a file", "b c", "d\\*", "e*"});
    CHECK(undo_glob_escape("d\\*") == "d*");
    CHECK(escape_glob("/tmp/a[1]") == "/tmp/a\\[1\\]");
    CHECK_FALSE(split_words("get 'unterminated", err));
    CHECK(err == "Unterminated quoted argument");
    w = split_words("   ", err);
    REQUIRE(w);
    CHECK(w->empty());
}
