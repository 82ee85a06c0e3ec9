// File I/O off the event loop: the worker thread's writes and reads, the
// completion callbacks on the caller's thread, and whole transfers with
// the disk thread on (replies written and uploads read ahead by it), and
// the hash of a range a resume compares with the server's.
#include "ssh/sftp_client/disk_io.hpp"
#include "ssh/sftp_client/file_tasks.hpp"

#include "common/crypto/hash.hpp"
#include "tests/sftp_client/sftp_client_harness.hpp"

#include <doctest/doctest.h>

#include <poll.h>

#include <thread>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

TEST_CASE("disk_io: threaded writes land at their offsets; completions run only in drain()")
{
    sftp_temp_dir dir;
    const std::string path = dir.path() + "/f";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    disk_io io(true, 1 << 20);
    REQUIRE(io.threaded());
    REQUIRE(io.wake_fd() >= 0);
    const std::thread::id loop = std::this_thread::get_id();
    int completed = 0;
    std::size_t written = 0;
    const std::string data = client_harness::random_bytes(64 * 1024, 9);
    // Backwards, so nothing depends on order.
    for (int i = 15; i >= 0; --i) {
        io.write(fd, std::uint64_t(i) * 4096,
                 byte_span(reinterpret_cast<const std::uint8_t*>(data.data()) + i * 4096, 4096),
                 [&](int err, std::size_t n) {
                     CHECK(err == 0);
                     CHECK(std::this_thread::get_id() == loop);
                     written += n;
                     ++completed;
                 });
    }
    CHECK(io.backlog() <= 64 * 1024);
    // The eventfd says when there is something to drain.
    struct pollfd p = {io.wake_fd(), POLLIN, 0};
    REQUIRE(::poll(&p, 1, 5000) == 1);
    io.wait_idle();
    CHECK(completed == 16);
    CHECK(written == 64 * 1024);
    CHECK(io.backlog() == 0);
    CHECK(dir.read("/f") == data);
    std::string got;
    bool done = false;
    io.read(fd, 60000, 10000, [&](int err, bytes b) {
        CHECK(err == 0);
        got.assign(b.begin(), b.end());
        done = true;
    });
    io.wait_idle();
    CHECK(done);
    CHECK(got == data.substr(60000)); // short: the file ends there
    // A write error comes back as an errno.
    int err = 0;
    io.write(-1, 0, byte_span(reinterpret_cast<const std::uint8_t*>(data.data()), 10),
             [&](int e, std::size_t) { err = e; });
    io.wait_idle();
    CHECK(err == EBADF);
    ::close(fd);
}

TEST_CASE("sftp client: transfers with the disk thread arrive intact (downloads written, uploads read ahead)")
{
    session_options so;
    so.threaded_io = true;
    client_harness h(so);
    h.init();
    const std::string big = client_harness::random_bytes(5 * 1024 * 1024 + 123, 4);
    h.remote.write("/big", big);
    for (int i = 0; i < 40; ++i)
        client_harness::write_file(h.lpath("s" + std::to_string(i)), client_harness::random_bytes(std::size_t(i * 997), unsigned(i)));
    client_harness::write_file(h.lpath("empty"), "");
    task_runner down(*h.rfs, nullptr);
    down.add(make_download(*h.rfs, "/big", h.lpath("big"), std::nullopt, {}));
    REQUIRE(down.run() == 0);
    CHECK(client_harness::read_file(h.lpath("big")) == big);
    task_runner up(*h.rfs, nullptr);
    up.add(make_upload(*h.rfs, h.lpath("big"), "/big2", {}));
    up.add(make_upload(*h.rfs, h.lpath("empty"), "/empty", {}));
    for (int i = 0; i < 40; ++i)
        up.add(make_upload(*h.rfs, h.lpath("s" + std::to_string(i)), "/s" + std::to_string(i), {}));
    REQUIRE(up.run() == 0);
    CHECK(h.remote.read("/big2") == big);
    CHECK(h.remote.read("/empty").empty());
    for (int i = 0; i < 40; ++i)
        REQUIRE(h.remote.read("/s" + std::to_string(i)) == client_harness::random_bytes(std::size_t(i * 997), unsigned(i)));
    CHECK(h.errors.empty());
}

TEST_CASE("disk_io: hash() gives SHA-256 of a range on the worker, EIO when the file ends first")
{
    sftp_temp_dir dir;
    const std::string data = client_harness::random_bytes(3 * 1024 * 1024 + 5, 31);
    dir.write("/f", data);
    const int fd = ::open((dir.path() + "/f").c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    for (const bool threaded : {true, false}) {
        CAPTURE(threaded);
        disk_io io(threaded, 1 << 20);
        const std::thread::id loop = std::this_thread::get_id();
        bytes got;
        int err = -1;
        io.hash(fd, 1000, data.size() - 1000, [&](int e, bytes d) {
            CHECK(std::this_thread::get_id() == loop);
            err = e;
            got = std::move(d);
        });
        // A hash holds no data: it does not stop READs.
        CHECK(io.backlog() == 0);
        io.wait_idle();
        CHECK(err == 0);
        CHECK(got == digest(hash_alg::sha256, as_bytes(std::string_view(data).substr(1000))));
        io.hash(fd, 0, 0, [&](int e, bytes d) {
            err = e;
            got = std::move(d);
        });
        io.wait_idle();
        CHECK(err == 0);
        CHECK(got == digest(hash_alg::sha256, {}));
        io.hash(fd, 5, data.size(), [&](int e, bytes) { err = e; });
        io.wait_idle();
        CHECK(err == EIO);
    }
    ::close(fd);
}
