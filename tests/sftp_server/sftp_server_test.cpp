// The server core driven in memory: files, directories, paths and the
// extensions, with OpenSSH's replies and log lines.
#include "sshd/sftp/sftp_server.hpp"

#include "tests/sftp_server/sftp_server_harness.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::test;

namespace {

std::string data_of(const reply& r)
{
    REQUIRE(std::holds_alternative<data_reply>(r));
    const auto d = std::get<data_reply>(r).data;
    return std::string(d.begin(), d.end());
}

std::string name_of(const reply& r)
{
    if (auto* s = std::get_if<status_reply>(&r))
        FAIL("expected a name, got status " << s->code);
    REQUIRE(std::holds_alternative<name_reply>(r));
    REQUIRE(std::get<name_reply>(r).entries.size() == 1);
    return std::get<name_reply>(r).entries[0].filename;
}

attrs attrs_of(const reply& r)
{
    REQUIRE(std::holds_alternative<attrs_reply>(r));
    return std::get<attrs_reply>(r).attributes;
}

} // namespace

TEST_CASE("sftp server: INIT gets version 3, OpenSSH's extensions in its order, then check-file's, open-named and drain-at-eof")
{
    sftp_harness h({}, false);
    auto r = h.exchange(init_request{.version = 6}.encode());
    REQUIRE(r.size() == 1);
    const auto& v = std::get<version_reply>(r[0]);
    CHECK(v.version == 3);
    std::vector<std::string> names;
    for (const auto& e : v.extensions)
        names.push_back(e.name + "=" + e.data);
    CHECK(names == std::vector<std::string>{"posix-rename@openssh.com=1", "statvfs@openssh.com=2",
                                            "fstatvfs@openssh.com=2", "hardlink@openssh.com=1", "fsync@openssh.com=1",
                                            "lsetstat@openssh.com=1", "limits@openssh.com=1",
                                            "expand-path@openssh.com=1", "copy-data=1", "home-directory=1",
                                            "users-groups-by-id@openssh.com=1",
                                            "check-file-handle=sha256,sha384,sha512",
                                            "check-file-name=sha256,sha384,sha512",
                                            "open-named@longhaul-ssh.org=1", "drain-at-eof@longhaul-ssh.org=1"});
    CHECK(h.logged("session opened for local user tester from [192.0.2.1]"));
    CHECK(h.logged("received client version 6"));
}

TEST_CASE("sftp server: a version 2 client gets STATUS without message and language, as OpenSSH sends")
{
    sftp_harness h({}, false);
    h.exchange(init_request{.version = 2}.encode());
    h.out.clear();
    auto r = h.exchange(stat_request{.id = 5, .path = "/missing"}.encode());
    REQUIRE(r.size() == 1);
    CHECK(std::get<status_reply>(r[0]).code == no_such_file);
    CHECK(std::get<status_reply>(r[0]).message.empty());
    CHECK(h.out.size() == 4 + 9);
}

TEST_CASE("sftp server: a request before INIT ends the session as OpenSSH's fatal() does")
{
    sftp_harness h({}, false);
    auto r = h.exchange(stat_request{.id = 1, .path = "/"}.encode());
    CHECK(r.empty());
    CHECK(h.srv->finished());
    CHECK(h.srv->exit_status() == 255);
    CHECK(h.logged("Received 17 request before init"));
    CHECK(h.logged("session closed for local user tester from [192.0.2.1]"));
}

