// Round trips that a transfer does not need: on a path of 200 ms, each one
// is 200 ms of an idle link before or after the data (at 1 GiB over
// 1 Gbit/s, about 2 % of the copy). The simulated clock counts them
// exactly: with no rate limit, an operation takes a whole number of round
// trips. Also what the shortcuts must not change: a stat answered early is
// never used once something else could have changed the file, and
// messages keep OpenSSH's order.
#include "ssh/sftp_client/file_tasks.hpp"
#include "ssh/sftp_client/tree.hpp"

#include "tests/sftp_client/sftp_client_harness.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {

// VERSION as OpenSSH's sftp-server sends it: without Longhaul's
// extensions (its server exits at the end of its input with requests still
// queued, and handles are its own to name).
void as_openssh_server(client_harness& h)
{
    h.net->mangle = [](bytes f) {
        if (frame_type(f) == fxp::version) {
            auto v = version_reply::decode(byte_span(f).subspan(5));
            REQUIRE(v);
            std::erase_if(v->extensions, [](const extension_pair& e) {
                return e.name == ext::drain_at_eof || e.name == ext::open_named;
            });
            return std::vector<bytes>{v->encode()};
        }
        return std::vector<bytes>{std::move(f)};
    };
}

} // namespace

TEST_CASE("sftp round trips: INIT, limits and the program's first stat share one round trip")
{
    client_harness h;
    slow_path(h);
    h.remote.write("/f", "12345");
    std::optional<attrs> a;
    const double n = round_trips(h, [&] {
        REQUIRE(h.sess->init([&] { h.rfs->prefetch_stat("/f"); }));
        a = h.rfs->stat("/f", false);
    });
    CHECK(n == 1); // was 3: VERSION, then limits, then the stat
    REQUIRE(a);
    CHECK(a->size == 5);
    CHECK(h.sess->read_chunk() == 256 * 1024); // the limits reply was used
    CHECK(h.sess->core().requests_sent() == 2);
}

TEST_CASE("sftp round trips: sftp's REALPATH \".\" shares the round trip of INIT, and is used once")
{
    client_harness h;
    slow_path(h);
    std::optional<std::string> cwd;
    CHECK(round_trips(h, [&] {
              REQUIRE(h.sess->init([&] { h.rfs->prefetch_realpath("."); }));
              cwd = h.rfs->realpath(".");
          }) == 1);
    CHECK(cwd == "/");
    // An early REALPATH does not answer a stat of the same path.
    h.rfs->prefetch_realpath("/");
    const auto sent = h.sess->core().requests_sent();
    REQUIRE(h.rfs->stat("/", false));
    CHECK(h.sess->core().requests_sent() == sent + 1);
}

TEST_CASE("sftp round trips: a batch's first get has its stat go with INIT and REALPATH \".\"")
{
    // sftp -b: the first command's path, relative to the directory REALPATH
    // "." names, is stat'ed in the first flight; its glob takes the answer.
    client_harness h;
    slow_path(h);
    ::mkdir(h.remote.real("/d").c_str(), 0755);
    h.remote.write("/d/f", "contents");
    glob_result g;
    const double n = round_trips(h, [&] {
        REQUIRE(h.sess->init([&] {
            h.rfs->prefetch_realpath(".");
            h.rfs->prefetch_stat("d/f");
        }));
        const auto cwd = h.rfs->realpath(".");
        REQUIRE(cwd == "/");
        h.rfs->rebase_prefetched(*cwd);
        g = remote_glob(*h.rfs, "/d/f", true, false);
    });
    CHECK(n == 1); // was 2: the glob's stat after REALPATH's answer
    REQUIRE(g.attributes.size() == 1);
    REQUIRE(g.attributes[0]);
    CHECK(g.attributes[0]->size == 8);
    CHECK(h.sess->core().requests_sent() == 3); // limits, REALPATH, STAT
    // Stale once anything else went out: the glob asks again.
    h.rfs->prefetch_realpath(".");
    h.rfs->prefetch_stat("d/f");
    REQUIRE(h.rfs->realpath(".") == "/");
    h.rfs->rebase_prefetched("/");
    REQUIRE(h.rfs->remove("/d/f") == 0);
    const auto sent = h.sess->core().requests_sent();
    g = remote_glob(*h.rfs, "/d/f", true, false);
    CHECK(g.paths.empty());
    CHECK(h.sess->core().requests_sent() == sent + 1);
}

