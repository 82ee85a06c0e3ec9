// sftp_probe: runs one SFTP server program on pipes (as sshd would) in a
// scratch directory, sends it a fixed script of requests one at a time,
// and prints every reply as a line of text with handles named h1, h2...
// and times left out. regress/sftp_server_interop.sh runs it against
// Debian's sftp-server and Longhaul's and diffs the two transcripts, so
// every status code and message, every attribute the tests look at and
// the order of extensions are compared side by side.
//
//   sftp_probe DIR -- SERVER [ARGS...]     (server stderr passes through)
#include "common/sftp/sftp_framing.hpp"
#include "common/sftp/sftp_replies.hpp"
#include "common/sftp/sftp_requests.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace longhaul;
using namespace longhaul::sftp;

namespace {

class probe {
public:
    probe(int to, int from) : to_(to), from_(from) {}

    // Sends one packet and returns the reply packet (type first), or empty
    // when none came within the timeout.
    bytes exchange(const bytes& packet)
    {
        for (std::size_t done = 0; done < packet.size();) {
            const ssize_t n = ::write(to_, packet.data() + done, packet.size() - done);
            if (n <= 0)
                return {};
            done += static_cast<std::size_t>(n);
        }
        for (;;) {
            const frame f = read_frame(in_, 1 << 24);
            if (f.status == errc::ok) {
                bytes out(f.packet.begin(), f.packet.end());
                in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(f.size()));
                return out;
            }
            struct pollfd p {from_, POLLIN, 0};
            if (::poll(&p, 1, 3000) <= 0)
                return {};
            std::uint8_t buf[65536];
            const ssize_t n = ::read(from_, buf, sizeof buf);
            if (n <= 0)
                return {};
            in_.insert(in_.end(), buf, buf + n);
        }
    }

    // Every HANDLE reply gets the next name (servers reuse handle bytes
    // after a close, so bytes cannot be the key).
    std::string name(const bytes& h)
    {
        handles_.push_back(h);
        return "h" + std::to_string(handles_.size());
    }
    bytes handle(const std::string& n) const
    {
        const std::size_t i = std::stoul(n.substr(1));
        if (i >= 1 && i <= handles_.size())
            return handles_[i - 1];
        return {0xde, 0xad};
    }

private:
    int to_, from_;
    bytes in_;
    std::vector<bytes> handles_;
};

std::string attrs_text(const attrs& a)
{
    char buf[128];
    std::string s = "flags=" + std::to_string(a.flags);
    if (a.has(attr::size)) {
        // Directory sizes depend on the file system's history: only files'.
        if (!S_ISDIR(a.permissions))
            s += " size=" + std::to_string(a.size);
    }
    if (a.has(attr::permissions)) {
        std::snprintf(buf, sizeof buf, " mode=%o", a.permissions);
        s += buf;
    }
    return s;
}

std::string show(probe& p, const bytes& packet, bool sorted_names = false)
{
    if (packet.empty())
        return "(no reply)";
    auto r = decode_reply(packet);
    if (!r)
        return "(undecodable reply: " + std::string(to_string(r.error())) + ")";
    if (auto* v = std::get_if<version_reply>(&*r)) {
        std::string s = "VERSION " + std::to_string(v->version);
        for (const auto& e : v->extensions)
            s += " " + e.name + "=" + e.data;
        return s;
    }
    if (auto* s = std::get_if<status_reply>(&*r))
        return "STATUS " + std::to_string(s->code) + " \"" + s->message + "\"";
    if (auto* h = std::get_if<handle_reply>(&*r))
        return "HANDLE " + p.name(h->handle);
    if (auto* d = std::get_if<data_reply>(&*r))
        return "DATA " + std::to_string(d->data.size()) + " \"" + std::string(d->data.begin(), d->data.end()).substr(0, 40) + "\"";
    if (auto* n = std::get_if<name_reply>(&*r)) {
        std::vector<std::string> items;
        for (const auto& e : n->entries)
            items.push_back(e.filename + (sorted_names ? " (" + attrs_text(e.attributes) + ")" : ""));
        if (sorted_names)
            std::sort(items.begin(), items.end());
        std::string s = "NAME";
        for (const auto& i : items)
            s += " [" + i + "]";
        return s;
    }
    if (auto* a = std::get_if<attrs_reply>(&*r))
        return "ATTRS " + attrs_text(a->attributes);
    if (auto* e = std::get_if<extended_reply>(&*r))
        return "EXTENDED_REPLY " + std::to_string(e->data.size()) + " bytes";
    return "?";
}