TEST_CASE("sftp server: write and read at offsets, log lines as OpenSSH's")
{
    sftp_harness h;
    const bytes f = h.open("/f", fxf::write | fxf::creat | fxf::trunc, 0644);
    CHECK(h.logged("open \"/f\" flags WRITE,CREATE,TRUNCATE mode 0644"));
    const std::string a(1000, 'a'), b(500, 'b');
    CHECK(h.status_of(write_request{.handle = f, .offset = 0, .data = as_bytes(a)}) == ok);
    CHECK(h.status_of(write_request{.handle = f, .offset = 2000, .data = as_bytes(b)}) == ok);
    CHECK(h.status_of(close_request{.handle = f}) == ok);
    CHECK(h.logged("close \"/f\" bytes read 0 written 1500"));
    const std::string content = h.dir.read("/f");
    REQUIRE(content.size() == 2500);
    CHECK(content.substr(0, 1000) == a);
    CHECK(content.substr(1000, 1000) == std::string(1000, '\0'));
    CHECK(content.substr(2000) == b);

    const bytes r = h.open("/f", fxf::read);
    CHECK(data_of(h.call(read_request{.handle = r, .offset = 990, .length = 20})) ==
          std::string(10, 'a') + std::string(10, '\0'));
    CHECK(data_of(h.call(read_request{.handle = r, .offset = 2490, .length = 100})) == std::string(10, 'b'));
    CHECK(h.status_of(read_request{.handle = r, .offset = 2500, .length = 100}) == eof);
    CHECK(data_of(h.call(read_request{.handle = r, .offset = 0, .length = 0})).empty()); // as OpenSSH: empty DATA
    // A write on a read-only handle: EBADF, which OpenSSH maps to "No such file".
    CHECK(h.status_of(write_request{.handle = r, .offset = 0, .data = as_bytes(a)}) == no_such_file);
    CHECK(h.logged_containing("process_write: write \"/f\": Bad file descriptor"));
    CHECK(h.status_of(close_request{.handle = r}) == ok);
    CHECK(h.logged("close \"/f\" bytes read 30 written 0"));
}

TEST_CASE("sftp server: large reads are served whole up to the limit and clamped beyond")
{
    sftp_harness h;
    std::string big(600 * 1024, '\0');
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<char>(i * 7 + i / 4096);
    h.dir.write("/big", big);
    const bytes r = h.open("/big", fxf::read);
    CHECK(data_of(h.call(read_request{.handle = r, .offset = 0, .length = 256 * 1024})) == big.substr(0, 256 * 1024));
    const std::string clamped = data_of(h.call(read_request{.handle = r, .offset = 1, .length = 1 << 20}));
    CHECK(clamped == big.substr(1, default_max_io_length));
    CHECK(h.logged("read change len 1048576 to 262144"));
    // Many reads in flight at once (a pipelining client): all answered in order.
    bytes burst;
    for (std::uint32_t i = 0; i < 36; ++i)
        read_request{.id = 1000 + i, .handle = r, .offset = i * 16384ull, .length = 16384}.encode_to(burst);
    h.out.clear();
    auto replies = h.exchange(burst);
    REQUIRE(replies.size() == 36);
    for (std::uint32_t i = 0; i < 36; ++i) {
        REQUIRE(std::holds_alternative<data_reply>(replies[i]));
        CHECK(std::get<data_reply>(replies[i]).id == 1000 + i);
        CHECK(data_of(replies[i]) == big.substr(i * 16384, 16384));
    }
}

TEST_CASE("sftp server: the output backlog stops input until it drains")
{
    sftp_harness h;
    h.dir.write("/big", std::string(256 * 1024, 'x'));
    const bytes r = h.open("/big", fxf::read);
    bytes burst;
    for (std::uint32_t i = 0; i < 30; ++i)
        read_request{.id = i + 1, .handle = r, .offset = 0, .length = 256 * 1024}.encode_to(burst);
    // Without draining the output, the core stops serving (the requests
    // wait in its bounded input buffer) and stops taking input.
    const std::size_t taken = h.srv->feed(burst);
    CHECK(taken == burst.size());
    CHECK(h.srv->input_space().empty());
    const std::size_t backlog = h.srv->output().size();
    CHECK(backlog >= 1024 * 1024);
    CHECK(backlog < 1024 * 1024 + 300 * 1024);
    h.srv->process();
    CHECK(h.srv->output().size() == backlog);
    // Draining lets it go on; every read is answered.
    h.out.clear();
    auto rest = h.exchange({});
    CHECK(rest.size() == 30);
}

