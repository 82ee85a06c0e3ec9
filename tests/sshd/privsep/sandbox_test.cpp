#include "sshd/privsep/sandbox.hpp"

#include "common/crypto/hash.hpp"
#include "common/crypto/key_agreement.hpp"
#include "common/crypto/mac.hpp"
#include "common/crypto/packet_cipher.hpp"
#include "common/keys/private_key.hpp"
#include "common/random.hpp"
#include "common/wire.hpp"
#include "tests/skip.hpp"
#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <openssl/rand.h>
#include <poll.h>
#include <pwd.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace longhaul;
using namespace longhaul::privsep;
using longhaul::test::temp_dir;

namespace {

// Where a sandboxed child goes: as root the real thing (an empty directory
// owned by root, mode 0755, and nobody's ids), otherwise the filter alone,
// as an unprivileged sshd would have it.
struct sandbox_place {
    std::unique_ptr<temp_dir> root;
    sandbox_settings settings;
};

std::pair<uid_t, gid_t> nobody_ids()
{
    const passwd* pw = ::getpwnam("nobody");
    return pw ? std::pair{pw->pw_uid, pw->pw_gid} : std::pair<uid_t, gid_t>{65534, 65534};
}

sandbox_place make_place()
{
    sandbox_place p;
    if (::geteuid() != 0)
        return p;
    p.root = std::make_unique<temp_dir>();
    ::chmod(p.root->path().c_str(), 0755);
    p.settings.chroot_directory = p.root->path();
    const auto [uid, gid] = nobody_ids();
    p.settings.uid = uid;
    p.settings.gid = gid;
    return p;
}

void child_say(int fd, const std::string& text)
{
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0 && errno != EINTR)
            return;
        if (n > 0)
            done += static_cast<std::size_t>(n);
    }
}

std::string errno_name(int e)
{
    switch (e) {
    case 0: return "ok";
    case EACCES: return "EACCES";
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case EPERM: return "EPERM";
    default: return "errno " + std::to_string(e);
    }
}

struct sandboxed_outcome {
    int status = -1;    // as waitpid gives it
    std::string output; // all the child wrote to its pipe
};

bool exited_with(const sandboxed_outcome& c, int code) { return WIFEXITED(c.status) && WEXITSTATUS(c.status) == code; }
// The filter's two ways to end a child: the kernel's kill, or the trap
// handler's exit after its report.
bool killed_by_filter(const sandboxed_outcome& c) { return WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGSYS; }
bool trapped(const sandboxed_outcome& c) { return exited_with(c, 128 + SIGSYS); }

std::string trap_line(long nr) { return "sandbox: forbidden system call " + std::to_string(nr) + "\n"; }

// Whether the filter's trap report goes to the output pipe.
enum class trap_report { none, to_output };

