// Fuzzes the SFTP client engine (ssh/sftp_client: client_core, session,
// remote_fs, the transfer engine, file tasks and tree walks) as a hostile
// server would: the fuzzer's bytes are the server's replies, fed while the
// client has requests outstanding (a download's pipelined reads, a
// directory listing, a tree walk with files in flight), so they reach the
// VERSION and limits@openssh.com handling, the reply decoders, the id
// matching and every place the client trusts a length, a count or an
// offset from the peer. The client's local files live in a temporary
// directory (tmpfs where there is one), reset for every input.
//
// Input: byte 0 = settings
//   bits 0-2  what the client does after INIT/VERSION (and limits): 0 the
//             remote operations of sftp's commands; 1 a download of /f
//             (stat first); 2 a resumed download (-a); 3 a tree download
//             of /; 4 an upload; 5 a tree upload; 6 a glob and a listing
//             with owner names (ls -l); 7 two downloads and an upload at once
//   bit 3     -B 512 (small requests: more of them in flight)
//   bit 4     -R 4 (a fixed window)
//   bit 5     -l 1000 (bandwidth limit: requests wait for the clock)
//   bit 6     -p and -f (attributes and fsync)
//   bit 7     symlinks followed in trees; scp's in-place writes
// then a message sequence (fuzz_seeds.hpp encoding), one message handed to
// the client each time it waits for the server (link::pump):
//   empty     nothing arrives (the clock moves on)
//   0 P...    packet P (type byte first) with its length prepended
//   1 B...    bytes B as they are (the framing sees whatever was written)
//   c P...    c >= 2: packet P with its id replaced by that of the
//             (c-2)-th most recent request the client sent, so replies
//             match, come out of order or twice whatever the ids
// When the messages run out the server's stream ends.
// Invariants: nothing crashes, leaks or hangs; when the operation returns
// no request is left waiting; no descriptor outlives the session; nothing
// outside the client's directory changes (a canary beside it).
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh) runs every
// operation against the server core (sshd/sftp) on a fixture and records
// its replies in this encoding.
#include "fuzz/fuzz_common.hpp"
#include "fuzz/fuzz_files.hpp"

#include "common/sftp/sftp_framing.hpp"
#include "ssh/sftp_client/remote_fs.hpp"
#include "ssh/sftp_client/session.hpp"
#include "ssh/sftp_client/tree.hpp"
#include "sshd/sftp/rooted_fs.hpp"
#include "sshd/sftp/sftp_server.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <set>
#include <string>

using namespace longhaul;
using namespace longhaul::sftp;
using namespace longhaul::fuzz;

namespace {

// ---------------------------------------------------------------- files

void write_text(const std::string& path, const std::string& text)
{
    const int f = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    check(f >= 0);
    check(::write(f, text.data(), text.size()) == ssize_t(text.size()));
    ::close(f);
}

std::set<std::string> names_in(const std::string& dir)
{
    std::set<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (const struct dirent* e = ::readdir(d))
            names.insert(e->d_name);
        ::closedir(d);
    }
    return names;
}

// 1200 bytes: three reads at -B 512, one DATA reply otherwise; a tree
// download that follows /l still fits the target's 4 KiB inputs.
std::string file_text()
{
    std::string s;
    for (int i = 0; s.size() < 1200; ++i)
        s += "line " + std::to_string(i) + "\n";
    s.resize(1200);
    return s;
}

// The fuzzing session's directories: top/local is the client's side,
// top/canary must never change, top/remote is the server's root (seed
// capture only).
struct arena {
    std::string top, local, canary, remote;
};

void reset_dir(const std::string& path)
{
    ::mkdir(path.c_str(), 0755);
    ::chmod(path.c_str(), 0755);
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    check(fd >= 0);
    empty_directory(fd);
    ::close(fd);
}

// The client's files: an upload source, a partial download to resume and
// a tree to upload.
void reset_local(const arena& a)
{
    reset_dir(a.local);
    write_text(a.local + "/up", file_text());
    write_text(a.local + "/part", file_text().substr(0, 700));
    ::mkdir((a.local + "/src").c_str(), 0755);
    ::mkdir((a.local + "/src/sub").c_str(), 0755);
    write_text(a.local + "/src/a", "a");
    write_text(a.local + "/src/sub/b", file_text().substr(0, 100));
}