TEST_CASE("sftp server: directory listing with OpenSSH's long names")
{
    sftp_harness h;
    ::mkdir(h.dir.real("/d").c_str(), 0755);
    h.dir.write("/d/file", "12345");
    ::chmod(h.dir.real("/d/file").c_str(), 0640);
    ::mkdir(h.dir.real("/d/sub").c_str(), 0700);
    ::symlink("file", h.dir.real("/d/link").c_str());
    const struct timespec t[2] = {{1699990000, 0}, {1699990000, 0}}; // within six months of the fake clock
    ::utimensat(AT_FDCWD, h.dir.real("/d/file").c_str(), t, 0);
    const bytes d = h.handle_of(opendir_request{.path = "/d"});
    CHECK(h.logged("opendir \"/d\""));
    std::map<std::string, name_entry> seen;
    for (int i = 0; i < 10; ++i) {
        auto r = h.call(readdir_request{.handle = d});
        if (auto* s = std::get_if<status_reply>(&r)) {
            CHECK(s->code == eof);
            break;
        }
        for (const auto& e : std::get<name_reply>(r).entries)
            seen[e.filename] = e;
    }
    std::set<std::string> names;
    for (const auto& [n, e] : seen)
        names.insert(n);
    CHECK(names == std::set<std::string>{".", "..", "file", "link", "sub"});
    const auto& f = seen["file"];
    CHECK(f.attributes.size == 5);
    CHECK((f.attributes.permissions & 07777) == 0640);
    CHECK(S_ISREG(f.attributes.permissions));
    CHECK(f.attributes.flags == (attr::size | attr::uidgid | attr::permissions | attr::acmodtime));
    // "-rw-r-----    1 root     root            5 Nov 14 ..:.. file" (owner as the fake name service says).
    CHECK(f.longname.substr(0, 15) == "-rw-r-----    1");
    CHECK(f.longname.find(" 5 Nov 14 ") != std::string::npos);
    CHECK(f.longname.substr(f.longname.size() - 5) == " file");
    CHECK(seen["link"].longname.substr(0, 10) == "lrwxrwxrwx");
    CHECK(seen["sub"].longname.substr(0, 10) == "drwx------");
    CHECK(S_ISLNK(seen["link"].attributes.permissions)); // lstat, never followed
    CHECK(h.status_of(close_request{.handle = d}) == ok);
    CHECK(h.logged("closedir \"/d\""));
    // A file handle is no directory handle and the reverse.
    const bytes fh = h.open("/d/file", fxf::read);
    CHECK(h.status_of(readdir_request{.handle = fh}) == failure);
    CHECK(h.status_of(opendir_request{.path = "/d/file"}) == no_such_file); // ENOTDIR
    CHECK(h.status_of(opendir_request{.path = "/missing"}) == no_such_file);
}

TEST_CASE("sftp server: stat, lstat, fstat, setstat, fsetstat, lsetstat")
{
    sftp_harness h;
    h.dir.write("/f", "abc");
    ::symlink("f", h.dir.real("/l").c_str());
    CHECK(attrs_of(h.call(stat_request{.path = "/l"})).size == 3);
    CHECK(S_ISLNK(attrs_of(h.call(lstat_request{.path = "/l"})).permissions));
    CHECK(h.logged("lstat name \"/l\""));
    CHECK(h.status_of(stat_request{.path = "/nope"}) == no_such_file);

    attrs a;
    a.flags = attr::size | attr::permissions | attr::acmodtime;
    a.size = 10;
    a.permissions = 0600;
    a.atime = 1000000000;
    a.mtime = 1000000000;
    CHECK(h.status_of(setstat_request{.path = "/f", .attributes = a}) == ok);
    struct stat st {};
    REQUIRE(::stat(h.dir.real("/f").c_str(), &st) == 0);
    CHECK(st.st_size == 10);
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(st.st_mtime == 1000000000);
    CHECK(h.logged("set \"/f\" size 10"));
    CHECK(h.logged("set \"/f\" mode 0600"));

    const bytes fh = h.open("/f", fxf::read | fxf::write);
    attrs b;
    b.flags = attr::size | attr::permissions;
    b.size = 2;
    b.permissions = 0604;
    CHECK(h.status_of(fsetstat_request{.handle = fh, .attributes = b}) == ok);
    const attrs got = attrs_of(h.call(fstat_request{.handle = fh}));
    CHECK(got.size == 2);
    CHECK((got.permissions & 07777) == 0604);

    // lsetstat: size makes no sense for a link; times apply to the link itself.
    attrs c;
    c.flags = attr::size;
    CHECK(h.status_of(lsetstat_request{.path = "/l", .attributes = c}) == bad_message);
    attrs t;
    t.flags = attr::acmodtime;
    t.atime = t.mtime = 1234567890;
    CHECK(h.status_of(lsetstat_request{.path = "/l", .attributes = t}) == ok);
    REQUIRE(::lstat(h.dir.real("/l").c_str(), &st) == 0);
    CHECK(st.st_mtime == 1234567890);
    REQUIRE(::stat(h.dir.real("/f").c_str(), &st) == 0);
    CHECK(st.st_mtime != 1234567890);
}

