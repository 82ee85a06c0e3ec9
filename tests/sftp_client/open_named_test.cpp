// A download from a server that offers open-named@longhaul-ssh.org
// (Longhaul's): the OPEN names its handle and the first READs go in the
// same flight, a round trip sooner than after the OPEN's answer; what must
// not change with it: OpenSSH's messages, the local file untouched when
// the remote one cannot be opened, every reply taken.
#include "ssh/sftp_client/file_tasks.hpp"

#include "tests/sftp_client/sftp_client_harness.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {

// VERSION without open-named (OpenSSH's sftp-server, or -P open-named).
void without_open_named(client_harness& h)
{
    h.net->mangle = [](bytes f) {
        if (frame_type(f) == fxp::version) {
            auto v = version_reply::decode(byte_span(f).subspan(5));
            REQUIRE(v);
            std::erase_if(v->extensions, [](const extension_pair& e) { return e.name == ext::open_named; });
            return std::vector<bytes>{v->encode()};
        }
        return std::vector<bytes>{std::move(f)};
    };
}

bool local_exists(const std::string& p)
{
    struct stat st{};
    return ::lstat(p.c_str(), &st) == 0;
}

} // namespace

TEST_CASE("sftp open-named: a download's READs go with its OPEN, a round trip sooner than without")
{
    const std::string data = client_harness::random_bytes(200 * 1024 + 5, 61);
    for (const bool offered : {true, false}) {
        CAPTURE(offered);
        client_harness h;
        if (!offered)
            without_open_named(h);
        h.init();
        slow_path(h);
        h.remote.write("/big", data);
        const auto a = h.rfs->stat("/big", false);
        REQUIRE(a);
        const auto sent = h.sess->core().requests_sent();
        // (OPEN,) READs, CLOSE: the file fits the first flight of READs,
        // and the simulated link has no rate limit.
        const double n = round_trips(
            h, [&] { REQUIRE(run_one(h, make_download(*h.rfs, "/big", h.lpath("big"), a, {})) == 0); });
        CHECK(n == (offered ? 2 : 3));
        CHECK(client_harness::read_file(h.lpath("big")) == data);
        CHECK(h.srv->open_handles() == 0);
        CHECK(h.sess->core().outstanding() == 0);
        CHECK(h.sess->core().requests_sent() > sent + 3);
        CHECK(h.errors.empty());
    }
}

TEST_CASE("sftp open-named: a remote file that cannot be opened is reported as OPEN's, the local one untouched")
{
    client_harness h;
    h.init();
    h.remote.write("/a", client_harness::random_bytes(100000, 62));
    const auto a = h.rfs->stat("/a", false);
    REQUIRE(a);
    // Gone between the stat (a glob's, say) and the open.
    REQUIRE(::unlink(h.remote.real("/a").c_str()) == 0);
    CHECK(run_one(h, make_download(*h.rfs, "/a", h.lpath("a"), a, {})) == -1);
    REQUIRE(h.errors.size() == 1);
    CHECK(h.errors[0] == "remote open \"/a\": No such file or directory");
    CHECK_FALSE(local_exists(h.lpath("a")));
    // The READs that went with it were answered (no handle) and dropped.
    CHECK(h.sess->core().outstanding() == 0);
    CHECK(h.srv->open_handles() == 0);
    CHECK(h.sess->ok());
}

TEST_CASE("sftp open-named: a local file that cannot be created closes the remote handle after the READs")
{
    client_harness h;
    h.init();
    const std::string data = client_harness::random_bytes(600000, 63);
    h.remote.write("/a", data);
    const auto a = h.rfs->stat("/a", false);
    REQUIRE(a);
    const std::string local = h.lpath("no/such/dir/a");
    CHECK(run_one(h, make_download(*h.rfs, "/a", local, a, {})) == -1);
    REQUIRE(h.errors.size() == 1);
    CHECK(h.errors[0] == "open local \"" + local + "\": No such file or directory");
    CHECK(h.sess->core().outstanding() == 0);
    CHECK(h.srv->open_handles() == 0);
    CHECK(h.sess->ok());
    // The session goes on: the next download works.
    REQUIRE(run_one(h, make_download(*h.rfs, "/a", h.lpath("a"), a, {})) == 0);
    CHECK(client_harness::read_file(h.lpath("a")) == data);
}

TEST_CASE("sftp open-named: a server that answers with another handle, or data before the open, is a protocol error")
{
    for (const int kind : {0, 1}) {
        CAPTURE(kind);
        client_harness h;
        h.init();
        h.remote.write("/a", client_harness::random_bytes(100000, 64));
        const auto a = h.rfs->stat("/a", false);
        REQUIRE(a);
        std::optional<bytes> held;
        h.net->mangle = [&](bytes f) {
            if (frame_type(f) == fxp::handle) {
                if (kind == 0)
                    return std::vector<bytes>{handle_reply{.id = frame_id(f), .handle = {'x', 'y'}}.encode()};
                held = std::move(f); // comes after the first DATA
                return std::vector<bytes>{};
            }
            if (kind == 1 && frame_type(f) == fxp::data && held) {
                std::vector<bytes> out{std::move(f), std::move(*held)};
                held.reset();
                return out;
            }
            return std::vector<bytes>{std::move(f)};
        };
        CHECK(run_one(h, make_download(*h.rfs, "/a", h.lpath("a"), a, {})) == -1);
        CHECK_FALSE(h.sess->ok());
        CHECK(h.sess->core().failure() == (kind == 0 ? "Server answered open-named with another handle"
                                                     : "Received data before the file was opened"));
    }
}

TEST_CASE("sftp open-named: a resume opens as before (it reads the local file's prefix back first)")
{
    client_harness h;
    h.init();
    slow_path(h);
    const std::string data = client_harness::random_bytes(500000, 65);
    h.remote.write("/a", data);
    client_harness::write_file(h.lpath("a"), data.substr(0, 1000));
    const auto a = h.rfs->stat("/a", false);
    std::vector<std::size_t> handle_lengths;
    h.net->mangle = [&](bytes f) {
        if (frame_type(f) == fxp::handle)
            handle_lengths.push_back(f.size() - 13); // length, type, id, string length
        return std::vector<bytes>{std::move(f)};
    };
    REQUIRE(run_one(h, make_download(*h.rfs, "/a", h.lpath("a"), a, {.resume = true})) == 0);
    CHECK(client_harness::read_file(h.lpath("a")) == data);
    CHECK(handle_lengths == std::vector<std::size_t>{8}); // the server's own: a plain OPEN
    CHECK(h.srv->open_handles() == 0);
}