// The server's fixture: /f, /d/g, /e (empty), /l -> f.
void reset_remote(const arena& a)
{
    reset_dir(a.remote);
    write_text(a.remote + "/f", file_text());
    ::mkdir((a.remote + "/d").c_str(), 0755);
    write_text(a.remote + "/d/g", "g");
    ::mkdir((a.remote + "/e").c_str(), 0755);
    check(::symlink("f", (a.remote + "/l").c_str()) == 0);
}

int open_descriptors()
{
    return int(names_in("/proc/self/fd").size());
}

// ---------------------------------------------------------------- the server side

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
    std::optional<std::string> home_directory(const std::string&) override { return "/d"; }
};

// The client's only I/O. Each pump records the ids of the requests the
// client sent, then hands it one message: from the input, or (capturing
// seeds) the next reply of a real server core, recorded as a message.
class hostile_link final : public sftp::link {
public:
    using time_point = transfer_clock::time_point;

    explicit hostile_link(std::vector<bytes> script) : script_(std::move(script)) {}
    hostile_link(server& srv, std::vector<bytes>& record) : srv_(&srv), record_(&record) {}

    // The client's last request (scp's last download) ends its output:
    // nothing may be sent after the pump that takes that request.
    void end_output() override { ended_ = true; }
    bool ended() const noexcept { return ended_; }

    void pump(client_core& core, int timeout_ms) override
    {
        now += std::chrono::milliseconds(1);
        take_requests(core);
        bytes m;
        if (srv_ != nullptr) {
            m = next_capture();
            record_->push_back(m);
            check(record_->size() < 1024); // a real server does not keep the client waiting
        } else if (next_ < script_.size()) {
            m = std::move(script_[next_++]);
        } else {
            core.input_closed();
            return;
        }
        if (m.empty()) {
            // Nothing arrives: the time the client was willing to wait passes.
            now += std::chrono::milliseconds(std::max(timeout_ms, 0));
            return;
        }
        const std::uint8_t how = m[0];
        bytes in;
        if (how == 1) {
            in.assign(m.begin() + 1, m.end());
        } else {
            bytes p(m.begin() + 1, m.end());
            if (how >= 2 && p.size() >= 5 && !ids_.empty())
                store_u32(p.data() + 1, ids_[ids_.size() - 1 - (how - 2) % ids_.size()]);
            wire_writer(in).string(byte_span(p));
        }
        core.feed(in);
    }

    time_point now{std::chrono::seconds(1000)};

private:
    // The client writes whole packets; each one's id is remembered (the
    // server core gets them when capturing).
    void take_requests(client_core& core)
    {
        const byte_span out = core.output();
        if (ended_) {
            check(!taken_after_end_ || out.empty());
            taken_after_end_ = true;
        }
        for (std::size_t pos = 0;;) {
            const frame f = read_frame(out.subspan(pos), UINT32_MAX);
            if (f.status != errc::ok)
                break;
            if (f.packet.size() >= 5 && f.packet[0] != fxp::init)
                ids_.push_back(load_u32(f.packet.data() + 1));
            pos += f.size();
        }
        if (srv_ != nullptr) {
            for (std::size_t done = 0; done < out.size();) {
                done += srv_->feed(out.subspan(done));
                drain_server();
            }
            drain_server();
        }
        core.consume_output(out.size());
    }

    void drain_server()
    {
        srv_->process();
        const auto o = srv_->output();
        replies_.insert(replies_.end(), o.begin(), o.end());
        srv_->consume_output(o.size());
    }

    // The server's next reply as a message: its id given as "the k-th most
    // recent request" where it can be, so the seed still matches when a
    // mutation makes the client send more or fewer requests.
    bytes next_capture()
    {
        const frame f = read_frame(replies_, UINT32_MAX);
        if (f.status != errc::ok)
            return {};
        bytes m = {0};
        m.insert(m.end(), f.packet.begin(), f.packet.end());
        if (f.packet[0] != fxp::version && f.packet.size() >= 5) {
            const auto it = std::find(ids_.rbegin(), ids_.rend(), load_u32(f.packet.data() + 1));
            if (it != ids_.rend() && it - ids_.rbegin() < 254)
                m[0] = std::uint8_t(2 + (it - ids_.rbegin()));
        }
        replies_.erase(replies_.begin(), replies_.begin() + std::ptrdiff_t(f.size()));
        return m;
    }