// Forks a child that enters the sandbox (unless `settings` is null: the
// control run), then runs `body` with the write end of a pipe to us, then
// exits 0. A child that cannot enter writes "enter failed: ..." and exits 2.
// With `at_ready`, the body's first line (it must write one, then wait for a
// byte on the control descriptor it is given) lets the parent look at the
// child, in at_ready, before the child goes on.
sandboxed_outcome run_sandboxed(const sandbox_settings* settings, trap_report report,
                                const std::function<void(int out, int control)>& body,
                                const std::function<void(pid_t)>& at_ready = {})
{
    int out[2];
    int control[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(out[0]);
        ::close(control[0]);
        if (settings != nullptr) {
            sandbox_settings s = *settings;
            if (report == trap_report::to_output)
                s.report_fd = out[1];
            std::string error;
            if (!enter_preauth_sandbox(s, error)) {
                child_say(out[1], "enter failed: " + error + "\n");
                _exit(2);
            }
        }
        body(out[1], control[1]);
        _exit(0);
    }
    ::close(out[1]);
    ::close(control[1]);
    sandboxed_outcome c;
    char buf[4096];
    bool ready = !at_ready;
    for (;;) {
        const ssize_t n = ::read(out[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        c.output.append(buf, static_cast<std::size_t>(n));
        if (!ready && c.output.find('\n') != std::string::npos) {
            ready = true;
            at_ready(pid);
            child_say(control[0], "g");
        }
    }
    ::close(out[0]);
    ::close(control[0]);
    while (::waitpid(pid, &c.status, 0) < 0 && errno == EINTR) {
    }
    return c;
}

bool output_has_line(const std::string& output, const std::string& line)
{
    std::istringstream in(output);
    for (std::string l; std::getline(in, l);)
        if (l == line)
            return true;
    return false;
}

// The value of "Name:\tvalue" in a /proc status file, or "(absent)".
std::string status_field(const std::string& status, const std::string& name)
{
    std::istringstream in(status);
    for (std::string l; std::getline(in, l);) {
        if (l.rfind(name + ":", 0) != 0)
            continue;
        std::string v = l.substr(name.size() + 1);
        while (!v.empty() && (v.front() == '\t' || v.front() == ' '))
            v.erase(v.begin());
        while (!v.empty() && (v.back() == '\t' || v.back() == ' '))
            v.pop_back();
        return v;
    }
    return "(absent)";
}

// A /proc file (whose size says 0, so read until the end).
std::string read_proc(const std::string& path)
{
    std::string text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;)
        text.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return text;
}

// "soft hard" of a /proc/PID/limits line ("Max open files  2  2  files").
std::string limit_field(const std::string& limits, const std::string& name)
{
    std::istringstream in(limits);
    for (std::string l; std::getline(in, l);) {
        if (l.rfind(name, 0) != 0)
            continue;
        std::istringstream words(l.substr(name.size()));
        std::string soft, hard;
        words >> soft >> hard;
        return soft + " " + hard;
    }
    return "(absent)";
}

// What a pre-authentication child needs, reported as facts ("name: value")
// so that the same body run outside the sandbox shows each check can fail.
void probe_needs(int out, int a, int b)
{
    auto fact = [&](const std::string& name, const std::string& value) { child_say(out, name + ": " + value + "\n"); };

    // I/O on descriptors it was given, and poll(2) of two of them.
    bool io = ::write(a, "hello", 5) == 5;
    pollfd two[2] = {{b, POLLIN, 0}, {a, POLLOUT, 0}};
    io = io && ::poll(two, 2, 1000) == 2 && (two[0].revents & POLLIN) != 0;
    char got[8] = {};
    io = io && ::read(b, got, sizeof(got)) == 5 && std::memcmp(got, "hello", 5) == 0;
    const int flags = ::fcntl(b, F_GETFL);
    io = io && flags >= 0 && ::fcntl(b, F_SETFL, flags | O_NONBLOCK) == 0;
    io = io && ::read(b, got, 1) < 0 && errno == EAGAIN;
    iovec iov{const_cast<char*>("msg"), 3};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    io = io && ::sendmsg(a, &m, 0) == 3;
    char back[4] = {};
    iovec riov{back, sizeof(back)};
    msghdr rm{};
    rm.msg_iov = &riov;
    rm.msg_iovlen = 1;
    io = io && ::recvmsg(b, &rm, 0) == 3 && std::memcmp(back, "msg", 3) == 0;
    fact("io", io ? "ok" : "failed");
    // RLIMIT_NOFILE is the most descriptors one poll may ask about.
    pollfd three[3] = {{a, POLLOUT, 0}, {b, POLLOUT, 0}, {out, POLLOUT, 0}};
    fact("poll 3", errno_name(::poll(three, 3, 0) >= 0 ? 0 : errno));

    // malloc, small and large (mmap), and realloc of a large block (mremap).
    bool mem = true;
    std::vector<std::unique_ptr<char[]>> small;
    for (int i = 0; i < 1000; ++i) {
        small.emplace_back(new char[100 + i]);
        small.back()[0] = 1;
    }
    void* big = std::malloc(64 << 20);
    mem = big != nullptr;
    if (mem) {
        std::memset(big, 1, 64 << 20);
        void* bigger = std::realloc(big, 128 << 20);
        mem = bigger != nullptr;
        big = bigger != nullptr ? bigger : big;
        if (mem)
            static_cast<char*>(big)[(128 << 20) - 1] = 2;
    }
    std::free(big);
    fact("memory", mem ? "ok" : "failed");

    // RAND_poll reseeds the primary DRBG from the system (getrandom), as
    // OpenSSL does by itself every so often.
    unsigned char rnd[64] = {};
    bool random_ok = RAND_bytes(rnd, sizeof(rnd)) == 1 && RAND_poll() == 1 && RAND_bytes(rnd, sizeof(rnd)) == 1;
    unsigned char zero[64] = {};
    random_ok = random_ok && std::memcmp(rnd, zero, sizeof(rnd)) != 0;
    fact("random", random_ok ? "ok" : "failed");

    // The vDSO answers clock_gettime without a system call; the raw call
    // checks the filter's rule for when it cannot.
    timespec t1{}, t2{};
    bool clock_ok = ::clock_gettime(CLOCK_MONOTONIC, &t1) == 0;
    clock_ok = clock_ok && ::syscall(SYS_clock_gettime, CLOCK_REALTIME, &t2) == 0 && t2.tv_sec > 1600000000;
    const timespec ms{0, 1000000};
    clock_ok = clock_ok && ::nanosleep(&ms, nullptr) == 0;
    fact("clock", clock_ok ? "ok" : "failed");
    fact("getpid", ::getpid() > 0 && ::syscall(SYS_getpid) == ::getpid() ? "ok" : "failed");

    // Files: refused, not fatal.
    const int fd = ::open("/etc/passwd", O_RDONLY);
    fact("open /etc/passwd", errno_name(fd >= 0 ? 0 : errno));
    struct stat st{};
    fact("stat /", errno_name(::stat("/", &st) == 0 ? 0 : errno));
    fact("fstat", errno_name(::fstat(a, &st) == 0 ? 0 : errno));
    fact("access /", errno_name(::access("/", R_OK) == 0 ? 0 : errno));
}

} // namespace