TEST_CASE("sftp round trips: a batch's first put sends its stat and OPEN with INIT, by the path as typed")
{
    client_harness h;
    slow_path(h);
    ::mkdir(h.remote.real("/d").c_str(), 0755);
    client_harness::write_file(h.lpath("u"), "upload me");
    struct stat local{};
    REQUIRE(::stat(h.lpath("u").c_str(), &local) == 0);
    const double n = round_trips(h, [&] {
        REQUIRE(h.sess->init([&] {
            h.rfs->prefetch_realpath(".");
            h.rfs->prefetch_stat("d/u");
            h.rfs->prefetch_open(upload_open_request("d/u", local, {}));
        }));
        REQUIRE(h.rfs->realpath(".") == "/");
        h.rfs->rebase_prefetched("/");
        CHECK_FALSE(h.rfs->is_dir("/d/u")); // the early stat
        REQUIRE(run_one(h, make_upload(*h.rfs, h.lpath("u"), "/d/u", {})) == 0); // the early OPEN
    });
    CHECK(n == 2); // was 3: REALPATH's answer, then the stat and OPEN
    CHECK(h.remote.read("/d/u") == "upload me");
    CHECK(h.srv->open_handles() == 0);
    CHECK(h.errors.empty());
}

TEST_CASE("sftp round trips: a limits reply is used only when VERSION offers the extension")
{
    // The request went out before VERSION said whether the extension
    // exists: an answer to it (the server's OP_UNSUPPORTED, or a reply the
    // VERSION did not announce) changes nothing, and costs no round trip.
    for (const bool unsupported : {true, false}) {
        client_harness h;
        slow_path(h);
        h.net->mangle = [&](bytes f) {
            if (frame_type(f) == fxp::version)
                return std::vector<bytes>{version_reply{.version = 3, .extensions = {}}.encode()};
            if (unsupported && frame_id(f) == 1)
                return std::vector<bytes>{status_frame(1, status_code::op_unsupported)};
            return std::vector<bytes>{std::move(f)};
        };
        CHECK(round_trips(h, [&] { REQUIRE(h.sess->init()); }) == 1);
        CHECK(h.sess->read_chunk() == 32 * 1024); // OpenSSH's defaults
        CHECK(h.sess->core().outstanding() == 0);
    }
}

TEST_CASE("sftp round trips: a stat answered early is used only when nothing went out after it")
{
    client_harness h;
    h.init();
    // Another request in between (here the mkdir that creates the very
    // path): the early answer (no such file) is stale, a new stat is sent.
    h.rfs->prefetch_stat("/d");
    attrs mode;
    mode.flags = attr::permissions;
    mode.permissions = 0755;
    REQUIRE(h.rfs->mkdir("/d", mode, false) == 0);
    const auto sent = h.sess->core().requests_sent();
    auto a = h.rfs->stat("/d", false);
    REQUIRE(a);
    CHECK(S_ISDIR(a->permissions));
    CHECK(h.sess->core().requests_sent() == sent + 1);
    // A stat of another path drops it: a later stat of the first path asks
    // again.
    h.rfs->prefetch_stat("/d");
    CHECK_FALSE(h.rfs->stat("/missing", true));
    ::rmdir(h.remote.real("/d").c_str());
    CHECK_FALSE(h.rfs->stat("/d", true));
    // The answer, used once, is gone: the next stat asks again.
    h.remote.write("/f", "x");
    h.rfs->prefetch_stat("/f");
    REQUIRE(h.rfs->stat("/f", false));
    ::unlink(h.remote.real("/f").c_str());
    CHECK_FALSE(h.rfs->stat("/f", true));
    CHECK(h.errors.empty());
}