    std::vector<bytes> script_;
    bool ended_ = false;
    bool taken_after_end_ = false;
    std::size_t next_ = 0;
    std::vector<std::uint32_t> ids_;
    server* srv_ = nullptr;
    std::vector<bytes>* record_ = nullptr;
    bytes replies_;
};

// ---------------------------------------------------------------- the client side

// OpenSSH's sftp commands one after the other, each using what the
// previous ones returned where it can.
void remote_operations(remote_fs& fs)
{
    (void)fs.realpath(".");
    (void)fs.expand_path("~/x");
    (void)fs.stat("/f", false);
    (void)fs.lstat("/l", false);
    (void)fs.readlink("/l");
    (void)fs.statvfs("/", false);
    attrs mode;
    mode.flags = attr::permissions;
    mode.permissions = 0700;
    (void)fs.mkdir("/m", mode, true);
    (void)fs.rename("/m", "/n", false);
    (void)fs.rmdir("/n");
    (void)fs.symlink("f", "/s");
    (void)fs.hardlink("/f", "/h");
    (void)fs.copy("/f", "/c");
    (void)fs.setstat("/c", mode);
    (void)fs.lsetstat("/s", mode);
    (void)fs.remove("/c");
    if (auto h = fs.open("/f", fxf::read, {}, "remote")) {
        (void)fs.fstat(*h, false);
        (void)fs.fsetstat(*h, mode);
        (void)fs.fsync(*h);
        (void)fs.close(*h);
    }
    (void)fs.is_dir("/d");
}

// sftp's ls -l: a glob, the listing, the owners' names.
void listing(remote_fs& fs)
{
    const glob_result g = remote_glob(fs, "/*", true, false);
    if (auto entries = fs.readdir(g.matched != 0 ? "/" : "/e")) {
        std::vector<std::uint32_t> uids, gids;
        for (const auto& e : *entries) {
            uids.push_back(e.attributes.uid);
            gids.push_back(e.attributes.gid);
        }
        fs.prefetch_names(uids, gids);
        for (auto u : uids)
            (void)fs.user_name(u);
    }
}

void run_client(remote_fs& fs, const arena& a, std::uint8_t settings)
{
    transfer_flags f;
    f.preserve = f.fsync = (settings & 0x40) != 0;
    f.inplace = (settings & 0x80) != 0;
    // The first lookup goes out with INIT where the operation starts with
    // one (as scp's stat and sftp's REALPATH "." do); scp's upload of one
    // file sends the target's OPEN with its stat.
    const std::string& l = a.local;
    const auto first = [&fs, settings, &l, &f] {
        struct stat up{};
        if ((settings & 7) == 0)
            fs.prefetch_realpath(".");
        else if ((settings & 7) == 3)
            fs.prefetch_realpath("/");
        else if ((settings & 7) == 4 && ::stat((l + "/up").c_str(), &up) == 0) {
            fs.prefetch_stat("/u");
            fs.prefetch_open(upload_open_request("/u", up, f));
        }
    };
    if (!fs.sess().init(first))
        return;
    tree_options o;
    o.flags = f;
    o.print = true;
    o.follow_links = (settings & 0x80) != 0;
    transfer_batch batch(fs, nullptr);
    // Without -R 4: the connection's last batch, as scp runs it (its last
    // download ends the server's input with its CLOSE).
    batch.set_last((settings & 0x10) == 0);
    switch (settings & 7) {
    case 0: remote_operations(fs); return;
    case 1: batch.download_file("/f", l + "/f", std::nullopt, f); break;
    case 2: f.resume = true; batch.download_file("/f", l + "/part", std::nullopt, f); break;
    case 3: (void)batch.download_dir("/", l + "/tree", o); break;
    case 4: batch.upload_file(l + "/up", fs.is_dir("/u") ? "/u/up" : "/u", f); break;
    case 5: (void)batch.upload_dir(l + "/src", "/t", o); break;
    case 6: listing(fs); return;
    case 7:
        batch.download_file("/f", l + "/f", std::nullopt, f);
        batch.download_file("/d/g", l + "/g", std::nullopt, f);
        batch.upload_file(l + "/up", "/u", f);
        break;
    }
    (void)batch.run();
}

session_options options_from(std::uint8_t settings)
{
    session_options so;
    if (settings & 0x08)
        so.buffer_size = 512;
    if (settings & 0x10)
        so.num_requests = 4;
    if (settings & 0x20)
        so.limit_bps = 1000 * 1000;
    return so;
}