TEST_CASE("sandbox: preauth_sandbox_settings checks the user and the directory as OpenSSH's sshd does")
{
    std::string error;
    if (::geteuid() != 0) {
        auto s = preauth_sandbox_settings(error, "longhaul-no-such-user", "/nonexistent");
        REQUIRE(s.has_value());
        CHECK(s->chroot_directory.empty());
        CHECK_FALSE(s->uid.has_value());
        LONGHAUL_SKIP("the user and directory are checked only as root (as OpenSSH's)");
    }
    temp_dir tmp;
    const std::string dir = tmp.file("run-sshd");
    auto s = preauth_sandbox_settings(error, "longhaul-no-such-user", dir);
    CHECK_FALSE(s.has_value());
    CHECK(error == "Privilege separation user longhaul-no-such-user does not exist");
    s = preauth_sandbox_settings(error, "nobody", dir);
    CHECK_FALSE(s.has_value());
    CHECK(error == "Missing privilege separation directory: " + dir);
    test::write_file(dir, "not a directory\n");
    s = preauth_sandbox_settings(error, "nobody", dir);
    CHECK_FALSE(s.has_value());
    CHECK(error == "Missing privilege separation directory: " + dir);
    ::unlink(dir.c_str());
    REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
    REQUIRE(::chmod(dir.c_str(), 0775) == 0);
    s = preauth_sandbox_settings(error, "nobody", dir);
    CHECK_FALSE(s.has_value());
    CHECK(error == dir + " must be owned by root and not group or world-writable.");
    REQUIRE(::chmod(dir.c_str(), 0757) == 0);
    CHECK_FALSE(preauth_sandbox_settings(error, "nobody", dir).has_value());
    const auto [uid, gid] = nobody_ids();
    REQUIRE(::chmod(dir.c_str(), 0755) == 0);
    REQUIRE(::chown(dir.c_str(), uid, 0) == 0);
    s = preauth_sandbox_settings(error, "nobody", dir);
    CHECK_FALSE(s.has_value());
    CHECK(error == dir + " must be owned by root and not group or world-writable.");
    REQUIRE(::chown(dir.c_str(), 0, 0) == 0);
    error.clear();
    s = preauth_sandbox_settings(error, "nobody", dir);
    REQUIRE(s.has_value());
    CHECK(error.empty());
    CHECK(s->chroot_directory == dir);
    CHECK(s->uid == uid);
    CHECK(s->gid == gid);
}