TEST_CASE("sftp server: remove, mkdir, rmdir, rename and posix-rename")
{
    sftp_harness h;
    attrs m;
    m.flags = attr::permissions;
    m.permissions = 0750;
    CHECK(h.status_of(mkdir_request{.path = "/dir", .attributes = m}) == ok);
    CHECK(h.logged("mkdir name \"/dir\" mode 0750"));
    CHECK(h.status_of(mkdir_request{.path = "/dir", .attributes = {}}) == failure); // EEXIST
    h.dir.write("/dir/a", "A");
    h.dir.write("/b", "B");
    CHECK(h.status_of(rmdir_request{.path = "/dir"}) == failure); // ENOTEMPTY
    // RENAME never replaces (draft-02); posix-rename does.
    CHECK(h.status_of(rename_request{.old_path = "/dir/a", .new_path = "/b"}) == failure);
    CHECK(h.logged("rename old \"/dir/a\" new \"/b\""));
    CHECK(h.dir.read("/b") == "B");
    CHECK(h.status_of(rename_request{.old_path = "/dir/a", .new_path = "/c"}) == ok);
    CHECK(h.dir.read("/c") == "A");
    CHECK(h.status_of(rename_request{.old_path = "/dir", .new_path = "/dir2"}) == ok); // a directory: plain rename
    CHECK(h.status_of(posix_rename_request{.old_path = "/c", .new_path = "/b"}) == ok);
    CHECK(h.logged("posix-rename old \"/c\" new \"/b\""));
    CHECK(h.dir.read("/b") == "A");
    CHECK(h.status_of(rename_request{.old_path = "/missing", .new_path = "/x"}) == no_such_file);
    CHECK(h.status_of(remove_request{.path = "/b"}) == ok);
    CHECK(h.logged("remove name \"/b\""));
    CHECK(h.status_of(remove_request{.path = "/b"}) == no_such_file);
    CHECK(h.status_of(rmdir_request{.path = "/dir2"}) == ok);
    CHECK(h.logged("rmdir name \"/dir2\""));
}

