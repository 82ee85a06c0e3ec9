// What the server refuses: read-only mode, -p/-P request lists, bad
// handles, malformed and oversize packets, handle limits, and the file
// system's own permission checks.
#include "sshd/sftp/sftp_server.hpp"

#include "tests/sftp_server/sftp_server_harness.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {

std::vector<std::string> extension_names(sftp_harness& h)
{
    h.out.clear();
    auto r = h.exchange(init_request{}.encode());
    REQUIRE(r.size() == 1);
    std::vector<std::string> names;
    for (const auto& e : std::get<version_reply>(r[0]).extensions)
        names.push_back(e.name);
    return names;
}

bool has(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

} // namespace

TEST_CASE("sftp server: read-only mode (-R)")
{
    server_options o;
    o.read_only = true;
    sftp_harness h(o);
    h.dir.write("/f", "data");
    CHECK(h.status_of(open_request{.path = "/f", .pflags = fxf::write, .attributes = {}}) == permission_denied);
    CHECK(h.logged("Refusing open request in read-only mode"));
    CHECK(h.status_of(open_request{.path = "/n", .pflags = fxf::read | fxf::creat, .attributes = {}}) ==
          permission_denied);
    CHECK(h.status_of(open_request{.path = "/f", .pflags = fxf::read | fxf::trunc, .attributes = {}}) ==
          permission_denied);
    const bytes r = h.open("/f", fxf::read);
    CHECK(h.status_of(remove_request{.path = "/f"}) == permission_denied);
    CHECK(h.logged("Refusing remove request in read-only mode"));
    CHECK(h.status_of(write_request{.handle = r, .offset = 0, .data = {}}) == permission_denied);
    CHECK(h.status_of(posix_rename_request{.old_path = "/f", .new_path = "/g"}) == permission_denied);
    CHECK(h.dir.read("/f") == "data");
    // Reading still works, and only the read-only extensions are offered.
    CHECK(std::holds_alternative<data_reply>(h.call(read_request{.handle = r, .offset = 0, .length = 4})));
    const auto names = extension_names(h);
    CHECK(has(names, "statvfs@openssh.com"));
    CHECK(has(names, "limits@openssh.com"));
    CHECK_FALSE(has(names, "posix-rename@openssh.com"));
    CHECK_FALSE(has(names, "hardlink@openssh.com"));
    CHECK_FALSE(has(names, "fsync@openssh.com"));
    CHECK_FALSE(has(names, "lsetstat@openssh.com"));
    CHECK_FALSE(has(names, "copy-data"));
    CHECK(h.logged("refusing to advertise disallowed extension posix-rename@openssh.com"));
}

TEST_CASE("sftp server: denied (-P) and allowed (-p) requests")
{
    server_options o;
    o.denied = std::vector<std::string>{"remove", "statvfs"};
    sftp_harness h(o);
    h.dir.write("/f", "x");
    CHECK(h.status_of(remove_request{.path = "/f"}) == permission_denied);
    CHECK(h.logged("Refusing denylisted remove request"));
    CHECK(h.status_of(statvfs_request{.path = "/"}) == permission_denied);
    CHECK_FALSE(has(extension_names(h), "statvfs@openssh.com"));
    CHECK(std::holds_alternative<attrs_reply>(h.call(stat_request{.path = "/f"})));

    server_options a;
    a.allowed = std::vector<std::string>{"open", "close", "read", "stat", "realpath"};
    sftp_harness g(a);
    g.dir.write("/f", "x");
    const bytes f = g.open("/f", fxf::read);
    CHECK(g.status_of(close_request{.handle = f}) == ok);
    CHECK(g.logged("Permitting allowlisted open request"));
    CHECK(g.status_of(lstat_request{.path = "/f"}) == permission_denied);
    CHECK(g.logged("Refusing non-allowlisted lstat request"));
    CHECK(g.status_of(limits_request{}) == permission_denied);
    // Only what is not a request: how the end of the input is handled.
    CHECK(extension_names(g) == std::vector<std::string>{"drain-at-eof@longhaul-ssh.org"});
}