TEST_CASE("sandbox: settings it cannot honour are refused before anything changes")
{
    std::string error;
    sandbox_settings half;
    half.uid = 65534;
    CHECK_FALSE(enter_preauth_sandbox(half, error).has_value());
    CHECK(error == "sandbox: a uid needs a gid and a gid a uid");
    sandbox_settings no_poll;
    no_poll.poll_descriptors = 0;
    CHECK_FALSE(enter_preauth_sandbox(no_poll, error).has_value());
    CHECK(error == "sandbox: poll_descriptors must be at least 1");
    // Still unconfined: this process can open files.
    const int fd = ::open("/etc/passwd", O_RDONLY);
    CHECK(fd >= 0);
    ::close(fd);

    // A chroot without root: as root, in a child that gave root up first.
    sandbox_settings chroot_only;
    chroot_only.chroot_directory = "/";
    // Plain variables: clang 14 cannot capture structured bindings.
    const uid_t uid = nobody_ids().first;
    const gid_t gid = nobody_ids().second;
    const sandboxed_outcome c = run_sandboxed(nullptr, trap_report::none, [&](int out, int) {
        if (::geteuid() == 0 && (::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0))
            _exit(3);
        std::string e;
        child_say(out, enter_preauth_sandbox(chroot_only, e).has_value() ? "entered\n" : e + "\n");
    });
    CHECK(exited_with(c, 0));
    CHECK(c.output == "sandbox: chroot and a change of user need root\n");
}

TEST_CASE("sandbox: the child keeps its descriptors, memory, randomness and clocks; files are refused")
{
    sandbox_place place = make_place();
    int sp[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) == 0);
    auto body = [&](int out, int) { probe_needs(out, sp[0], sp[1]); };

    // Outside the sandbox, files open and poll takes three descriptors.
    const sandboxed_outcome unconfined = run_sandboxed(nullptr, trap_report::none, body);
    INFO("unconfined child said:\n", unconfined.output);
    CHECK(exited_with(unconfined, 0));
    CHECK(output_has_line(unconfined.output, "io: ok"));
    CHECK(output_has_line(unconfined.output, "poll 3: ok"));
    CHECK(output_has_line(unconfined.output, "open /etc/passwd: ok"));
    CHECK(output_has_line(unconfined.output, "stat /: ok"));
    CHECK(output_has_line(unconfined.output, "fstat: ok"));
    CHECK(output_has_line(unconfined.output, "access /: ok"));

    const sandboxed_outcome boxed = run_sandboxed(&place.settings, trap_report::to_output, body);
    INFO("sandboxed child said:\n", boxed.output);
    CHECK(exited_with(boxed, 0));
    for (const char* line : {"io: ok", "memory: ok", "random: ok", "clock: ok", "getpid: ok"})
        CHECK(output_has_line(boxed.output, line));
    // (A sanitizer build's sandbox allows more descriptors: poll works.)
    CHECK(output_has_line(boxed.output, sanitizer_descriptors == 0 ? "poll 3: EINVAL" : "poll 3: ok"));
    CHECK(output_has_line(boxed.output, "open /etc/passwd: EACCES"));
    CHECK(output_has_line(boxed.output, "stat /: EACCES"));
    CHECK(output_has_line(boxed.output, "fstat: EACCES"));
    CHECK(output_has_line(boxed.output, "access /: EACCES"));
    ::close(sp[0]);
    ::close(sp[1]);
}