// Runs the client over `l`; true when no request was left waiting.
bool client_session(hostile_link& l, const arena& a, std::uint8_t settings)
{
    std::size_t text = 0;
    output_sink out;
    out.error = out.info = out.print = [&text](const std::string& m) { text += m.size(); };
    out.debug = [&text](int, const std::string& m) { text += m.size(); };
    session s(l, options_from(settings), [&l] { return l.now; });
    remote_fs fs(s, out);
    run_client(fs, a, settings);
    // After the end of its output the client waits for nothing: what is
    // still unanswered (that CLOSE) is answered when the server's stream
    // ends, as ssh exits.
    if (l.ended())
        s.run_until([&s] { return s.core().closed() || s.core().outstanding() == 0; });
    if (tracing())
        std::fprintf(stderr, "client: settings %#x, %llu requests, %s\n", settings,
                     static_cast<unsigned long long>(s.core().requests_sent()),
                     s.ok() ? "ok" : s.core().failure().c_str());
    return s.core().outstanding() == 0;
}

// ---------------------------------------------------------------- seeds

const arena* the_arena = nullptr; // set once by LLVMFuzzerInitialize

void write_seeds(const std::string& dir)
{
    const arena& a = *the_arena;
    int n = 0;
    for (std::uint8_t what = 0; what < 8; ++what) {
        for (std::uint8_t options : {0x00, 0x08, 0x18, 0x28, 0x48, 0x88}) {
            const std::uint8_t settings = what | options;
            reset_local(a);
            reset_remote(a);
            int error = 0;
            auto root = rooted_filesystem::open_root(a.remote, error);
            check(root != nullptr);
            fixed_names names;
            server_options so;
            so.clock = [] { return std::time_t{1700000000}; };
            server srv(std::move(so), *root, names, [](log_level, std::string_view) {});
            srv.start();
            std::vector<bytes> replies;
            hostile_link l(srv, replies);
            check(client_session(l, a, settings));
            bytes in = {settings};
            const bytes seq = join_messages(replies);
            in.insert(in.end(), seq.begin(), seq.end());
            write_seed(dir, "sftp-client-" + std::to_string(n++), in);
        }
    }
    // Hostile framing: a VERSION, then a length past the client's limit.
    const bytes version = version_reply{}.encode();
    bytes raw = {0x01, std::uint8_t(version.size() + 1), 1};
    raw.insert(raw.end(), version.begin(), version.end());
    raw.insert(raw.end(), {5, 1, 0x7f, 0xff, 0xff, 0xff});
    write_seed(dir, "sftp-client-" + std::to_string(n++), raw);
}

void remove_arena()
{
    if (the_arena == nullptr)
        return;
    reset_dir(the_arena->local);
    reset_dir(the_arena->remote);
    ::rmdir(the_arena->local.c_str());
    ::rmdir(the_arena->remote.c_str());
    ::unlink(the_arena->canary.c_str());
    ::rmdir(the_arena->top.c_str());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    static arena a;
    // On tmpfs where there is one: the client's files never touch a disk.
    char shm[] = "/dev/shm/longhaul-sftp-client-fuzz-XXXXXX";
    char tmp[] = "/tmp/longhaul-sftp-client-fuzz-XXXXXX";
    const char* top = ::mkdtemp(shm) != nullptr ? shm : ::mkdtemp(tmp);
    check(top != nullptr);
    a.top = top;
    a.local = a.top + "/local";
    a.remote = a.top + "/remote";
    a.canary = a.top + "/canary";
    write_text(a.canary, "canary");
    reset_dir(a.remote);
    ::umask(022);
    the_arena = &a;
    std::atexit(remove_arena);
    maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const arena& a = *the_arena;
    reset_local(a);
    const int fds_before = open_descriptors();
    {
        hostile_link l(split_messages(byte_span(data + 1, size - 1), 1024));
        check(client_session(l, a, data[0]));
    }
    check(open_descriptors() == fds_before);
    check(names_in(a.top) == std::set<std::string>{".", "..", "local", "remote", "canary"});
    const int fd = ::open(a.canary.c_str(), O_RDONLY | O_CLOEXEC);
    char buf[16] = {};
    check(fd >= 0 && ::read(fd, buf, sizeof buf) == 6 && std::memcmp(buf, "canary", 6) == 0);
    ::close(fd);
    return 0;
}
