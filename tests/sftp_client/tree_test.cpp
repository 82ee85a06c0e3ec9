// Directory trees and globs over the simulated link: download_dir and
// upload_dir with -p, a tree of many small files pipelined (round trips
// per directory, not per file), the order of messages in a batch, and
// remote_glob's matching rules.
#include "ssh/sftp_client/tree.hpp"

#include "tests/sftp_client/sftp_client_harness.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/time.h>

#include <filesystem>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {

mode_t mode_of(const std::string& p)
{
    struct stat st{};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

time_t mtime_of(const std::string& p)
{
    struct stat st{};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mtime;
}

void set_mtime(const std::string& p, time_t t)
{
    struct timeval tv[2] = {{t, 0}, {t, 0}};
    REQUIRE(::utimes(p.c_str(), tv) == 0);
}

} // namespace

TEST_CASE("sftp client tree: upload_dir and download_dir keep contents, modes and times with -p")
{
    client_harness h;
    h.init();
    const std::string src = h.lpath("src");
    ::mkdir(src.c_str(), 0755);
    ::mkdir((src + "/sub").c_str(), 0755);
    ::mkdir((src + "/ro").c_str(), 0755);
    client_harness::write_file(src + "/a.bin", client_harness::random_bytes(300000, 3));
    client_harness::write_file(src + "/sub/b.txt", "bee\n");
    client_harness::write_file(src + "/ro/c.txt", "sea\n");
    client_harness::write_file(src + "/empty", "");
    ::chmod((src + "/a.bin").c_str(), 0640);
    set_mtime(src + "/a.bin", 1500000000);
    set_mtime(src + "/sub/b.txt", 1500000100);
    set_mtime(src + "/sub", 1400000000);
    // A read-only directory: its files must still be written into it.
    ::chmod((src + "/ro").c_str(), 0555);

    transfer_batch up(*h.rfs, nullptr);
    tree_options o;
    o.flags.preserve = true;
    REQUIRE(up.upload_dir(src, "/dst", o) == 0);
    REQUIRE(up.run() == 0);
    CHECK(h.errors.empty());
    CHECK(h.remote.read("/dst/a.bin") == client_harness::read_file(src + "/a.bin"));
    CHECK(h.remote.read("/dst/sub/b.txt") == "bee\n");
    CHECK(h.remote.read("/dst/ro/c.txt") == "sea\n");
    CHECK(mode_of(h.remote.real("/dst/a.bin")) == 0640);
    CHECK(mode_of(h.remote.real("/dst/ro")) == 0555);
    CHECK(mtime_of(h.remote.real("/dst/a.bin")) == 1500000000);
    // A directory's time is set after its files were written into it.
    CHECK(mtime_of(h.remote.real("/dst/sub")) == 1400000000);

    transfer_batch down(*h.rfs, nullptr);
    REQUIRE(down.download_dir("/dst", h.lpath("back"), o) == 0);
    REQUIRE(down.run() == 0);
    CHECK(h.errors.empty());
    CHECK(client_harness::read_file(h.lpath("back/a.bin")) == client_harness::read_file(src + "/a.bin"));
    CHECK(client_harness::read_file(h.lpath("back/ro/c.txt")) == "sea\n");
    CHECK(client_harness::read_file(h.lpath("back/empty")).empty());
    CHECK(mode_of(h.lpath("back/ro")) == 0555);
    CHECK(mode_of(h.lpath("back/a.bin")) == 0640);
    CHECK(mtime_of(h.lpath("back/sub/b.txt")) == 1500000100);
    CHECK(mtime_of(h.lpath("back/sub")) == 1400000000);
    ::chmod((src + "/ro").c_str(), 0755);
    ::chmod(h.lpath("back/ro").c_str(), 0755);
    ::chmod(h.remote.real("/dst/ro").c_str(), 0755);
}

TEST_CASE("sftp client tree: 2,000 small files cost the round trips of their directories, not of their files")
{
    client_harness h;
    h.net->one_way = std::chrono::milliseconds(25); // 50 ms RTT
    h.init();
    constexpr int files = 2000;
    ::mkdir(h.remote.real("/many").c_str(), 0755);
    for (int d = 0; d < 4; ++d) {
        ::mkdir(h.remote.real("/many/d" + std::to_string(d)).c_str(), 0755);
        for (int i = 0; i < files / 4; ++i)
            h.remote.write("/many/d" + std::to_string(d) + "/f" + std::to_string(i),
                           client_harness::random_bytes(4096, unsigned(d * 1000 + i)));
    }
    const auto t0 = h.net->now;
    transfer_batch down(*h.rfs, nullptr);
    REQUIRE(down.download_dir("/many", h.lpath("many"), {}) == 0);
    REQUIRE(down.run() == 0);
    const double down_s = h.seconds_since(t0);
    for (int d = 0; d < 4; ++d)
        for (int i = 0; i < files / 4; i += 97)
            REQUIRE(client_harness::read_file(h.lpath("many/d" + std::to_string(d) + "/f" + std::to_string(i))) ==
                    client_harness::random_bytes(4096, unsigned(d * 1000 + i)));
    // One file at a time: open, read, read (EOF), close = 4 round trips,
    // 2,000 x 4 x 50 ms = 400 s. Pipelined: the directory listings (a
    // round trip per 100 names) and a few more.
    MESSAGE("2000 x 4 KiB download at 50 ms RTT: " << down_s << " s simulated");
    CHECK(down_s < 15.0);

    const auto t1 = h.net->now;
    transfer_batch up(*h.rfs, nullptr);
    REQUIRE(up.upload_dir(h.lpath("many"), "/back", {}) == 0);
    REQUIRE(up.run() == 0);
    const double up_s = h.seconds_since(t1);
    MESSAGE("2000 x 4 KiB upload at 50 ms RTT: " << up_s << " s simulated");
    CHECK(up_s < 15.0);
    CHECK(h.remote.read("/back/d3/f499") == client_harness::random_bytes(4096, 3499));
}

