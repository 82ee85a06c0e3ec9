#include "sshd/sftp/rooted_fs.hpp"

#include "tests/sftp_server/sftp_server_harness.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

TEST_CASE("rooted_fs: paths, symlinks and .. never leave the root")
{
    sftp_temp_dir outside;
    outside.write("/victim", "v");
    sftp_temp_dir root;
    int error = 0;
    auto fs = rooted_filesystem::open_root(root.path(), error);
    REQUIRE(fs);
    // Links that point out of the root, absolutely and by "..".
    ::symlink(outside.path().c_str(), root.real("/abs").c_str());
    ::symlink("../../../../../../../../..", root.real("/up").c_str());
    const std::string victim = outside.path() + "/victim";

    struct stat st {};
    CHECK(fs->stat("/abs/victim", true, st) == ENOENT);
    CHECK(fs->stat("/up" + victim, true, st) == ENOENT);
    CHECK(fs->stat("/.." + victim, true, st) == ENOENT);
    CHECK(fs->stat("../../../.." + victim, false, st) == ENOENT);
    int fd = -1;
    CHECK(fs->open("/abs/victim", O_RDONLY, 0, fd) == ENOENT);
    CHECK(fs->unlink("/abs/victim") == ENOENT);
    CHECK(fs->chmod("/abs/victim", 0777, true) == ENOENT);
    CHECK(fs->rename("/up" + victim, "/stolen") == ENOENT);
    // Creating through an outward link resolves inside the root (where
    // that directory does not exist), never outside.
    CHECK(fs->open("/abs/created", O_WRONLY | O_CREAT, 0644, fd) == ENOENT);
    CHECK(::access((outside.path() + "/created").c_str(), F_OK) != 0);
    ::symlink("/inside", root.real("/dangling").c_str());
    REQUIRE(fs->open("/dangling", O_WRONLY | O_CREAT, 0644, fd) == 0);
    ::close(fd);
    CHECK(::access(root.real("/inside").c_str(), F_OK) == 0);
    // "/.." is the root; a trailing slash or ".." names the directory itself.
    CHECK(fs->chdir("/..") == 0);
    std::string cwd;
    CHECK(fs->getcwd(cwd) == 0);
    CHECK(cwd == "/");
    CHECK(fs->stat("..", false, st) == 0);
    CHECK(fs->rmdir("/..") == EBUSY);
    CHECK(fs->chmod("/up/", 0700, false) == 0); // the root itself, not what is above it
    CHECK(outside.read("/victim") == "v");
    std::string target;
    CHECK(fs->readlink("/abs", target) == 0);
    CHECK(target == outside.path());
    // chdir and relative paths.
    REQUIRE(fs->mkdir("/d", 0755) == 0);
    REQUIRE(fs->chdir("d") == 0);
    CHECK(fs->getcwd(cwd) == 0);
    CHECK(cwd == "/d");
    REQUIRE(fs->open("rel", O_WRONLY | O_CREAT, 0644, fd) == 0);
    ::close(fd);
    CHECK(::access(root.real("/d/rel").c_str(), F_OK) == 0);
    CHECK(fs->chdir("/d/rel") == ENOTDIR);
    CHECK(fs->link("/d/rel", "/hard") == 0);
    CHECK(fs->symlink("x", "/d/") == EEXIST);
}
