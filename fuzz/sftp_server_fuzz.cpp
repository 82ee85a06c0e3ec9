// Fuzzes the SFTP server core (sshd/sftp) with hostile request streams,
// on a real file system confined to a temporary directory
// (rooted_filesystem: openat2 RESOLVE_IN_ROOT), reset for every input to a
// small fixture: /f (a file), /d/g, /e (an empty directory), /l -> f.
//
// Input: byte 0 = settings
//   bit 0     raw mode: the rest is the client's byte stream as is (the
//             framing layer sees whatever lengths the fuzzer wrote);
//             otherwise a message sequence (fuzz_seeds.hpp encoding), each
//             message sent as one packet with its length prepended
//   bit 1     no INIT first (requests before INIT end the session)
//   bit 2     read-only (-R)
//   bit 3     -P denies remove,rename,read; bit 4: -p allows only
//             open,close,write,stat,readdir,opendir,realpath,limits
//   bit 5     tight limits: 4 handles (2 directories), 4 KiB reads,
//             1 KiB packets
//   bits 6-7  feed pattern: all at once, 1 byte, 7 bytes, 300 bytes at a time
// Invariants: nothing crashes; every byte the server writes is a well-formed
// reply within the packet limit (decoded with the client side of the codec);
// after EOF the session is over with every handle closed and no descriptor
// leaked; nothing outside the root changes (a canary beside it).
// File sizes are capped (RLIMIT_FSIZE) so a SETSTAT size cannot make
// copy-data or READ work through terabytes.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "fuzz/fuzz_files.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include "common/sftp/sftp_framing.hpp"
#include "common/sftp/sftp_replies.hpp"
#include "common/sftp/sftp_requests.hpp"
#include "sshd/sftp/rooted_fs.hpp"
#include "sshd/sftp/sftp_server.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::fuzz;

namespace {

class fixed_names final : public name_service {
public:
    std::optional<std::string> user_name(uid_t uid) override
    {
        return uid == 0 ? std::optional<std::string>("root") : std::nullopt;
    }
    std::optional<std::string> group_name(gid_t gid) override
    {
        return gid == 0 ? std::optional<std::string>("root") : std::nullopt;
    }
    std::optional<std::string> home_directory(const std::string& user) override
    {
        return user == "root" ? std::optional<std::string>("/d") : std::nullopt;
    }
};

// The fuzzing session's directories: root (served) and a canary beside it.
struct arena {
    std::string top, root, canary;
};

arena* the_arena = nullptr; // set once by LLVMFuzzerInitialize

void reset_root(const arena& a)
{
    ::chmod(a.root.c_str(), 0755);
    const int fd = ::open(a.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        std::abort();
    empty_directory(fd);
    const auto file = [fd](const char* name, const char* text) {
        const int f = ::openat(fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (f >= 0) {
            (void)!::write(f, text, std::strlen(text));
            ::close(f);
        }
    };
    file("f", "0123456789abcdef0123456789abcdef");
    ::mkdirat(fd, "d", 0755);
    file("d/g", "g");
    ::mkdirat(fd, "e", 0755);
    ::symlinkat("f", fd, "l");
    ::close(fd);
}

int open_descriptors()
{
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d) != nullptr)
            ++n;
        ::closedir(d);
    }
    return n;
}

std::string read_all(const std::string& path)
{
    std::string s;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        char buf[256];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
            s.append(buf, n);
        std::fclose(f);
    }
    return s;
}

// Every complete packet the server wrote must decode as a reply.
void check_output(bytes& pending, std::uint32_t max_packet)
{
    std::size_t pos = 0;
    for (;;) {
        const frame f = read_frame(byte_span(pending).subspan(pos), max_packet + 64);
        if (f.status == errc::incomplete)
            break;
        if (f.status != errc::ok)
            std::abort(); // a reply the client would refuse
        if (!decode_reply(f.packet))
            std::abort();
        pos += f.size();
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(pos));
}

bytes packet(const bytes& body)
{
    bytes p;
    wire_writer(p).string(byte_span(body));
    return p;
}

// ---------------------------------------------------------------- seeds