TEST_CASE("sandbox: creating processes, sockets, descriptors or executable memory is fatal")
{
    sandbox_place place = make_place();
    struct attempt {
        const char* name;
        long nr;
        std::function<void()> call;
    };
    const std::vector<attempt> attempts = {
        {"execve", SYS_execve,
         [] {
             char* const argv[] = {const_cast<char*>("true"), nullptr};
             ::execve("/bin/true", argv, environ);
         }},
        // glibc's fork() is clone(2).
        {"fork", SYS_clone,
         [] {
             if (::fork() == 0)
                 _exit(0);
         }},
        {"socket", SYS_socket, [] { (void)::socket(AF_INET, SOCK_STREAM, 0); }},
        {"mmap PROT_EXEC", SYS_mmap,
         [] { (void)::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); }},
        {"mprotect PROT_EXEC", SYS_mprotect,
         [] {
             void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
             if (p != MAP_FAILED)
                 (void)::mprotect(p, 4096, PROT_READ | PROT_EXEC);
         }},
        {"fcntl F_DUPFD", SYS_fcntl, [] { (void)::fcntl(0, F_DUPFD, 0); }},
        // setsockopt only for TCP_QUICKACK (below).
        {"setsockopt SO_REUSEADDR", SYS_setsockopt,
         [] {
             const int one = 1;
             (void)::setsockopt(0, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
         }},
        {"setsockopt TCP_NODELAY", SYS_setsockopt,
         [] {
             const int one = 1;
             (void)::setsockopt(0, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
         }},
        {"kill", SYS_kill, [] { (void)::kill(::getpid(), 0); }},
#if defined(__x86_64__)
        // The x32 ABI's number for getpid, which is allowed in the native
        // numbering: the filter sends x32 calls to its kill action.
        {"x32 getpid", 0x40000000L | SYS_getpid, [] { (void)::syscall(0x40000000L | SYS_getpid); }},
#endif
    };
    for (const attempt& a : attempts) {
        CAPTURE(a.name);
        auto body = [&](int out, int) {
            child_say(out, "trying\n");
            a.call();
            child_say(out, "survived\n");
        };
        // Control: outside, the call returns (or execve runs /bin/true).
        const sandboxed_outcome unconfined = run_sandboxed(nullptr, trap_report::none, body);
        CHECK(exited_with(unconfined, 0));
        CHECK(unconfined.output == (a.nr == SYS_execve ? "trying\n" : "trying\nsurvived\n"));

        const sandboxed_outcome boxed = run_sandboxed(&place.settings, trap_report::to_output, body);
        CHECK(trapped(boxed));
        CHECK(boxed.output == "trying\n" + trap_line(a.nr));
    }
    // Without a report descriptor the kernel kills the child outright.
    const sandboxed_outcome killed = run_sandboxed(&place.settings, trap_report::none, [&](int out, int) {
        child_say(out, "trying\n");
        attempts[0].call();
        child_say(out, "survived\n");
    });
    CHECK(killed_by_filter(killed));
    CHECK(killed.output == "trying\n");
}

TEST_CASE("sandbox: setsockopt TCP_QUICKACK is allowed (the child acknowledges what it read at once)")
{
    sandbox_place place = make_place();
    const sandboxed_outcome boxed = run_sandboxed(&place.settings, trap_report::to_output, [&](int out, int) {
        const int one = 1;
        (void)::setsockopt(out, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one); // not TCP: an error, not a kill
        child_say(out, "survived\n");
    });
    CHECK(exited_with(boxed, 0));
    CHECK(boxed.output == "survived\n");
}

TEST_CASE("sandbox: /proc shows no_new_privs, the filter, the limits and (as root) the user and the chroot")
{
    sandbox_place place = make_place();
    const std::string own = read_proc("/proc/self/status");
    std::string status, limits, root_link;
    auto look = [&](pid_t pid) {
        const std::string dir = "/proc/" + std::to_string(pid);
        status = read_proc(dir + "/status");
        limits = read_proc(dir + "/limits");
        char buf[4096];
        const ssize_t n = ::readlink((dir + "/root").c_str(), buf, sizeof(buf));
        root_link = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "(unreadable)";
    };
    auto wait_for_go = [](int out, int control) {
        child_say(out, "ready\n");
        char go;
        (void)::read(control, &go, 1);
    };

    // Control: an unconfined child looks like this process.
    sandboxed_outcome c = run_sandboxed(nullptr, trap_report::none, wait_for_go, look);
    CHECK(exited_with(c, 0));
    REQUIRE(status_field(own, "NoNewPrivs") != "(absent)");
    CHECK(status_field(status, "NoNewPrivs") == status_field(own, "NoNewPrivs"));
    CHECK(status_field(status, "Seccomp") == status_field(own, "Seccomp"));
    CHECK(limit_field(limits, "Max file size") != "0 0");
    CHECK(limit_field(limits, "Max open files") != "2 2");
    CHECK(status_field(status, "Uid") == status_field(own, "Uid"));
    CHECK(root_link == "/");

    c = run_sandboxed(&place.settings, trap_report::none, wait_for_go, look);
    {
        INFO("child's status:\n", status);
        CHECK(exited_with(c, 0));
        CHECK(status_field(status, "NoNewPrivs") == "1");
        CHECK(status_field(status, "Seccomp") == "2");
        // Where the kernel counts filters (5.9+), ours is one more than we had.
        if (status_field(own, "Seccomp_filters") != "(absent)")
            CHECK(std::stoi(status_field(status, "Seccomp_filters")) ==
                  std::stoi(status_field(own, "Seccomp_filters")) + 1);
        CHECK(limit_field(limits, "Max file size") == "0 0");
        const std::string files = std::to_string(2 + sanitizer_descriptors);
        CHECK(limit_field(limits, "Max open files") == files + " " + files);
        CHECK(limit_field(limits, "Max processes") == "0 0");
    }
    if (::geteuid() != 0)
        LONGHAUL_SKIP("the user switch and the chroot need root");
    const std::string uid = std::to_string(*place.settings.uid);
    const std::string gid = std::to_string(*place.settings.gid);
    INFO("child's status:\n", status);
    CHECK(status_field(status, "Uid") == uid + "\t" + uid + "\t" + uid + "\t" + uid);
    CHECK(status_field(status, "Gid") == gid + "\t" + gid + "\t" + gid + "\t" + gid);
    CHECK(status_field(status, "Groups") == gid);
    CHECK(status_field(status, "CapEff") == "0000000000000000");
    CHECK(root_link == place.settings.chroot_directory);
}

// The crypto a pre-authentication child does, each on its first use in the
// process, inside the sandbox: a freshly started copy of this program runs
// the hidden case below, so nothing an earlier test case did has warmed
// OpenSSL up (fetched algorithms, built tables, read files).
TEST_CASE("sandbox: key exchange, ciphers, MACs and signature checks work inside, from a cold start")
{
    sandbox_place place = make_place();
    int out[2];
    REQUIRE(::pipe(out) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(out[0]);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::setenv("LONGHAUL_SANDBOX_COLD_FD", std::to_string(out[1]).c_str(), 1);
        ::setenv("LONGHAUL_SANDBOX_COLD_ROOT", place.settings.chroot_directory.c_str(), 1);
        const char* argv[] = {"privsep_tests", "--no-skip", "--no-intro", "--no-version",
                              "--test-case=sandbox: the cold child of the crypto check", nullptr};
        ::execv("/proc/self/exe", const_cast<char* const*>(argv));
        _exit(127);
    }
    ::close(out[1]);
    std::string output;
    char buf[4096];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof(buf))) != 0;)
        if (n > 0)
            output.append(buf, static_cast<std::size_t>(n));
        else if (errno != EINTR)
            break;
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    INFO("cold child said:\n", output);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK(output.find("failed") == std::string::npos);
    CHECK(output.find("forbidden") == std::string::npos);
    CHECK(output_has_line(output, "entered"));
    for (const char* line : {"ok verify ssh-ed25519", "ok verify ecdsa-sha2-nistp256", "ok verify rsa-sha2-256",
                             "ok verify rsa-sha2-512", "ok x25519", "ok ecdh p256", "ok ecdh p384", "ok ecdh p521",
                             "ok dh group14", "ok ciphers", "ok macs", "ok hmac", "ok digests", "ok random", "done"})
        CHECK(output_has_line(output, line));
}

