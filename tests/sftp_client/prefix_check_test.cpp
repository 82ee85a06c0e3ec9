// A resume's check of the part already transferred (prefix_check): with
// a server that has check-file-handle every byte of the prefix counts (a
// byte changed in the middle of a large partial file is caught, which the
// old first-and-last-64-KiB sample missed), in pieces, the local hash on
// the disk worker; without the extension, or when the server refuses it,
// the samples, said at -v.
#include "ssh/sftp_client/file_tasks.hpp"
#include "ssh/sftp_client/prefix_check.hpp"

#include "tests/sftp_client/sftp_client_harness.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {

struct resume_fixture {
    client_harness h;
    std::vector<std::string> debugs;
    std::string data;

    explicit resume_fixture(session_options so = {}, server_options o = {}) : h(so, std::move(o))
    {
        h.out.debug = [this](int level, const std::string& m) {
            CHECK(level == 1);
            debugs.push_back(m);
        };
        h.init();
        data = client_harness::random_bytes(3 * 1024 * 1024 + 77, 21);
    }

    int download_resume(const std::string& local)
    {
        task_runner runner(*h.rfs, nullptr);
        runner.add(make_download(*h.rfs, "/f", local, std::nullopt, transfer_flags{.resume = true}));
        return runner.run();
    }
    int upload_resume(const std::string& local, const std::string& remote)
    {
        task_runner runner(*h.rfs, nullptr);
        runner.add(make_upload(*h.rfs, local, remote, transfer_flags{.resume = true}));
        return runner.run();
    }
    bool debug_has(const std::string& text) const
    {
        for (const auto& d : debugs)
            if (d.find(text) != std::string::npos)
                return true;
        return false;
    }
    bool info_has(const std::string& text) const
    {
        for (const auto& i : h.infos)
            if (i.find(text) != std::string::npos)
                return true;
        return false;
    }
};

// 1.5 MiB already there with one byte changed at 700,000: far from both
// 64 KiB samples (the first and the last of the partial file).
std::string stale_middle(const std::string& data)
{
    std::string s = data.substr(0, 1536 * 1024);
    s[700000] = char(s[700000] ^ 0x20);
    return s;
}

} // namespace

TEST_CASE("sftp resume: a matching prefix is hashed on both sides and continued")
{
    resume_fixture f;
    f.h.remote.write("/f", f.data);
    client_harness::write_file(f.h.lpath("f"), f.data.substr(0, 2 * 1024 * 1024));
    REQUIRE(f.download_resume(f.h.lpath("f")) == 0);
    CHECK(client_harness::read_file(f.h.lpath("f")) == f.data);
    CHECK_FALSE(f.info_has("does not match"));
    CHECK(f.debug_has("sha256 of the first 2097152 bytes compared with the server's (check-file-handle): same"));
    // Upload: the remote part matches.
    f.h.remote.write("/u", f.data.substr(0, 1000000));
    client_harness::write_file(f.h.lpath("u"), f.data);
    REQUIRE(f.upload_resume(f.h.lpath("u"), "/u") == 0);
    CHECK(f.h.remote.read("/u") == f.data);
    CHECK(f.debug_has("sha256 of the first 1000000 bytes compared with the server's (check-file-handle): same"));
    CHECK(f.h.errors.empty());
}

TEST_CASE("sftp resume: a byte changed in the middle of the prefix is caught, the file sent whole")
{
    // With the first-and-last-64-KiB sample this splices the rest onto the
    // stale prefix and the result differs from the source.
    for (const bool threaded : {false, true}) {
        CAPTURE(threaded);
        session_options so;
        so.threaded_io = threaded;
        resume_fixture f(so);
        f.h.remote.write("/f", f.data);
        client_harness::write_file(f.h.lpath("f"), stale_middle(f.data));
        REQUIRE(f.download_resume(f.h.lpath("f")) == 0);
        CHECK(client_harness::read_file(f.h.lpath("f")) == f.data);
        CHECK(f.info_has("does not match"));
        CHECK(f.debug_has("(check-file-handle): different"));
        // Upload: the remote partial file has the changed byte.
        f.h.remote.write("/u", stale_middle(f.data));
        client_harness::write_file(f.h.lpath("u"), f.data);
        REQUIRE(f.upload_resume(f.h.lpath("u"), "/u") == 0);
        CHECK(f.h.remote.read("/u") == f.data);
        CHECK(f.h.errors.empty());
    }
}