TEST_CASE("sftp server: symlink (OpenSSH's argument order), readlink, hardlink, realpath")
{
    sftp_harness h;
    ::mkdir(h.dir.real("/a").c_str(), 0755);
    h.dir.write("/a/t", "T");
    CHECK(h.status_of(symlink_request{.target_path = "a/t", .link_path = "/s"}) == ok);
    CHECK(h.logged("symlink old \"a/t\" new \"/s\""));
    CHECK(name_of(h.call(readlink_request{.path = "/s"})) == "a/t");
    CHECK(h.status_of(readlink_request{.path = "/a/t"}) == bad_message); // EINVAL: not a link
    CHECK(h.status_of(symlink_request{.target_path = "x", .link_path = "/s"}) == failure); // exists
    CHECK(h.status_of(hardlink_request{.old_path = "/a/t", .new_path = "/h"}) == ok);
    CHECK(h.dir.read("/h") == "T");

    CHECK(name_of(h.call(realpath_request{.path = ""})) == "/");
    CHECK(name_of(h.call(realpath_request{.path = "."})) == "/");
    CHECK(name_of(h.call(realpath_request{.path = "/a/../a/./t"})) == "/a/t");
    CHECK(name_of(h.call(realpath_request{.path = "/s"})) == "/a/t");
    CHECK(name_of(h.call(realpath_request{.path = "/a/new-file"})) == "/a/new-file"); // may not exist yet
    CHECK(h.status_of(realpath_request{.path = "/missing/x"}) == no_such_file);
    CHECK(name_of(h.call(realpath_request{.path = "/.."})) == "/");
    CHECK(h.logged("realpath \"/s\""));
    // A symlink loop.
    ::symlink("loop2", h.dir.real("/loop1").c_str());
    ::symlink("loop1", h.dir.real("/loop2").c_str());
    CHECK(h.status_of(realpath_request{.path = "/loop1/x"}) == no_such_file); // ELOOP
}

TEST_CASE("sftp server: statvfs, fstatvfs, limits and fsync")
{
    server_options o;
    o.max_handles = 777;
    sftp_harness h(o);
    h.dir.write("/f", "x");
    auto r = h.call(statvfs_request{.path = "/"});
    REQUIRE(std::holds_alternative<extended_reply>(r));
    auto s = statvfs_reply::decode(byte_span(h.out).subspan(5));
    REQUIRE(s);
    CHECK(s->namemax > 0);
    CHECK(s->bsize > 0);
    CHECK(h.logged("statvfs \"/\""));
    const bytes f = h.open("/f", fxf::read);
    REQUIRE(std::holds_alternative<extended_reply>(h.call(fstatvfs_request{.handle = f})));
    CHECK(h.status_of(statvfs_request{.path = "/missing"}) == no_such_file);

    REQUIRE(std::holds_alternative<extended_reply>(h.call(limits_request{})));
    auto l = limits_reply::decode(byte_span(h.out).subspan(5));
    REQUIRE(l);
    CHECK(l->max_packet_length == default_max_packet_length);
    CHECK(l->max_read_length == 256 * 1024);
    CHECK(l->max_write_length == 256 * 1024);
    CHECK(l->max_open_handles == 777);

    CHECK(h.status_of(fsync_request{.handle = f}) == ok);
    CHECK(h.logged("fsync \"/f\""));
    CHECK(h.status_of(fsync_request{.handle = bytes{1, 2}}) == no_such_file);
}

TEST_CASE("sftp server: expand-path, home-directory, users-groups-by-id")
{
    sftp_harness h;
    ::mkdir(h.dir.real("/home").c_str(), 0755);
    ::mkdir(h.dir.real("/home/alice").c_str(), 0755);
    CHECK(name_of(h.call(expand_path_request{.path = "~"})) == "/");
    CHECK(name_of(h.call(expand_path_request{.path = "~/home"})) == "/home");
    CHECK(name_of(h.call(expand_path_request{.path = "~alice/x"})) == "/home/alice/x");
    CHECK(name_of(h.call(expand_path_request{.path = "home/alice/.."})) == "/home");
    auto r = h.call(expand_path_request{.path = "~nobody/x"});
    REQUIRE(std::holds_alternative<status_reply>(r));
    CHECK(std::get<status_reply>(r).code == no_such_file);
    CHECK(std::get<status_reply>(r).message == "no such user");
    CHECK(h.logged("tilde_expand: No such user nobody"));

    CHECK(name_of(h.call(home_directory_request{.username = ""})) == "/");
    CHECK(name_of(h.call(home_directory_request{.username = "alice"})) == "/home/alice");
    CHECK(h.status_of(home_directory_request{.username = "nobody"}) == failure);

    REQUIRE(std::holds_alternative<extended_reply>(
        h.call(users_groups_by_id_request{.uids = {{0, 1000, 4242}}, .gids = {{100, 7}}})));
    auto u = users_groups_by_id_reply::decode(byte_span(h.out).subspan(5));
    REQUIRE(u);
    CHECK(u->users.names == std::vector<std::string>{"root", "alice", ""});
    CHECK(u->groups.names == std::vector<std::string>{"staff", ""});
    CHECK(h.logged("users-groups-by-id: 3 users, 2 groups"));
}