TEST_CASE("sftp round trips: an early stat that fails reports as a stat that was not early")
{
    client_harness h;
    REQUIRE(h.sess->init([&] { h.rfs->prefetch_stat("/nothing"); }));
    CHECK_FALSE(h.rfs->stat("/nothing", false));
    REQUIRE(h.errors.size() == 1);
    CHECK(h.errors[0] == "stat remote: No such file or directory");
}

TEST_CASE("sftp round trips: an upload's close follows its last write instead of waiting for its reply")
{
    client_harness h;
    h.init();
    slow_path(h);
    client_harness::write_file(h.lpath("small"), "small file");
    // OPEN, then WRITE and CLOSE in one flight (was three round trips).
    CHECK(round_trips(h, [&] { REQUIRE(run_one(h, make_upload(*h.rfs, h.lpath("small"), "/small", {})) == 0); }) == 2);
    CHECK(h.remote.read("/small") == "small file");
    // With -p the fsetstat goes in the same flight, after the writes, so
    // the times it sets are not undone by them.
    const std::string big = client_harness::random_bytes(3 * 256 * 1024 + 17, 5);
    client_harness::write_file(h.lpath("big"), big);
    struct timeval tv[2] = {{1234567, 0}, {1234567, 0}};
    REQUIRE(::utimes(h.lpath("big").c_str(), tv) == 0);
    CHECK(round_trips(h, [&] {
              REQUIRE(run_one(h, make_upload(*h.rfs, h.lpath("big"), "/big", {.preserve = true})) == 0);
          }) == 2);
    CHECK(h.remote.read("/big") == big);
    struct stat st{};
    REQUIRE(::stat(h.remote.real("/big").c_str(), &st) == 0);
    CHECK(st.st_mtime == 1234567);
    CHECK(h.srv->open_handles() == 0);
}

TEST_CASE("sftp round trips: a write that fails is reported before the close that went out behind it")
{
    client_harness h;
    h.init();
    const std::string data = client_harness::random_bytes(4 * 256 * 1024, 9);
    client_harness::write_file(h.lpath("f"), data);
    // The second WRITE fails; the CLOSE, sent right behind the last
    // write, fails too: the messages come in OpenSSH's order.
    int writes = 0;
    h.net->mangle = [&](bytes f) {
        if (frame_type(f) == fxp::status && ++writes == 2)
            return std::vector<bytes>{status_frame(frame_id(f), status_code::failure)};
        if (frame_type(f) == fxp::status && writes == 5)
            return std::vector<bytes>{status_frame(frame_id(f), status_code::permission_denied)};
        return std::vector<bytes>{std::move(f)};
    };
    CHECK(run_one(h, make_upload(*h.rfs, h.lpath("f"), "/f", {})) == -1);
    REQUIRE(h.errors.size() == 2);
    CHECK(h.errors[0] == "write remote \"/f\": Failure");
    CHECK(h.errors[1] == "close remote: Permission denied");
    CHECK(h.sess->core().outstanding() == 0);
}