// A request's packet without its length (a message of the sequence).
template <class M>
bytes body(const M& m)
{
    bytes p = m.encode();
    return bytes(p.begin() + 4, p.end());
}

attrs mode(std::uint32_t m)
{
    attrs a;
    a.flags = attr::permissions;
    a.permissions = m;
    return a;
}

void write_seeds(const std::string& dir)
{
    // Handles of this server are (index, generation): the first open gets
    // index 0, generation 1.
    const bytes h0 = {0, 0, 0, 0, 0, 0, 0, 1};
    const bytes h1 = {0, 0, 0, 1, 0, 0, 0, 1};
    const std::string data = "written by the fuzzer";
    attrs all;
    all.flags = attr::size | attr::uidgid | attr::permissions | attr::acmodtime | attr::extended;
    all.size = 3;
    all.permissions = 0600;
    all.atime = all.mtime = 1000000000;
    all.extended = {{"x@y", "z"}};
    const std::vector<std::vector<bytes>> sessions = {
        {body(open_request{.id = 1, .path = "/n", .pflags = fxf::write | fxf::creat | fxf::trunc, .attributes = mode(0644)}),
         body(write_request{.id = 2, .handle = h0, .offset = 5, .data = as_bytes(data)}),
         body(read_request{.id = 3, .handle = h0, .offset = 0, .length = 100}),
         body(fstat_request{.id = 4, .handle = h0}), body(fsetstat_request{.id = 5, .handle = h0, .attributes = all}),
         body(fsync_request{.id = 6, .handle = h0}), body(fstatvfs_request{.id = 7, .handle = h0}),
         body(close_request{.id = 8, .handle = h0}), body(close_request{.id = 9, .handle = h0})},
        {body(opendir_request{.id = 1, .path = "/"}), body(readdir_request{.id = 2, .handle = h0}),
         body(readdir_request{.id = 3, .handle = h0}), body(opendir_request{.id = 4, .path = "d"}),
         body(readdir_request{.id = 5, .handle = h1}), body(close_request{.id = 6, .handle = h0})},
        {body(rename_request{.id = 1, .old_path = "f", .new_path = "g"}),
         body(posix_rename_request{.id = 2, .old_path = "g", .new_path = "d/g"}),
         body(symlink_request{.id = 3, .target_path = "/d/g", .link_path = "/s"}),
         body(readlink_request{.id = 4, .path = "s"}), body(realpath_request{.id = 5, .path = "s/../l"}),
         body(hardlink_request{.id = 6, .old_path = "/d/g", .new_path = "/h"}),
         body(remove_request{.id = 7, .path = "/h"}), body(mkdir_request{.id = 8, .path = "m", .attributes = mode(0700)}),
         body(rmdir_request{.id = 9, .path = "m"}), body(rmdir_request{.id = 10, .path = "e"}),
         body(lstat_request{.id = 11, .path = "l"}), body(stat_request{.id = 12, .path = "/l"})},
        {body(setstat_request{.id = 1, .path = "f", .attributes = all}),
         body(lsetstat_request{.id = 2, .path = "l", .attributes = mode(0600)}),
         body(statvfs_request{.id = 3, .path = "/"}), body(limits_request{.id = 4}),
         body(expand_path_request{.id = 5, .path = "~/g"}), body(expand_path_request{.id = 6, .path = "~root/x"}),
         body(home_directory_request{.id = 7, .username = ""}),
         body(users_groups_by_id_request{.id = 8, .uids = {{0, 1}}, .gids = {{0}}})},
        {body(open_request{.id = 1, .path = "f", .pflags = fxf::read, .attributes = {}}),
         body(open_request{.id = 2, .path = "c", .pflags = fxf::write | fxf::creat, .attributes = {}}),
         body(copy_data_request{.id = 3, .read_handle = h0, .read_offset = 4, .read_length = 0, .write_handle = h1,
                                .write_offset = 1}),
         body(read_request{.id = 4, .handle = h1, .offset = 0, .length = 1 << 20})},
        // check-file: whole file, blocks, a range past the end, an
        // unknown algorithm, by name, a write-only handle.
        {body(open_request{.id = 1, .path = "f", .pflags = fxf::read, .attributes = {}}),
         body(check_file_handle_request{
             .id = 2, .handle = h0, .algorithms = "sha256", .start_offset = 0, .length = 0, .block_size = 0}),
         body(check_file_handle_request{
             .id = 3, .handle = h0, .algorithms = "md5,sha512", .start_offset = 1, .length = 2, .block_size = 256}),
         body(check_file_handle_request{
             .id = 4, .handle = h0, .algorithms = "sha384", .start_offset = 99, .length = 1, .block_size = 0}),
         body(check_file_handle_request{
             .id = 5, .handle = h0, .algorithms = "crc32", .start_offset = 0, .length = 0, .block_size = 0}),
         body(check_file_name_request{
             .id = 6, .path = "/l", .algorithms = "sha256", .start_offset = 0, .length = 0, .block_size = 0}),
         body(open_request{.id = 7, .path = "w", .pflags = fxf::write | fxf::creat, .attributes = {}}),
         body(check_file_handle_request{
             .id = 8, .handle = h1, .algorithms = "sha256", .start_offset = 0, .length = 0, .block_size = 0})},
        // open-named: READs behind it in the same flight, a name in use, a
        // name of the server's own length, a failed open's READ.
        {body(open_named_request{.id = 1, .handle = {'n', 0, 0, 0, 1}, .path = "f", .pflags = fxf::read,
                                 .attributes = {}}),
         body(read_request{.id = 2, .handle = {'n', 0, 0, 0, 1}, .offset = 0, .length = 4096}),
         body(open_named_request{.id = 3, .handle = {'n', 0, 0, 0, 1}, .path = "f", .pflags = fxf::read,
                                 .attributes = {}}),
         body(open_named_request{.id = 4, .handle = h0, .path = "c", .pflags = fxf::write | fxf::creat,
                                 .attributes = {}}),
         body(open_named_request{.id = 5, .handle = {'m'}, .path = "missing", .pflags = fxf::read, .attributes = {}}),
         body(read_request{.id = 6, .handle = {'m'}, .offset = 0, .length = 1}),
         body(close_request{.id = 7, .handle = {'n', 0, 0, 0, 1}})},
        {body(extended_request{.id = 1, .name = "nope@example.com", .data = {}}), bytes{99, 0, 0, 0, 2},
         bytes{fxp::stat, 0, 0}, bytes{fxp::open, 0, 0, 0, 3, 0, 0, 0, 1, '/'}},
    };
    int n = 0;
    for (const auto& s : sessions) {
        for (std::uint8_t settings : {0x00, 0x04, 0x20, 0x48, 0x90, 0xc0}) {
            bytes in = {settings};
            const bytes seq = join_messages(s);
            in.insert(in.end(), seq.begin(), seq.end());
            write_seed(dir, "sftp-" + std::to_string(n++), in);
        }
        // The same session as a raw stream (INIT is still sent first).
        bytes raw = {0x01};
        for (const auto& m : s) {
            const bytes p = packet(m);
            raw.insert(raw.end(), p.begin(), p.end());
        }
        write_seed(dir, "sftp-" + std::to_string(n++), raw);
    }
    // An oversize packet announced in a raw stream, then a request.
    bytes big = {0x01, 0x00, 0x05, 0x00, 0x00, fxp::write, 0, 0, 0, 7};
    big.resize(200, 0x41);
    write_seed(dir, "sftp-" + std::to_string(n++), big);
}