TEST_CASE("sftp server: copy-data")
{
    sftp_harness h;
    std::string src(300000, '\0');
    for (std::size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<char>(i % 251);
    h.dir.write("/src", src);
    const bytes r = h.open("/src", fxf::read);
    const bytes w = h.open("/dst", fxf::write | fxf::creat | fxf::trunc);
    CHECK(h.status_of(copy_data_request{.read_handle = r, .read_offset = 0, .read_length = 0, .write_handle = w,
                                        .write_offset = 0}) == ok);
    CHECK(h.dir.read("/dst") == src);
    CHECK(h.status_of(copy_data_request{.read_handle = r, .read_offset = 10, .read_length = 5, .write_handle = w,
                                        .write_offset = 0}) == ok);
    CHECK(h.dir.read("/dst").substr(0, 5) == src.substr(10, 5));
    // Past the end with a length: OpenSSH copies in 64 KiB chunks and says
    // EOF only when the end came before the last chunk.
    CHECK(h.status_of(copy_data_request{.read_handle = r, .read_offset = 299990, .read_length = 100,
                                        .write_handle = w, .write_offset = 0}) == ok);
    CHECK(h.status_of(copy_data_request{.read_handle = r, .read_offset = 200000, .read_length = 200000,
                                        .write_handle = w, .write_offset = 0}) == eof);
    CHECK(h.status_of(copy_data_request{.read_handle = r, .read_offset = 200000, .read_length = 131072,
                                        .write_handle = w, .write_offset = 0}) == ok);
    // Onto itself: refused.
    CHECK(h.status_of(copy_data_request{.read_handle = r, .read_offset = 0, .read_length = 0, .write_handle = r,
                                        .write_offset = 0}) == failure);
    CHECK(h.status_of(copy_data_request{.read_handle = bytes{9}, .read_offset = 0, .read_length = 0,
                                        .write_handle = w, .write_offset = 0}) == failure);
}

TEST_CASE("sftp server: append mode writes at the end whatever the offset")
{
    sftp_harness h;
    h.dir.write("/log", "start;");
    const bytes a = h.open("/log", fxf::write | fxf::append);
    CHECK(h.logged("open \"/log\" flags WRITE,APPEND mode 0644"));
    CHECK(h.status_of(write_request{.handle = a, .offset = 0, .data = as_bytes(std::string_view("more"))}) == ok);
    CHECK(h.dir.read("/log") == "start;more");
}

TEST_CASE("sftp server: the umask applies to created files and directories")
{
    const mode_t old = ::umask(027);
    {
        sftp_harness h;
        const bytes f = h.open("/u", fxf::write | fxf::creat, 0666);
        CHECK(h.status_of(close_request{.handle = f}) == ok);
        CHECK(h.status_of(mkdir_request{.path = "/ud", .attributes = {}}) == ok);
        struct stat st {};
        REQUIRE(::stat(h.dir.real("/u").c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0640);
        REQUIRE(::stat(h.dir.real("/ud").c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0750);
    }
    ::umask(old);
}

TEST_CASE("sftp server: EOF closes open handles with OpenSSH's forced lines")
{
    sftp_harness h;
    h.dir.write("/f", "x");
    const bytes f = h.open("/f", fxf::read);
    const bytes d = h.handle_of(opendir_request{.path = "/"});
    CHECK(h.srv->open_handles() == 2);
    h.srv->input_eof();
    CHECK(h.srv->finished());
    CHECK(h.srv->exit_status() == 0);
    CHECK(h.srv->open_handles() == 0);
    CHECK(h.logged("forced close \"/f\" bytes read 0 written 0"));
    CHECK(h.logged("forced closedir \"/\""));
    CHECK(h.logged("session closed for local user tester from [192.0.2.1]"));
}

TEST_CASE("sftp server: requests split at every byte give the same replies")
{
    bytes script;
    open_request{.id = 1, .path = "/g", .pflags = fxf::write | fxf::creat, .attributes = {}}.encode_to(script);
    stat_request{.id = 2, .path = "/"}.encode_to(script);
    realpath_request{.id = 3, .path = "."}.encode_to(script);
    limits_request{.id = 4}.encode_to(script);
    extended_request{.id = 5, .name = "nope@example", .data = {}}.encode_to(script);

    bytes whole;
    {
        sftp_harness h;
        h.out.clear();
        h.exchange(script);
        whole = h.out;
    }
    REQUIRE_FALSE(whole.empty());
    for (std::size_t split = 1; split < script.size(); split += 3) {
        sftp_harness h;
        h.out.clear();
        h.exchange(byte_span(script).first(split));
        h.exchange(byte_span(script).subspan(split));
        // The handle and attribute bytes differ between runs only where
        // the file's times do: compare the reply types and ids.
        REQUIRE(h.out.size() == whole.size());
    }
}

TEST_CASE("sftp server: every request before the end of its input is answered before the session ends")
{
    // drain-at-eof@longhaul-ssh.org, announced in VERSION: a client may end
    // its input right behind requests it needs answered (scp's last
    // upload: its WRITEs and CLOSE). Here the output backs up (nothing is
    // written out while the input arrives), so when the end comes, requests
    // are still queued behind the replies.
    sftp_harness h;
    std::string content(2 * 1024 * 1024, '\0');
    for (std::size_t i = 0; i < content.size(); ++i)
        content[i] = static_cast<char>((i * 131 + i / 4093) & 0xff);
    h.dir.write("/big", content);
    const bytes f = h.open("/big", fxf::read);
    h.out.clear();
    bytes script;
    constexpr std::uint32_t reads = 64, chunk = 32 * 1024;
    for (std::uint32_t i = 0; i < reads; ++i)
        read_request{.id = i + 1, .handle = f, .offset = std::uint64_t(i) * chunk, .length = chunk}.encode_to(script);
    close_request{.id = reads + 1, .handle = f}.encode_to(script);
    std::size_t done = 0;
    while (done < script.size()) {
        const std::size_t n = h.srv->feed(byte_span(script).subspan(done));
        done += n;
        if (n == 0)
            h.drain(); // only what it takes to accept the rest of the input
    }
    h.srv->input_eof();
    CHECK_FALSE(h.srv->finished()); // requests still queued behind the output
    for (int turns = 0; !h.srv->output().empty() && turns < 1000; ++turns) {
        h.drain();
        h.srv->process();
    }
    CHECK(h.srv->finished());
    const auto replies = h.decode_output();
    REQUIRE(replies.size() == reads + 1);
    std::string got;
    for (std::uint32_t i = 0; i < reads; ++i) {
        const auto* d = std::get_if<data_reply>(&replies[i]);
        REQUIRE(d != nullptr);
        CHECK(d->id == i + 1);
        got.append(reinterpret_cast<const char*>(d->data.data()), d->data.size());
    }
    CHECK(got == content);
    const auto* closed = std::get_if<status_reply>(&replies[reads]);
    REQUIRE(closed != nullptr);
    CHECK(closed->code == std::uint32_t(status_code::ok));
    CHECK(h.srv->open_handles() == 0);
}

TEST_CASE("sftp server: VERSION announces that requests before the end of the input are answered")
{
    sftp_harness h(sftp::server_options{}, false);
    const auto r = h.exchange(init_request{}.encode());
    REQUIRE(r.size() == 1);
    const auto* v = std::get_if<version_reply>(&r[0]);
    REQUIRE(v != nullptr);
    REQUIRE(v->find(ext::drain_at_eof) != nullptr);
    CHECK(*v->find(ext::drain_at_eof) == "1");
}