TEST_CASE("sftp round trips: a download of a file the glob has stat'ed does not stat it again")
{
    client_harness h;
    h.init();
    slow_path(h);
    h.remote.write("/f", "contents");
    ::symlink("f", h.remote.real("/link").c_str());
    ::symlink("gone", h.remote.real("/dangling").c_str());
    glob_result g;
    CHECK(round_trips(h, [&] { g = remote_glob(*h.rfs, "/f", true, true); }) == 1);
    REQUIRE(g.attributes.size() == 1);
    REQUIRE(g.attributes[0]);
    // The named OPEN with its READs, CLOSE (was STAT, OPEN, READs, CLOSE).
    CHECK(round_trips(h, [&] {
              REQUIRE(run_one(h, make_download(*h.rfs, g.paths[0], h.lpath("f"), g.attributes[0], {})) == 0);
          }) == 2);
    CHECK(client_harness::read_file(h.lpath("f")) == "contents");
    // A link is followed (what a download opens); a dangling one, and
    // lstat's answers (no mark), leave the download to stat for itself.
    g = remote_glob(*h.rfs, "/link", true, true);
    REQUIRE(g.attributes[0]);
    CHECK(S_ISREG(g.attributes[0]->permissions));
    g = remote_glob(*h.rfs, "/*", true, true);
    REQUIRE(g.paths.size() == 3);
    CHECK(g.paths[0] == "/dangling");
    CHECK_FALSE(g.attributes[0]);
    g = remote_glob(*h.rfs, "/f", false, true);
    CHECK_FALSE(g.attributes[0]);
    g = remote_glob(*h.rfs, "/missing", true, true);
    REQUIRE(g.paths.size() == 1);
    CHECK_FALSE(g.attributes[0]);
}

TEST_CASE("sftp round trips: the path a glob stats first, for patterns without wildcards")
{
    CHECK(glob_literal_path("/a/b") == "/a/b");
    CHECK(glob_literal_path("a//b/") == "a/b");
    CHECK(glob_literal_path("/") == std::nullopt);
    CHECK(glob_literal_path("a/*.txt") == std::nullopt);
    CHECK(glob_literal_path("a\\*") == "a*");
}

TEST_CASE("sftp round trips: the last download of a connection ends the server's input with its CLOSE")
{
    // OpenSSH's sftp-server: the end of its input goes out once the data
    // is in (it would exit with READs still queued).
    client_harness h;
    as_openssh_server(h);
    h.init();
    slow_path(h);
    const std::string a = client_harness::random_bytes(300 * 1024, 21);
    const std::string b = client_harness::random_bytes(5000, 22);
    h.remote.write("/a", a);
    h.remote.write("/b", b);
    const auto known = [&](const std::string& p) { return h.rfs->stat(p, false); };
    const auto fa = known("/a"), fb = known("/b");

    // Not the last batch: OPEN, READs, CLOSE and its answer.
    {
        task_runner runner(*h.rfs, nullptr);
        runner.add(make_download(*h.rfs, "/a", h.lpath("a0"), fa, {}));
        CHECK(round_trips(h, [&] { REQUIRE(runner.run() == 0); }) == 3);
        CHECK_FALSE(h.net->end_requested);
    }
    // The last batch: the copy does not wait for the CLOSE's answer (a
    // round trip fewer before ssh can exit), and no request follows it.
    {
        task_runner runner(*h.rfs, nullptr);
        runner.set_last_batch(true);
        runner.add(make_download(*h.rfs, "/a", h.lpath("a"), fa, {}));
        CHECK(round_trips(h, [&] { REQUIRE(runner.run() == 0); }) == 2);
    }
    CHECK(h.net->end_requested);
    for (int i = 0; i < 4; ++i)
        h.net->pump(h.sess->core(), 0);
    CHECK(h.net->output_ended);
    CHECK(h.net->sent_after_end == 0);
    CHECK(client_harness::read_file(h.lpath("a")) == a);
    CHECK(h.errors.empty());
}