void remove_arena()
{
    if (the_arena == nullptr)
        return;
    const int fd = ::open(the_arena->root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        empty_directory(fd);
        ::close(fd);
    }
    ::rmdir(the_arena->root.c_str());
    ::unlink(the_arena->canary.c_str());
    ::rmdir(the_arena->top.c_str());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    maybe_write_seeds(write_seeds);
    static arena a;
    // On tmpfs where there is one: fsync@openssh.com and friends then cost
    // nothing, and the fuzzer's files never touch a disk.
    char shm[] = "/dev/shm/longhaul-sftp-fuzz-XXXXXX";
    char tmp[] = "/tmp/longhaul-sftp-fuzz-XXXXXX";
    char* tmpl = ::mkdtemp(shm) != nullptr ? shm : tmp;
    if (tmpl == tmp && ::mkdtemp(tmp) == nullptr)
        std::abort();
    a.top = tmpl;
    a.root = a.top + "/root";
    a.canary = a.top + "/canary";
    ::mkdir(a.root.c_str(), 0755);
    if (FILE* f = std::fopen(a.canary.c_str(), "w")) {
        std::fputs("canary", f);
        std::fclose(f);
    }
    // No file may grow past 16 MiB (a write past it fails with EFBIG).
    struct rlimit rl {16u << 20, 16u << 20};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    ::umask(022);
    the_arena = &a;
    std::atexit(remove_arena);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const arena& a = *the_arena;
    // A write past RLIMIT_FSIZE must fail with EFBIG, not raise SIGXFSZ
    // (libFuzzer installs its own handler after LLVMFuzzerInitialize).
    std::signal(SIGXFSZ, SIG_IGN);
    reset_root(a);
    const std::uint8_t settings = data[0];
    const byte_span rest(data + 1, size - 1);

    server_options o;
    o.user = "fuzz";
    o.home = "/d";
    o.client_address = "192.0.2.1";
    o.level = log_level::debug3; // every log line is formatted
    o.clock = [] { return std::time_t{1700000000}; };
    o.read_only = (settings & 0x04) != 0;
    if (settings & 0x08)
        o.denied = std::vector<std::string>{"remove", "rename", "read"};
    if (settings & 0x10)
        o.allowed = std::vector<std::string>{"open", "close", "write", "stat", "readdir", "opendir", "realpath", "limits"};
    if (settings & 0x20) {
        o.max_handles = 4;
        o.max_directory_handles = 2;
        o.max_read_length = 4096;
        o.max_write_length = 4096;
        o.max_packet_length = 1024 + 4096;
    }
    const std::uint32_t max_packet = o.max_packet_length;
    const std::size_t chunk = (settings >> 6) == 0 ? size : (settings >> 6) == 1 ? 1 : (settings >> 6) == 2 ? 7 : 300;

    bytes stream;
    if ((settings & 0x02) == 0) {
        const bytes init = init_request{}.encode();
        stream.insert(stream.end(), init.begin(), init.end());
    }
    if (settings & 0x01) {
        stream.insert(stream.end(), rest.begin(), rest.end());
    } else {
        for (const auto& m : fuzz::split_messages(rest, 256)) {
            const bytes p = packet(m);
            stream.insert(stream.end(), p.begin(), p.end());
        }
    }

    const int fds_before = open_descriptors();
    {
        int error = 0;
        auto fs = rooted_filesystem::open_root(a.root, error);
        if (!fs)
            std::abort();
        fixed_names names;
        std::size_t log_bytes = 0;
        server srv(std::move(o), *fs, names, [&log_bytes](log_level, std::string_view m) { log_bytes += m.size(); });
        srv.start();
        bytes pending;
        const auto drain = [&] {
            const auto out = srv.output();
            pending.insert(pending.end(), out.begin(), out.end());
            srv.consume_output(out.size());
            check_output(pending, max_packet);
        };
        std::size_t pos = 0;
        while (pos < stream.size() && !srv.finished()) {
            const std::size_t n = srv.feed(byte_span(stream).subspan(pos, std::min(chunk, stream.size() - pos)));
            pos += n;
            drain();
            if (n == 0 && srv.output().empty()) {
                srv.process();
                if (srv.output().empty() && srv.input_space().empty())
                    std::abort(); // stuck: no input taken, nothing to send
            }
        }
        srv.input_eof();
        for (int i = 0; i < 1000 && !srv.finished(); ++i) {
            drain();
            srv.process();
        }
        drain();
        if (!srv.finished() || srv.open_handles() != 0)
            std::abort();
        if (!pending.empty())
            std::abort(); // a truncated reply
    }
    if (open_descriptors() != fds_before)
        std::abort(); // a descriptor leaked
    if (read_all(a.canary) != "canary")
        std::abort(); // something outside the root changed
    return 0;
}