TEST_CASE("sftp client tree: a group's failure note comes after its files' own messages")
{
    client_harness h;
    h.init();
    std::vector<std::string> all;
    h.out.error = [&](const std::string& m) { all.push_back(m); };
    const std::string src = h.lpath("g");
    ::mkdir(src.c_str(), 0755);
    client_harness::write_file(src + "/ok", "fine");
    transfer_batch b(*h.rfs, nullptr);
    // A file whose remote directory does not exist fails on open.
    const auto mark = b.begin_group();
    b.upload_file(src + "/ok", "/no/such/dir/ok", {}, "upload of ok failed");
    b.end_group(mark, false, "failed to upload directory g");
    const auto mark2 = b.begin_group();
    b.upload_file(src + "/ok", "/ok", {}, "never printed");
    b.end_group(mark2, false, "never printed either");
    CHECK(b.run() == -1);
    REQUIRE(all.size() == 3);
    CHECK(all[0].find("dest open \"/no/such/dir/ok\"") == 0);
    CHECK(all[1] == "upload of ok failed");
    CHECK(all[2] == "failed to upload directory g");
    CHECK(h.remote.read("/ok") == "fine");
}

TEST_CASE("sftp client glob: patterns, marks, no matches, escapes")
{
    client_harness h;
    h.init();
    ::mkdir(h.remote.real("/g").c_str(), 0755);
    ::mkdir(h.remote.real("/g/dir1").c_str(), 0755);
    h.remote.write("/g/a.txt", "a");
    h.remote.write("/g/b.txt", "b");
    h.remote.write("/g/.hidden.txt", "h");
    h.remote.write("/g/star*", "s");
    h.remote.write("/g/dir1/x", "x");

    auto g = remote_glob(*h.rfs, "/g/*.txt", false, false);
    CHECK(g.paths == std::vector<std::string>{"/g/a.txt", "/g/b.txt"});
    CHECK(g.matched == 2);
    g = remote_glob(*h.rfs, "/g/.*.txt", false, false);
    CHECK(g.paths == std::vector<std::string>{"/g/.hidden.txt"});
    g = remote_glob(*h.rfs, "/g/d*", true, false);
    CHECK(g.paths == std::vector<std::string>{"/g/dir1/"});
    g = remote_glob(*h.rfs, "/g/*/x", false, false);
    CHECK(g.paths == std::vector<std::string>{"/g/dir1/x"});
    g = remote_glob(*h.rfs, "/g/nothing*", false, false);
    CHECK(g.paths.empty());
    g = remote_glob(*h.rfs, "/g/nothing*", false, true);
    CHECK(g.paths == std::vector<std::string>{"/g/nothing*"});
    CHECK(g.matched == 0);
    // A literal path is checked; an escaped '*' is a literal star.
    g = remote_glob(*h.rfs, "/g/a.txt", true, false);
    CHECK(g.paths == std::vector<std::string>{"/g/a.txt"});
    g = remote_glob(*h.rfs, "/g/missing", true, false);
    CHECK(g.paths.empty());
    g = remote_glob(*h.rfs, "/g/star\\*", false, false);
    CHECK(g.paths == std::vector<std::string>{"/g/star*"});
    CHECK(has_glob_magic("a*"));
    CHECK_FALSE(has_glob_magic("a\\*"));
}

TEST_CASE("sftp client resume: a prefix that does not match is transferred again whole, both ways")
{
    client_harness h;
    h.init();
    const std::string data = client_harness::random_bytes(400000, 11);
    h.remote.write("/r", data);
    // The local part differs in its last bytes: a different file.
    std::string stale = data.substr(0, 200000);
    stale[199990] ^= 0x55;
    client_harness::write_file(h.lpath("r"), stale);
    transfer_flags f;
    f.resume = true;
    transfer_batch down(*h.rfs, nullptr);
    down.download_file("/r", h.lpath("r"), std::nullopt, f);
    REQUIRE(down.run() == 0);
    CHECK(client_harness::read_file(h.lpath("r")) == data);
    REQUIRE(h.infos.size() == 1);
    CHECK(h.infos[0].find("does not match") != std::string::npos);
    // A matching prefix is continued, not sent again.
    client_harness::write_file(h.lpath("r2"), data.substr(0, 300000));
    transfer_batch down2(*h.rfs, nullptr);
    down2.download_file("/r", h.lpath("r2"), std::nullopt, f);
    REQUIRE(down2.run() == 0);
    CHECK(client_harness::read_file(h.lpath("r2")) == data);
    CHECK(h.infos.size() == 1);
    // Upload: the remote part differs at its start.
    std::string remote_stale = data.substr(0, 100000);
    remote_stale[3] ^= 0x01;
    h.remote.write("/u", remote_stale);
    client_harness::write_file(h.lpath("u"), data);
    transfer_batch up(*h.rfs, nullptr);
    up.upload_file(h.lpath("u"), "/u", f);
    REQUIRE(up.run() == 0);
    CHECK(h.remote.read("/u") == data);
    CHECK(h.infos.size() == 2);
    CHECK(h.errors.empty());
}