TEST_CASE("sandbox: the cold child of the crypto check" * doctest::skip())
{
    const char* fd_text = std::getenv("LONGHAUL_SANDBOX_COLD_FD");
    const char* root = std::getenv("LONGHAUL_SANDBOX_COLD_ROOT");
    if (fd_text == nullptr || root == nullptr)
        return; // run by the case above only
    const int out = std::atoi(fd_text);

    // Keys and signatures come from a grandchild, so that not even their
    // generation warms up this process's OpenSSL before the sandbox.
    const std::string message = "exchange hash, then a userauth request";
    struct signed_sample {
        key_type type;
        int bits;
        const char* alg;
        bytes key_blob;
        bytes signature;
    };
    std::vector<signed_sample> samples = {{key_type::ed25519, 0, "ssh-ed25519", {}, {}},
                                          {key_type::ecdsa_p256, 256, "ecdsa-sha2-nistp256", {}, {}},
                                          {key_type::rsa, 2048, "rsa-sha2-256", {}, {}},
                                          {key_type::rsa, 2048, "rsa-sha2-512", {}, {}}};
    int keys[2];
    if (::pipe(keys) != 0)
        _exit(4);
    const pid_t maker = ::fork();
    if (maker == 0) {
        bytes all;
        wire_writer w(all);
        for (const signed_sample& s : samples) {
            auto k = private_key::generate(s.type, s.bits);
            if (!k)
                _exit(5);
            auto sig = k->sign(s.alg, as_bytes(message));
            if (!sig)
                _exit(6);
            w.string(k->public_part().blob()).string(*sig);
        }
        child_say(keys[1], std::string(all.begin(), all.end()));
        _exit(0);
    }
    ::close(keys[1]);
    bytes all;
    std::uint8_t buf[4096];
    for (ssize_t n; (n = ::read(keys[0], buf, sizeof(buf))) > 0;)
        all.insert(all.end(), buf, buf + n);
    int status = 0;
    ::waitpid(maker, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        child_say(out, "failed making keys\n");
        _exit(1);
    }
    wire_reader r(all);
    for (signed_sample& s : samples) {
        const byte_span k = r.string();
        const byte_span sig = r.string();
        s.key_blob.assign(k.begin(), k.end());
        s.signature.assign(sig.begin(), sig.end());
    }
    if (!r.finish())
        _exit(7);

    sandbox_settings settings;
    settings.report_fd = out;
    if (*root != '\0') {
        settings.chroot_directory = root;
        const auto [uid, gid] = nobody_ids();
        settings.uid = uid;
        settings.gid = gid;
    }
    std::string error;
    if (!enter_preauth_sandbox(settings, error)) {
        child_say(out, "failed to enter: " + error + "\n");
        _exit(2);
    }
    child_say(out, "entered\n");
    auto report = [&](const std::string& what, bool ok) { child_say(out, (ok ? "ok " : "failed ") + what + "\n"); };

    for (const signed_sample& s : samples) {
        auto key = public_key::from_blob(s.key_blob);
        bool ok = key.has_value() && key->verify(s.alg, as_bytes(message), s.signature).has_value();
        // A signature over other data must not verify: the check really ran.
        ok = ok && !key->verify(s.alg, as_bytes(message + "!"), s.signature).has_value();
        report(std::string("verify ") + s.alg, ok);
    }

    auto agree = [&](const std::string& what, auto make) {
        auto a = make();
        auto b = make();
        bool ok = a.has_value() && b.has_value();
        if (ok) {
            auto ka = (*a)->derive((*b)->public_value());
            auto kb = (*b)->derive((*a)->public_value());
            ok = ka.has_value() && kb.has_value() && ka->size() > 0 &&
                 bytes(ka->span().begin(), ka->span().end()) == bytes(kb->span().begin(), kb->span().end());
        }
        report(what, ok);
    };
    agree("x25519", [] { return make_x25519_agreement(); });
    agree("ecdh p256", [] { return make_ecdh_agreement(ecdh_curve::p256); });
    agree("ecdh p384", [] { return make_ecdh_agreement(ecdh_curve::p384); });
    agree("ecdh p521", [] { return make_ecdh_agreement(ecdh_curve::p521); });
    agree("dh group14", [] { return make_dh_agreement(modp_group14(), *dh_private_exponent_bits(32, 2048)); });

    // Every cipher (with one MAC when it needs one) and every MAC: a packet
    // sealed and opened again.
    system_random rng;
    auto round_trip = [&](std::string_view cipher, std::string_view mac) {
        const cipher_info* ci = find_cipher(cipher);
        const mac_info* mi = ci->aead ? nullptr : find_mac(mac);
        direction_keys k;
        k.enc_key = secret_bytes(ci->key_size);
        k.iv = secret_bytes(ci->iv_size);
        k.mac_key = secret_bytes(mi ? mi->key_size : 0);
        rng.fill(k.enc_key.span());
        rng.fill(k.iv.span());
        rng.fill(k.mac_key.span());
        auto sealer = make_packet_cipher(cipher, mac, k, cipher_direction::seal);
        auto opener = make_packet_cipher(cipher, mac, k, cipher_direction::open);
        if (!sealer || !opener)
            return false;
        const std::size_t block = (*sealer)->block_size();
        const std::size_t payload = 100;
        const std::size_t base = ((*sealer)->length_excluded_from_padding() ? 1 : 5) + payload;
        std::size_t pad = block - base % block;
        if (pad < 4)
            pad += block;
        bytes packet(5 + payload + pad, 0x5a);
        store_u32(packet.data(), static_cast<std::uint32_t>(1 + payload + pad));
        packet[4] = static_cast<std::uint8_t>(pad);
        const bytes plain = packet;
        bytes tag((*sealer)->tag_size());
        const packet_position pos{3, 0, 0};
        (*sealer)->seal(pos, packet, tag);
        if (packet == plain && !plain.empty())
            return false;
        return (*opener)->open(pos, packet, tag).has_value() && packet == plain;
    };
    bool ciphers = true;
    for (std::string_view c : supported_ciphers())
        ciphers = round_trip(c, find_cipher(c)->aead ? "" : "hmac-sha2-256-etm@openssh.com") && ciphers;
    report("ciphers", ciphers);
    bool macs = true;
    for (std::string_view m : supported_macs())
        macs = round_trip("aes128-ctr", m) && macs;
    report("macs", macs);

    const bytes key(32, 7);
    report("hmac", hmac_digest(hash_alg::sha256, key, as_bytes(message)).size() == 32 &&
                       hmac_digest(hash_alg::sha512, key, as_bytes(message)).size() == 64);
    report("digests", digest(hash_alg::sha1, as_bytes(message)).size() == 20 &&
                          digest(hash_alg::sha256, as_bytes(message)).size() == 32 &&
                          digest(hash_alg::sha384, as_bytes(message)).size() == 48 &&
                          digest(hash_alg::sha512, as_bytes(message)).size() == 64);
    unsigned char rnd[256];
    report("random", RAND_bytes(rnd, sizeof(rnd)) == 1 && RAND_poll() == 1 && RAND_priv_bytes(rnd, sizeof(rnd)) == 1);
    child_say(out, "done\n");
    _exit(0);
}