TEST_CASE("sftp round trips: the last download from a server that drains its input ends it behind the last READ")
{
    // drain-at-eof: the CLOSE and the end of the input go right behind the
    // last READ, so the server (and ssh with it) exits behind the last data
    // instead of a round trip after it. The copy is of the size stat gave.
    client_harness h;
    h.net->deliver_eof = true;
    h.init();
    slow_path(h);
    const std::string a = client_harness::random_bytes(300 * 1024 + 123, 41);
    h.remote.write("/a", a);
    const auto fa = h.rfs->stat("/a", false);
    task_runner runner(*h.rfs, nullptr);
    runner.set_last_batch(true);
    runner.add(make_download(*h.rfs, "/a", h.lpath("a"), fa, {}));
    // One flight: the named OPEN, its READs, the CLOSE and the end.
    CHECK(round_trips(h, [&] { REQUIRE(runner.run() == 0); }) == 1);
    CHECK(h.net->output_ended);
    CHECK(h.net->sent_after_end == 0);
    CHECK(h.net->outstanding_at_end > 1); // READs still in flight, and the CLOSE
    CHECK(h.net->eof_delivered);
    CHECK(h.srv->finished()); // the server exits with the last reply
    CHECK(h.srv->open_handles() == 0);
    CHECK(client_harness::read_file(h.lpath("a")) == a);
    CHECK(h.errors.empty());
}

TEST_CASE("sftp round trips: a last download that ends the input early copies the size stat gave")
{
    // The file changes between the stat and the reads: grown, the copy is
    // of the size stat gave (as legacy scp's); shrunk, of what is left. No
    // request follows the end of the input either way, and neither is an
    // error.
    for (const bool grows : {true, false}) {
        CAPTURE(grows);
        client_harness h;
        h.net->deliver_eof = true;
        h.init();
        const std::string a = client_harness::random_bytes(1024 * 1024 + 7, 43);
        h.remote.write("/a", a);
        const auto fa = h.rfs->stat("/a", false);
        const std::string now = grows ? a + client_harness::random_bytes(300 * 1024, 44) : a.substr(0, 200 * 1024 + 5);
        h.remote.write("/a", now);
        task_runner runner(*h.rfs, nullptr);
        runner.set_last_batch(true);
        runner.add(make_download(*h.rfs, "/a", h.lpath("a"), fa, {}));
        REQUIRE(runner.run() == 0);
        CHECK(h.net->output_ended);
        CHECK(h.net->sent_after_end == 0);
        CHECK(client_harness::read_file(h.lpath("a")) == (grows ? a : now));
        CHECK(h.errors.empty());
    }
}

TEST_CASE("sftp round trips: of several files, only the one that finishes alone ends the input")
{
    // A CLOSE still unanswered belongs to another file, whose answer an
    // ended input could lose (OpenSSH's sftp-server exits on EOF): the
    // input stays open until that file is done.
    client_harness h;
    h.init();
    const std::string a = client_harness::random_bytes(24 * 1024 * 1024, 23);
    const std::string b = client_harness::random_bytes(5000, 24);
    h.remote.write("/a", a);
    h.remote.write("/b", b);
    const auto fa = h.rfs->stat("/a", false), fb = h.rfs->stat("/b", false);
    // /a takes seconds at this rate, three times the 8 MiB of READs in
    // flight: /b's CLOSE, answered behind at most that much of /a, is done
    // long before, and /a ends alone.
    h.net->bytes_per_second = 10e6;
    h.net->one_way = std::chrono::milliseconds(10);
    task_runner runner(*h.rfs, nullptr);
    runner.set_last_batch(true);
    runner.add(make_download(*h.rfs, "/b", h.lpath("b"), fb, {}));
    runner.add(make_download(*h.rfs, "/a", h.lpath("a"), fa, {}));
    REQUIRE(runner.run() == 0);
    CHECK(h.net->end_requested);
    h.net->pump(h.sess->core(), 0);
    CHECK(h.net->output_ended);
    CHECK(h.net->sent_after_end == 0);
    CHECK(h.net->outstanding_at_end == 1); // the last CLOSE alone
    CHECK(client_harness::read_file(h.lpath("a")) == a);
    CHECK(client_harness::read_file(h.lpath("b")) == b);
    CHECK(h.errors.empty());
}