TEST_CASE("sftp server: the request names of -Q requests, in OpenSSH's order")
{
    const auto names = server::request_names();
    const std::vector<std::string_view> want = {
        "open", "close", "read", "write", "lstat", "fstat", "setstat", "fsetstat", "opendir", "readdir", "remove",
        "mkdir", "rmdir", "realpath", "stat", "rename", "readlink", "symlink", "posix-rename", "statvfs",
        "fstatvfs", "hardlink", "fsync", "lsetstat", "limits", "expand-path", "copy-data", "home-directory",
        "users-groups-by-id", "check-file-handle", "check-file-name", "open-named"};
    CHECK(names == want);
}

TEST_CASE("sftp server: bad and stale handles")
{
    sftp_harness h;
    h.dir.write("/f", "x");
    const bytes junk = {1, 2, 3, 4};
    CHECK(h.status_of(read_request{.handle = junk, .offset = 0, .length = 1}) == failure);
    CHECK(h.logged("request 100: read \"(null)\" (handle -1) off 0 len 1"));
    CHECK(h.status_of(close_request{.handle = junk}) == no_such_file);
    CHECK(h.logged("closedir \"(null)\"")); // OpenSSH's words for it
    CHECK(h.status_of(fstat_request{.handle = bytes(300, 0)}) == failure);
    CHECK(h.status_of(fsetstat_request{.handle = junk, .attributes = {}}) == failure);
    CHECK(h.status_of(readdir_request{.handle = {}}) == failure);
    CHECK(h.status_of(fstatvfs_request{.handle = junk}) == failure);
    // A handle used after its close, even when its slot was taken again.
    const bytes first = h.open("/f", fxf::read);
    CHECK(h.status_of(close_request{.handle = first}) == ok);
    const bytes second = h.open("/f", fxf::read);
    CHECK(second != first);
    CHECK(h.status_of(read_request{.handle = first, .offset = 0, .length = 1}) == failure);
    CHECK(h.status_of(close_request{.handle = first}) == no_such_file);
    CHECK(h.srv->open_handles() == 1);
}

TEST_CASE("sftp server: malformed requests get BAD_MESSAGE and a log line, and the session goes on")
{
    sftp_harness h;
    auto send_raw = [&h](const bytes& body) {
        bytes packet;
        wire_writer w(packet);
        w.string(byte_span(body));
        h.out.clear();
        return h.exchange(packet);
    };
    // Truncated OPEN (no pflags, no attrs).
    bytes trunc;
    wire_writer(trunc).u8(fxp::open).u32(7).string("/x");
    auto r = send_raw(trunc);
    REQUIRE(r.size() == 1);
    CHECK(std::get<status_reply>(r[0]).code == bad_message);
    CHECK(std::get<status_reply>(r[0]).id == 7);
    CHECK(h.logged("process_open: parse: incomplete message"));
    // Trailing bytes after a STAT.
    bytes trailing;
    wire_writer(trailing).u8(fxp::stat).u32(8).string("/").u8(0);
    r = send_raw(trailing);
    CHECK(std::get<status_reply>(r[0]).code == bad_message);
    CHECK(h.logged("process_do_stat: parse: unexpected trailing data"));
    // An attribute flag version 3 does not define.
    bytes flags;
    wire_writer(flags).u8(fxp::setstat).u32(9).string("/").u32(0x40);
    r = send_raw(flags);
    CHECK(std::get<status_reply>(r[0]).code == bad_message);
    CHECK(h.logged("process_setstat: parse: malformed message"));
    // Too many extended attribute pairs.
    bytes ext;
    wire_writer we(ext);
    we.u8(fxp::mkdir).u32(10).string("/m").u32(attr::extended).u32(1000);
    r = send_raw(ext);
    CHECK(std::get<status_reply>(r[0]).code == bad_message);
    CHECK(h.logged("process_mkdir: parse: length exceeds limit"));
    // A path with a NUL in it.
    bytes nul;
    wire_writer(nul).u8(fxp::remove).u32(11).string(std::string_view("/a\0b", 4));
    r = send_raw(nul);
    CHECK(std::get<status_reply>(r[0]).code == bad_message);
    // An unknown packet type: OP_UNSUPPORTED (OpenSSH stays silent).
    bytes unknown;
    wire_writer(unknown).u8(99).u32(12);
    r = send_raw(unknown);
    CHECK(std::get<status_reply>(r[0]).code == op_unsupported);
    CHECK(h.logged("Unknown message 99"));
    // An unknown extension.
    bytes unk_ext;
    wire_writer(unk_ext).u8(fxp::extended).u32(13).string("x@example.com");
    r = send_raw(unk_ext);
    CHECK(std::get<status_reply>(r[0]).code == op_unsupported);
    CHECK(h.logged("Unknown extended request \"x@example.com\""));
    // A packet too short for its id: logged, no reply possible.
    const bytes short_packet = {fxp::stat, 0, 0};
    r = send_raw(short_packet);
    CHECK(r.empty());
    // An empty packet (length 0): logged and skipped.
    h.out.clear();
    r = h.exchange(bytes{0, 0, 0, 0});
    CHECK(r.empty());
    CHECK(h.logged("bad message from 192.0.2.1 local user tester: empty packet"));
    // Still serving.
    CHECK(std::holds_alternative<name_reply>(h.call(realpath_request{.path = "/"})));
    CHECK_FALSE(h.srv->finished());
}

