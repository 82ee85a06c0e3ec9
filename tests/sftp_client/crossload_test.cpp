// scp -3: a file or a tree copied from one server to another through the
// client (ssh/sftp_client/crossload.hpp), both over simulated links.
#include "ssh/sftp_client/crossload.hpp"

#include "tests/sftp_client/sftp_client_harness.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {

// Two servers, each behind its own link; `from` is the origin.
struct two_servers {
    client_harness from, to;
    two_servers()
    {
        from.init();
        to.init();
    }
};

// A DATA reply frame cut to its first `keep` bytes (a server may answer
// a READ with less than asked).
bytes cut_data(const bytes& frame, std::size_t keep)
{
    const std::uint32_t len = load_u32(frame.data() + 9);
    return data_reply{.id = frame_id(frame), .data = byte_span(frame).subspan(13, std::min<std::size_t>(keep, len))}
        .encode();
}

std::string file_text(const sftp_temp_dir& d, const std::string& inside)
{
    return client_harness::read_file(d.real(inside));
}

} // namespace

TEST_CASE("crossload: a file goes from one server to the other whole, reads and writes in flight together")
{
    two_servers s;
    const std::string data = client_harness::random_bytes(5 * 1024 * 1024 + 123, 7);
    s.from.remote.write("/f", data);
    ::chmod(s.from.remote.real("/f").c_str(), 0640);
    crossload_options o;
    o.in_flight_bytes = 1024 * 1024;
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/f", "/g", std::nullopt, o) == 0);
    CHECK(file_text(s.to.remote, "/g") == data);
    struct stat st{};
    REQUIRE(::stat(s.to.remote.real("/g").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
    // Never more than the budget asked of the origin at once.
    CHECK(s.from.net->max_server_outstanding <= 1024 * 1024 / s.from.sess->read_chunk() + 1);
    CHECK(s.from.errors.empty());
    CHECK(s.to.errors.empty());
}

TEST_CASE("crossload: short reads are asked again for the rest; an empty file is created empty")
{
    two_servers s;
    const std::string data = client_harness::random_bytes(2 * 1024 * 1024, 9);
    s.from.remote.write("/f", data);
    int n = 0;
    s.from.net->mangle = [&n](bytes f) {
        if (frame_type(f) == fxp::data && ++n % 3 == 0)
            return std::vector<bytes>{cut_data(f, 1000 + n)};
        return std::vector<bytes>{std::move(f)};
    };
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/f", "/g", std::nullopt, {}) == 0);
    CHECK(n > 3);
    CHECK(file_text(s.to.remote, "/g") == data);
    s.from.net->mangle = nullptr;
    s.from.remote.write("/empty", "");
    s.to.remote.write("/e", "old contents");
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/empty", "/e", std::nullopt, {}) == 0);
    CHECK(file_text(s.to.remote, "/e").empty());
}

TEST_CASE("crossload: errors on either side end the copy with OpenSSH's words")
{
    two_servers s;
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/missing", "/g", std::nullopt, {}) == -1);
    REQUIRE(s.from.errors.size() == 1);
    CHECK(s.from.errors[0] == "stat remote: No such file or directory");

    s.from.errors.clear();
    ::mkdir(s.from.remote.real("/dir").c_str(), 0755);
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/dir", "/g", std::nullopt, {}) == -1);
    REQUIRE(s.from.errors.size() == 1);
    CHECK(s.from.errors[0] == "download \"/dir\": not a regular file");

    // A destination that cannot be opened: the origin's handle is closed.
    s.from.errors.clear();
    s.from.remote.write("/f", client_harness::random_bytes(100000));
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/f", "/no/such/dir/g", std::nullopt, {}) == -1);
    REQUIRE(s.to.errors.size() == 1);
    CHECK(s.to.errors[0] == "dest open \"/no/such/dir/g\": No such file or directory");

    // A read that fails mid-file: "read origin", and nothing more is asked.
    s.to.errors.clear();
    int n = 0;
    s.from.net->mangle = [&n](bytes f) {
        if (frame_type(f) == fxp::data && ++n == 2)
            return std::vector<bytes>{status_frame(frame_id(f), status_code::failure)};
        return std::vector<bytes>{std::move(f)};
    };
    s.from.remote.write("/big", client_harness::random_bytes(4 * 1024 * 1024));
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/big", "/g", std::nullopt, {}) == -1);
    REQUIRE_FALSE(s.from.errors.empty());
    CHECK(s.from.errors.back() == "read origin \"/big\": Failure");
    s.from.net->mangle = nullptr;

    // A write that fails: "write dest".
    s.from.errors.clear();
    int w = 0;
    s.to.net->mangle = [&w](bytes f) {
        // The first STATUS after the OPEN's HANDLE answers the first WRITE.
        if (frame_type(f) == fxp::status && ++w == 1)
            return std::vector<bytes>{status_frame(frame_id(f), status_code::permission_denied)};
        return std::vector<bytes>{std::move(f)};
    };
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/f", "/h", std::nullopt, {}) == -1);
    REQUIRE_FALSE(s.from.errors.empty());
    CHECK(s.from.errors.back() == "write dest \"/h\": Permission denied");
}

TEST_CASE("crossload: a tree with -p keeps modes and times, links followed, other files skipped")
{
    two_servers s;
    const auto& r = s.from.remote;
    ::mkdir(r.real("/t").c_str(), 0750);
    ::mkdir(r.real("/t/sub").c_str(), 0700);
    r.write("/t/a", "alpha");
    r.write("/t/sub/b", client_harness::random_bytes(300000, 3));
    REQUIRE(::symlink("a", r.real("/t/link").c_str()) == 0);
    REQUIRE(::mkfifo(r.real("/t/fifo").c_str(), 0600) == 0);
    ::chmod(r.real("/t/a").c_str(), 0604);
    struct timespec times[2] = {{1500000000, 0}, {1500000000, 0}};
    ::utimensat(AT_FDCWD, r.real("/t/sub/b").c_str(), times, 0);
    ::utimensat(AT_FDCWD, r.real("/t/sub").c_str(), times, 0);
    crossload_options o;
    o.preserve = true;
    CHECK(crossload_dir(*s.from.rfs, *s.to.rfs, "/t", "/copy", o) == 0);
    const auto& d = s.to.remote;
    CHECK(file_text(d, "/copy/a") == "alpha");
    CHECK(file_text(d, "/copy/link") == "alpha");
    CHECK(file_text(d, "/copy/sub/b") == client_harness::random_bytes(300000, 3));
    struct stat st{};
    CHECK(::lstat(d.real("/copy/fifo").c_str(), &st) != 0);
    REQUIRE(::stat(d.real("/copy/a").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0604);
    REQUIRE(::stat(d.real("/copy/sub/b").c_str(), &st) == 0);
    CHECK(st.st_mtime == 1500000000);
    REQUIRE(::stat(d.real("/copy/sub").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(st.st_mtime == 1500000000);
    REQUIRE(::stat(d.real("/copy").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0750);
    REQUIRE(s.from.infos.size() == 1);
    CHECK(s.from.infos[0] == "download \"/t/fifo\": not a regular file");
}

TEST_CASE("crossload: -l paces the origin's reads (it was ignored)")
{
    two_servers s;
    const std::string data = client_harness::random_bytes(2 * 1000 * 1000, 5);
    s.from.remote.write("/f", data);
    crossload_options o;
    o.limit_bps = 8 * 1000 * 1000; // 1 MB/s
    const auto t0 = s.from.net->now;
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/f", "/g", std::nullopt, o) == 0);
    CHECK(file_text(s.to.remote, "/g") == data);
    // 2 MB at 1 MB/s, less the 100 ms burst and the last read's credit.
    CHECK(s.from.seconds_since(t0) > 1.5);
    // Unlimited, the same copy takes a few round trips of the simulated link.
    const auto t1 = s.from.net->now;
    CHECK(crossload_file(*s.from.rfs, *s.to.rfs, "/f", "/h", std::nullopt, {}) == 0);
    CHECK(s.from.seconds_since(t1) < 0.5);
}