TEST_CASE("sftp round trips: the last upload to a server that drains its input ends that input with its CLOSE")
{
    // The server announces drain-at-eof (Longhaul's): it answers every
    // request that came before the end of its input, so that end goes out
    // with the last upload's CLOSE and the server (and ssh with it) exits
    // right behind the last answer: the round trip after the copy that
    // ending the input only then would cost. The answers are still waited
    // for: the copy takes the same two round trips, and its result is the
    // CLOSE's.
    client_harness h;
    h.net->deliver_eof = true;
    h.init();
    slow_path(h);
    const std::string data = client_harness::random_bytes(300 * 1024, 31);
    client_harness::write_file(h.lpath("u"), data);
    task_runner runner(*h.rfs, nullptr);
    runner.set_last_batch(true);
    transfer_flags fl;
    fl.preserve = true;
    runner.add(make_upload(*h.rfs, h.lpath("u"), "/u", fl));
    CHECK(round_trips(h, [&] { REQUIRE(runner.run() == 0); }) == 2);
    CHECK(h.net->end_requested);
    CHECK(h.net->output_ended);
    CHECK(h.net->sent_after_end == 0);
    CHECK(h.net->outstanding_at_end >= 2); // the fsetstat and the CLOSE at least
    CHECK(h.net->eof_delivered);
    CHECK(h.srv->finished());
    CHECK(h.srv->open_handles() == 0);
    CHECK(h.remote.read("/u") == data);
    CHECK(h.errors.empty());
}

TEST_CASE("sftp round trips: an upload, a failed download or directories still to set keep the input open")
{
    client_harness h;
    as_openssh_server(h);
    h.init();
    client_harness::write_file(h.lpath("u"), "upload");
    {
        // To OpenSSH's sftp-server an upload's CLOSE answer, which says
        // whether the data is safe, must come before the end of its input.
        task_runner runner(*h.rfs, nullptr);
        runner.set_last_batch(true);
        runner.add(make_upload(*h.rfs, h.lpath("u"), "/u", {}));
        REQUIRE(runner.run() == 0);
    }
    CHECK_FALSE(h.net->end_requested);
    {
        task_runner runner(*h.rfs, nullptr);
        runner.set_last_batch(true);
        runner.add(make_download(*h.rfs, "/missing", h.lpath("m"), std::nullopt, {}));
        CHECK(runner.run() == -1);
    }
    CHECK_FALSE(h.net->end_requested);
    // A tree upload sets its directories' attributes after the files.
    ::mkdir(h.lpath("tree").c_str(), 0755);
    client_harness::write_file(h.lpath("tree/f"), "f");
    transfer_batch batch(*h.rfs, nullptr);
    batch.set_last(true);
    tree_options t;
    t.flags.preserve = true;
    REQUIRE(batch.upload_dir(h.lpath("tree"), "/tree", t) == 0);
    REQUIRE(batch.run() == 0);
    CHECK_FALSE(h.net->end_requested);
    CHECK(h.remote.read("/tree/f") == "f");
}

TEST_CASE("sftp round trips: scp's upload of one file sends its OPEN with INIT and the target's stat")
{
    // scp file host:target: the stat only decides between the target and
    // target/file (a directory, whose OPEN for writing fails without
    // effect), so the OPEN of the target goes in the first flight.
    client_harness h;
    slow_path(h);
    client_harness::write_file(h.lpath("small"), "small file");
    struct stat local{};
    REQUIRE(::stat(h.lpath("small").c_str(), &local) == 0);
    const double n = round_trips(h, [&] {
        REQUIRE(h.sess->init([&] {
            h.rfs->prefetch_stat("/small");
            h.rfs->prefetch_open(upload_open_request("/small", local, {}));
        }));
        CHECK_FALSE(h.rfs->is_dir("/small")); // the early stat, still used
        REQUIRE(run_one(h, make_upload(*h.rfs, h.lpath("small"), "/small", {})) == 0);
    });
    CHECK(n == 2); // was 3: INIT and the stat, OPEN, then WRITE and CLOSE
    CHECK(h.remote.read("/small") == "small file");
    CHECK(h.srv->open_handles() == 0);
    CHECK(h.errors.empty());
}