TEST_CASE("sftp server: an oversize packet is answered and skipped as it streams in")
{
    sftp_harness h;
    bytes big;
    wire_writer w(big);
    const std::uint32_t length = default_max_packet_length + 100;
    w.u32(length).u8(fxp::write).u32(42);
    big.resize(4 + length, 0x55);
    bytes after = stat_request{.id = 43, .path = "/"}.encode();
    big.insert(big.end(), after.begin(), after.end());
    h.out.clear();
    // In small pieces: never buffered whole.
    std::vector<reply> replies;
    for (std::size_t pos = 0; pos < big.size(); pos += 1000) {
        auto r = h.exchange(byte_span(big).subspan(pos, std::min<std::size_t>(1000, big.size() - pos)));
        replies.insert(replies.end(), r.begin(), r.end());
        h.out.clear();
    }
    REQUIRE(replies.size() == 2);
    CHECK(std::get<status_reply>(replies[0]).id == 42);
    CHECK(std::get<status_reply>(replies[0]).code == bad_message);
    CHECK(std::holds_alternative<attrs_reply>(replies[1]));
    CHECK(h.logged("bad message from 192.0.2.1 local user tester"));
}

TEST_CASE("sftp server: handle limits")
{
    server_options o;
    o.max_handles = 3;
    o.max_directory_handles = 1;
    sftp_harness h(o);
    h.dir.write("/f", "x");
    const bytes d = h.handle_of(opendir_request{.path = "/"});
    CHECK(h.status_of(opendir_request{.path = "/"}) == failure);
    CHECK(h.logged_containing("process_opendir: too many open handles"));
    h.open("/f", fxf::read);
    h.open("/f", fxf::read);
    CHECK(h.status_of(open_request{.path = "/f", .pflags = fxf::read, .attributes = {}}) == failure);
    CHECK(h.logged("process_open: too many open handles (3)"));
    CHECK(h.status_of(close_request{.handle = d}) == ok);
    h.open("/f", fxf::read);
}

TEST_CASE("sftp server: the file system's permission checks become PERMISSION_DENIED")
{
    // As root nothing is denied, so the check runs in a child that became
    // nobody (or as the unprivileged user running the tests).
    sftp_temp_dir top;
    ::chmod(top.path().c_str(), 0755);
    top.write("/secret", "s");
    ::chmod(top.real("/secret").c_str(), 0600);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
            ::_exit(10);
        int error = 0;
        auto fs = rooted_filesystem::open_root(top.path(), error);
        if (!fs)
            ::_exit(11);
        fake_names names;
        std::vector<std::string> lines;
        server srv({}, *fs, names, [&](log_level, std::string_view m) { lines.emplace_back(m); });
        bytes in = init_request{}.encode();
        open_request{.id = 1, .path = "/new", .pflags = fxf::write | fxf::creat, .attributes = {}}.encode_to(in);
        open_request{.id = 2, .path = "/secret", .pflags = fxf::read, .attributes = {}}.encode_to(in);
        mkdir_request{.id = 3, .path = "/d", .attributes = {}}.encode_to(in);
        srv.feed(in);
        const byte_span out = srv.output();
        std::size_t pos = 0;
        int denied = 0;
        for (;;) {
            auto f = read_frame(out.subspan(pos), 1 << 20);
            if (f.status != errc::ok)
                break;
            auto r = decode_reply(f.packet);
            if (r && std::holds_alternative<status_reply>(*r) && std::get<status_reply>(*r).code == permission_denied)
                ++denied;
            pos += f.size();
        }
        ::_exit(denied == 3 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