attrs mode_attrs(std::uint32_t mode)
{
    attrs a;
    a.flags = attr::permissions;
    a.permissions = mode;
    return a;
}

void run_script(probe& p)
{
    std::uint32_t id = 0;
    const auto say = [](const std::string& what, const std::string& reply) {
        std::printf("%-44s -> %s\n", what.c_str(), reply.c_str());
        std::fflush(stdout);
    };
    const auto req = [&](const std::string& what, auto m) {
        m.id = ++id;
        say(what, show(p, p.exchange(m.encode())));
    };
    say("INIT 3", show(p, p.exchange(init_request{}.encode())));
    req("REALPATH \"\"", realpath_request{.path = ""});
    req("STAT missing", stat_request{.path = "missing"});
    req("LSTAT missing/x", lstat_request{.path = "missing/x"});
    req("OPEN f WRITE|CREAT|TRUNC 0644",
        open_request{.path = "f", .pflags = fxf::write | fxf::creat | fxf::trunc, .attributes = mode_attrs(0644)});
    const std::string hello = "hello, world";
    req("WRITE h1 0 hello", write_request{.handle = p.handle("h1"), .offset = 0, .data = as_bytes(hello)});
    req("READ h1 (write-only handle)", read_request{.handle = p.handle("h1"), .offset = 0, .length = 5});
    req("FSTAT h1", fstat_request{.handle = p.handle("h1")});
    req("CLOSE h1", close_request{.handle = p.handle("h1")});
    req("CLOSE h1 again", close_request{.handle = p.handle("h1")});
    req("OPEN f READ", open_request{.path = "f", .pflags = fxf::read, .attributes = {}});
    req("READ h2 7 100", read_request{.handle = p.handle("h2"), .offset = 7, .length = 100});
    req("READ h2 0 0", read_request{.handle = p.handle("h2"), .offset = 0, .length = 0});
    req("READ h2 past the end", read_request{.handle = p.handle("h2"), .offset = 1000, .length = 10});
    req("WRITE h2 (read-only handle)", write_request{.handle = p.handle("h2"), .offset = 0, .data = as_bytes(hello)});
    req("READ bad handle", read_request{.handle = {1, 2, 3, 4}, .offset = 0, .length = 10});
    req("FSYNC h2", fsync_request{.handle = p.handle("h2")});
    req("FSYNC bad handle", fsync_request{.handle = {9}});
    req("FSTATVFS h2", fstatvfs_request{.handle = p.handle("h2")});
    req("CLOSE h2", close_request{.handle = p.handle("h2")});
    req("OPEN missing READ", open_request{.path = "missing", .pflags = fxf::read, .attributes = {}});
    req("OPEN f WRITE|CREAT|EXCL", open_request{.path = "f", .pflags = fxf::write | fxf::creat | fxf::excl, .attributes = {}});
    req("OPEN . WRITE (a directory)", open_request{.path = ".", .pflags = fxf::write, .attributes = {}});
    req("MKDIR d 0750", mkdir_request{.path = "d", .attributes = mode_attrs(0750)});
    req("MKDIR d again", mkdir_request{.path = "d", .attributes = {}});
    req("STAT d", stat_request{.path = "d"});
    req("SETSTAT f mode 0600", setstat_request{.path = "f", .attributes = mode_attrs(0600)});
    req("STAT f", stat_request{.path = "f"});
    attrs size;
    size.flags = attr::size;
    size.size = 5;
    req("SETSTAT f size 5", setstat_request{.path = "f", .attributes = size});
    req("SETSTAT missing mode", setstat_request{.path = "missing", .attributes = mode_attrs(0600)});
    req("SYMLINK f <- l", symlink_request{.target_path = "f", .link_path = "l"});
    req("SYMLINK again", symlink_request{.target_path = "f", .link_path = "l"});
    req("READLINK l", readlink_request{.path = "l"});
    req("READLINK f (not a link)", readlink_request{.path = "f"});
    req("LSTAT l", lstat_request{.path = "l"});
    req("STAT l", stat_request{.path = "l"});
    req("HARDLINK f -> hard", hardlink_request{.old_path = "f", .new_path = "hard"});
    req("RENAME hard -> f (exists)", rename_request{.old_path = "hard", .new_path = "f"});
    req("RENAME hard -> g", rename_request{.old_path = "hard", .new_path = "g"});
    req("RENAME missing -> x", rename_request{.old_path = "missing", .new_path = "x"});
    req("POSIX-RENAME g -> f", posix_rename_request{.old_path = "g", .new_path = "f"});
    req("REALPATH d/../l", realpath_request{.path = "d/../l"});
    req("REALPATH d/new", realpath_request{.path = "d/new"});
    req("REALPATH missing/x", realpath_request{.path = "missing/x"});
    req("OPENDIR .", opendir_request{.path = "."});
    {
        std::string listing;
        std::vector<std::string> all;
        for (int i = 0; i < 100; ++i) {
            bytes r = p.exchange(readdir_request{.id = ++id, .handle = p.handle("h3")}.encode());
            const std::string s = show(p, r, true);
            if (s.rfind("NAME", 0) != 0) {
                listing = s;
                break;
            }
            all.push_back(s.substr(5));
        }
        std::sort(all.begin(), all.end());
        std::string names;
        for (const auto& a : all)
            names += a + " ";
        say("READDIR h3 until EOF", names + "then " + listing);
    }
    req("CLOSE h3", close_request{.handle = p.handle("h3")});
    req("OPENDIR f (a file)", opendir_request{.path = "f"});
    req("OPENDIR missing", opendir_request{.path = "missing"});
    req("RMDIR d", rmdir_request{.path = "d"});
    req("RMDIR d again", rmdir_request{.path = "d"});
    req("REMOVE l", remove_request{.path = "l"});
    req("REMOVE l again", remove_request{.path = "l"});
    req("STATVFS .", statvfs_request{.path = "."});
    req("STATVFS missing", statvfs_request{.path = "missing"});
    req("LSETSTAT f size (nonsense)", lsetstat_request{.path = "f", .attributes = size});
    req("LSETSTAT f mode 0640", lsetstat_request{.path = "f", .attributes = mode_attrs(0640)});
    req("EXPAND-PATH missing/../f", expand_path_request{.path = "missing/../f"});
    req("EXPAND-PATH ~nosuchuser", expand_path_request{.path = "~nosuchuser-lh/x"});
    req("HOME-DIRECTORY nosuchuser", home_directory_request{.username = "nosuchuser-lh"});
    req("OPEN f READ", open_request{.path = "f", .pflags = fxf::read, .attributes = {}});
    req("OPEN c WRITE|CREAT", open_request{.path = "c", .pflags = fxf::write | fxf::creat, .attributes = {}});
    req("COPY-DATA h4 -> h5", copy_data_request{.read_handle = p.handle("h4"), .read_offset = 1, .read_length = 0,
                                               .write_handle = p.handle("h5"), .write_offset = 0});
    req("COPY-DATA h4 -> h4", copy_data_request{.read_handle = p.handle("h4"), .read_offset = 0, .read_length = 0,
                                               .write_handle = p.handle("h4"), .write_offset = 0});
    req("COPY-DATA past the end", copy_data_request{.read_handle = p.handle("h4"), .read_offset = 100,
                                                   .read_length = 5, .write_handle = p.handle("h5"),
                                                   .write_offset = 0});
    req("CLOSE h5", close_request{.handle = p.handle("h5")});
    req("OPEN c READ", open_request{.path = "c", .pflags = fxf::read, .attributes = {}});
    req("READ h6 0 100", read_request{.handle = p.handle("h6"), .offset = 0, .length = 100});
    req("unknown extension", extended_request{.name = "nope@example.com", .data = {}});
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 4 || std::strcmp(argv[2], "--") != 0) {
        std::fprintf(stderr, "usage: sftp_probe DIR -- SERVER [ARGS...]\n");
        return 2;
    }
    int to[2], from[2];
    if (::pipe(to) != 0 || ::pipe(from) != 0)
        return 2;
    const pid_t pid = ::fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        if (::chdir(argv[1]) != 0)
            ::_exit(126);
        ::dup2(to[0], 0);
        ::dup2(from[1], 1);
        ::close(to[0]);
        ::close(to[1]);
        ::close(from[0]);
        ::close(from[1]);
        ::execv(argv[3], argv + 3);
        ::_exit(127);
    }
    ::close(to[0]);
    ::close(from[1]);
    probe p(to[1], from[0]);
    run_script(p);
    ::close(to[1]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::printf("server exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