TEST_CASE("sftp round trips: an OPEN sent early that the copy does not use is closed, never reused")
{
    client_harness h;
    client_harness::write_file(h.lpath("f"), "data");
    struct stat local{};
    REQUIRE(::stat(h.lpath("f").c_str(), &local) == 0);
    // The target is a directory: the early OPEN failed, the file goes in.
    ::mkdir(h.remote.real("/d").c_str(), 0755);
    REQUIRE(h.sess->init([&] {
        h.rfs->prefetch_stat("/d");
        h.rfs->prefetch_open(upload_open_request("/d", local, {}));
    }));
    REQUIRE(h.rfs->is_dir("/d"));
    REQUIRE(run_one(h, make_upload(*h.rfs, h.lpath("f"), "/d/f", {})) == 0);
    CHECK(h.remote.read("/d/f") == "data");
    CHECK(h.srv->open_handles() == 0);
    // An early OPEN that succeeded but is not the one asked for (other
    // flags: -p adds the times) is closed before the real one goes out.
    h.rfs->prefetch_open(upload_open_request("/g", local, {}));
    REQUIRE(run_one(h, make_upload(*h.rfs, h.lpath("f"), "/g", {.preserve = true})) == 0);
    CHECK(h.remote.read("/g") == "data");
    CHECK(h.srv->open_handles() == 0);
    // Dropped before its answer came: closed when the answer comes.
    h.rfs->prefetch_open(download_open_request("/g"));
    h.rfs->drop_prefetched_open();
    h.sess->run_until([&] { return h.sess->core().outstanding() == 0; });
    CHECK(h.srv->open_handles() == 0);
    CHECK(h.sess->core().outstanding() == 0);
    // Used once: the same request later is sent again.
    h.rfs->prefetch_open(download_open_request("/g"));
    std::optional<bytes> handle;
    h.rfs->open_async(download_open_request("/g"), [&](const reply& r) {
        if (const auto* hr = std::get_if<handle_reply>(&r))
            handle = hr->handle;
    });
    h.sess->run_until([&] { return handle.has_value(); });
    REQUIRE(handle);
    CHECK(h.srv->open_handles() == 1);
    REQUIRE(h.rfs->close(*handle) == 0);
    const auto sent = h.sess->core().requests_sent();
    bool answered = false;
    h.rfs->open_async(download_open_request("/g"), [&](const reply& r) {
        answered = true;
        if (const auto* hr = std::get_if<handle_reply>(&r))
            handle = hr->handle;
    });
    CHECK(h.sess->core().requests_sent() == sent + 1);
    h.sess->run_until([&] { return answered; });
    REQUIRE(h.rfs->close(*handle) == 0);
    CHECK(h.srv->open_handles() == 0);
    CHECK(h.errors.empty());
}

TEST_CASE("sftp client core: the server's stream ending after the last answer to ended requests is not a failure")
{
    // A drain-at-eof server exits right behind its last answer, and the
    // stream can end while the program still writes what it got: that end
    // was asked for. Anything else is "Connection closed".
    const auto reply_to = [](client_core& c, std::uint32_t id) {
        c.feed(status_reply{.id = id, .code = 0, .message = "", .language = ""}.encode());
    };
    const auto version = version_reply{.version = 3, .extensions = {}}.encode();
    for (const int kind : {0, 1, 2}) {
        CAPTURE(kind);
        client_core c;
        c.start();
        c.feed(version);
        REQUIRE(c.initialised());
        bool answered = false;
        const std::uint32_t id = c.request(close_request{.id = 0, .handle = {1, 2}}, [&](const reply&) { answered = true; });
        if (kind != 1)
            c.requests_ended();
        if (kind != 2)
            reply_to(c, id); // kind 2: ended, but the answer never came
        c.input_closed();
        CHECK(c.closed());
        CHECK(c.failed() == (kind != 0));
        CHECK(answered);
        if (kind != 0)
            CHECK(c.failure() == "Connection closed");
    }
}