TEST_CASE("sftp resume: the prefix is compared in pieces, each one counts")
{
    resume_fixture f;
    f.h.remote.write("/f", f.data);
    const std::string local_path = f.h.lpath("p");
    client_harness::write_file(local_path, f.data.substr(0, 1000000));
    const int fd = ::open(local_path.c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    auto r = f.h.sess->call(open_request{.id = 0, .path = "/f", .pflags = fxf::read, .attributes = {}});
    REQUIRE(r.get<handle_reply>() != nullptr);
    const bytes handle = r.get<handle_reply>()->handle;
    auto run = [&](std::uint64_t n) {
        std::optional<prefix_verdict> v;
        check_prefix(*f.h.sess, handle, fd, n, [&](const prefix_verdict& got) { v = got; }, 100000);
        f.h.sess->run_until([&] { return v.has_value(); });
        REQUIRE(v);
        CHECK_FALSE(v->lost);
        return v->same;
    };
    const std::uint64_t sent = f.h.sess->core().requests_sent();
    CHECK(run(1000000));
    CHECK(f.h.sess->core().requests_sent() - sent == 10); // ten pieces of 100,000
    CHECK(run(999999));                                   // a short last piece
    CHECK(run(1));
    // One byte changed in the eighth piece only.
    REQUIRE(::pwrite(fd, "#", 1, 750001) == 1);
    CHECK_FALSE(run(1000000));
    CHECK(run(750001)); // the prefix before it still matches
    // A remote file that ends before the prefix does (EOF for a piece):
    // different, not a reason to fall back to the samples.
    {
        f.h.net->mangle = [](bytes fr) {
            if (frame_type(fr) == fxp::extended_reply)
                return std::vector<bytes>{
                    status_reply{.id = frame_id(fr), .code = std::uint32_t(status_code::eof), .message = "EOF",
                                 .language = ""}
                        .encode()};
            return std::vector<bytes>{std::move(fr)};
        };
        const std::uint64_t before = f.h.sess->core().requests_sent();
        CHECK_FALSE(run(300000));
        CHECK(f.h.sess->core().requests_sent() - before <= 3); // no READs of samples after it
        // A server that answers with no hash at all matches nothing.
        f.h.net->mangle = [](bytes fr) {
            if (frame_type(fr) == fxp::extended_reply)
                return std::vector<bytes>{
                    check_file_reply{.id = frame_id(fr), .algorithm = "sha256", .hashes = {}}.encode()};
            return std::vector<bytes>{std::move(fr)};
        };
        CHECK_FALSE(run(300000));
        f.h.net->mangle = nullptr;
    }
    ::close(fd);
}

TEST_CASE("sftp resume: a server without check-file-handle gets the samples, said at -v")
{
    server_options o;
    o.denied = std::vector<std::string>{"check-file-handle"}; // not advertised, as OpenSSH's server
    resume_fixture f({}, o);
    REQUIRE_FALSE(f.h.sess->core().has_extension(ext::check_file_handle));
    f.h.remote.write("/f", f.data);
    client_harness::write_file(f.h.lpath("f"), f.data.substr(0, 2 * 1024 * 1024));
    REQUIRE(f.download_resume(f.h.lpath("f")) == 0);
    CHECK(client_harness::read_file(f.h.lpath("f")) == f.data);
    CHECK(f.debug_has("server lacks check-file-handle: comparing samples of the prefix"));
    CHECK_FALSE(f.info_has("does not match"));
    // A change within a sample (the last 64 KiB) is still caught.
    std::string stale = f.data.substr(0, 2 * 1024 * 1024);
    stale[stale.size() - 10] ^= 0x01;
    client_harness::write_file(f.h.lpath("g"), stale);
    task_runner runner(*f.h.rfs, nullptr);
    runner.add(make_download(*f.h.rfs, "/f", f.h.lpath("g"), std::nullopt, transfer_flags{.resume = true}));
    REQUIRE(runner.run() == 0);
    CHECK(client_harness::read_file(f.h.lpath("g")) == f.data);
    CHECK(f.info_has("does not match"));
}

TEST_CASE("sftp resume: a server that refuses the hash (range over its bound) falls back to the samples")
{
    server_options o;
    o.max_check_length = 1024 * 1024; // below what the client asks per piece here
    resume_fixture f({}, o);
    REQUIRE(f.h.sess->core().has_extension(ext::check_file_handle));
    f.h.remote.write("/f", f.data);
    client_harness::write_file(f.h.lpath("f"), f.data.substr(0, 2 * 1024 * 1024));
    REQUIRE(f.download_resume(f.h.lpath("f")) == 0);
    CHECK(client_harness::read_file(f.h.lpath("f")) == f.data);
    CHECK(f.debug_has("check-file-handle refused (Failure): comparing samples of the prefix"));
    CHECK(f.h.errors.empty());
}
