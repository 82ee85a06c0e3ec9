#include "sshd/privsep/sandbox.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <grp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <seccomp.h>
#ifdef LONGHAUL_SANITIZER_RUNTIME
#include <sanitizer/common_interface_defs.h>
#endif
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <vector>

namespace longhaul::privsep {

namespace {

// The report descriptor, for the SIGSYS handler: a signal handler receives
// no pointer to any object, so this is the one process-wide value. Set once,
// before the filter is loaded, in a child that never goes back.
volatile sig_atomic_t g_sandbox_report_fd = -1;

// Async-signal-safe: formats with plain loops and only write()s (allowed by
// the filter) before _exit (exit_group, allowed).
void sandbox_report_and_exit(int, siginfo_t* info, void*)
{
    char line[64] = "sandbox: forbidden system call ";
    std::size_t n = sizeof("sandbox: forbidden system call ") - 1;
    long nr = info->si_syscall;
    if (nr < 0) {
        line[n++] = '-';
        nr = -nr;
    }
    char digits[24];
    std::size_t d = 0;
    do {
        digits[d++] = static_cast<char>('0' + nr % 10);
        nr /= 10;
    } while (nr != 0 && d < sizeof(digits));
    while (d > 0)
        line[n++] = digits[--d];
    line[n++] = '\n';
    const int fd = g_sandbox_report_fd;
    if (fd >= 0) {
        const ssize_t ignored = ::write(fd, line, n);
        (void)ignored;
    }
    _exit(128 + SIGSYS);
}

std::string sandbox_errno_text() { return std::strerror(errno); }

result<void> sandbox_fail(std::string& error, std::string text)
{
    error = std::move(text);
    return errc::io_error;
}

// OpenSSH's privsep_preauth_child() and permanently_set_uid(): the empty
// chroot first (it needs root), then the one group, gid and uid.
result<void> sandbox_drop_privileges(const sandbox_settings& s, std::string& error)
{
    if (!s.chroot_directory.empty()) {
        if (::chroot(s.chroot_directory.c_str()) != 0)
            return sandbox_fail(error, "chroot(\"" + s.chroot_directory + "\"): " + sandbox_errno_text());
        if (::chdir("/") != 0)
            return sandbox_fail(error, "chdir(\"/\"): " + sandbox_errno_text());
    }
    if (!s.uid)
        return {};
    const uid_t uid = *s.uid;
    const gid_t gid = *s.gid;
    if (::setgroups(1, &gid) != 0)
        return sandbox_fail(error, "setgroups: " + sandbox_errno_text());
    if (::setresgid(gid, gid, gid) != 0)
        return sandbox_fail(error, "setresgid " + std::to_string(gid) + ": " + sandbox_errno_text());
    if (::setresuid(uid, uid, uid) != 0)
        return sandbox_fail(error, "setresuid " + std::to_string(uid) + ": " + sandbox_errno_text());
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0)
        return sandbox_fail(error, "getresuid: " + sandbox_errno_text());
    if (ruid != uid || euid != uid || suid != uid || rgid != gid || egid != gid || sgid != gid)
        return sandbox_fail(error, "ids are not " + std::to_string(uid) + ":" + std::to_string(gid) + " after the switch");
    // As OpenSSH: a uid 0 "sshd" user is the administrator's choice, and
    // then root is what we are; otherwise root must be gone for good.
    if (uid != 0 && (::setgid(0) == 0 || ::setegid(0) == 0))
        return sandbox_fail(error, "was able to restore old [e]gid");
    if (uid != 0 && (::setuid(0) == 0 || ::seteuid(0) == 0))
        return sandbox_fail(error, "was able to restore old [e]uid");
    return {};
}

// OpenSSH's ssh_sandbox_child() limits: no file can grow, no process can be
// forked by our uid, and no descriptor numbered at or above the poll limit
// can appear (a file descriptor passed in a recvmsg() is then refused too).
result<void> sandbox_limit_resources(const sandbox_settings& s, std::string& error)
{
    struct limit {
        int resource;
        rlim_t value;
        const char* name;
    };
    const rlim_t files = s.poll_descriptors + sanitizer_descriptors;
    for (const limit& l : {limit{RLIMIT_FSIZE, 0, "RLIMIT_FSIZE"}, limit{RLIMIT_NOFILE, files, "RLIMIT_NOFILE"},
                           limit{RLIMIT_NPROC, 0, "RLIMIT_NPROC"}}) {
        const rlimit r{l.value, l.value};
        if (::setrlimit(l.resource, &r) != 0)
            return sandbox_fail(error, std::string("setrlimit(") + l.name + ", { " + std::to_string(l.value) + ", " +
                                           std::to_string(l.value) + " }): " + sandbox_errno_text());
    }
    return {};
}

struct seccomp_release_ctx {
    void operator()(void* ctx) const noexcept { seccomp_release(ctx); }
};
using seccomp_ctx_ptr = std::unique_ptr<void, seccomp_release_ctx>;

// What the filter does with one system call, by name so that the list reads
// the same on every architecture: names an architecture lacks (open on
// arm64, mmap2 on x86_64) are skipped there.
enum class sandbox_rule { allow, deny_eacces };
struct sandbox_call {
    const char* name;
    sandbox_rule rule;
};

// Everything allowed or refused; the rest kills the child. Grouped by what
// needs it (a child that does its transport, key exchange and userauth
// parsing on descriptors it was given, single-threaded, with OpenSSL
// already initialised).
constexpr sandbox_call sandbox_calls[] = {
    // Files and paths: refused with EACCES rather than fatal, as OpenSSH's
    // sandbox does, so that a library probing for a file (glibc's locale or
    // stdio buffering, an OpenSSL fallback) fails cleanly instead of killing
    // the connection. The chroot is empty anyway; without root these are
    // what keeps the child from reading files. fstat and newfstatat are here
    // too: glibc's fstat() is newfstatat(fd, "", AT_EMPTY_PATH), and a filter
    // cannot read the path to tell it from a stat of any file; stdio copes
    // with the failure (it then buffers with a default size). shm* and ipc:
    // OpenSSL's /dev/random wait falls back to a shared memory flag, which
    // must fail cleanly too.
    {"open", sandbox_rule::deny_eacces},
    {"openat", sandbox_rule::deny_eacces},
    {"openat2", sandbox_rule::deny_eacces},
    {"stat", sandbox_rule::deny_eacces},
    {"stat64", sandbox_rule::deny_eacces},
    {"lstat", sandbox_rule::deny_eacces},
    {"lstat64", sandbox_rule::deny_eacces},
    {"fstat", sandbox_rule::deny_eacces},
    {"fstat64", sandbox_rule::deny_eacces},
    {"newfstatat", sandbox_rule::deny_eacces},
    {"fstatat64", sandbox_rule::deny_eacces},
    {"statx", sandbox_rule::deny_eacces},
    {"access", sandbox_rule::deny_eacces},
    {"faccessat", sandbox_rule::deny_eacces},
    {"faccessat2", sandbox_rule::deny_eacces},
    {"shmget", sandbox_rule::deny_eacces},
    {"shmat", sandbox_rule::deny_eacces},
    {"shmdt", sandbox_rule::deny_eacces},
    {"ipc", sandbox_rule::deny_eacces},

    // I/O on the descriptors the child already holds (the client's socket,
    // the monitor's socketpair). Nothing here can create a descriptor:
    // socket, accept, pipe, dup and the open family are absent or refused.
    // sendto/sendmsg with an address fail on these connected sockets.
    {"read", sandbox_rule::allow},
    {"readv", sandbox_rule::allow},
    {"write", sandbox_rule::allow},
    {"writev", sandbox_rule::allow},
    {"recvfrom", sandbox_rule::allow},
    {"recvmsg", sandbox_rule::allow},
    {"sendto", sandbox_rule::allow},
    {"sendmsg", sandbox_rule::allow},
    {"shutdown", sandbox_rule::allow},
    {"close", sandbox_rule::allow},

    // Waiting for those descriptors and for time. restart_syscall resumes a
    // poll or sleep after SIGSTOP/SIGCONT (a debugger, job control), which
    // would otherwise kill the child.
    {"poll", sandbox_rule::allow},
    {"ppoll", sandbox_rule::allow},
    {"ppoll_time64", sandbox_rule::allow},
    {"select", sandbox_rule::allow},
    {"_newselect", sandbox_rule::allow},
    {"pselect6", sandbox_rule::allow},
    {"pselect6_time64", sandbox_rule::allow},
    {"restart_syscall", sandbox_rule::allow},

    // Clocks and sleeping. The vDSO usually answers clock reads without a
    // system call, but falls back to one when the clock source cannot be
    // read from user space (some virtual machines).
    {"clock_gettime", sandbox_rule::allow},
    {"clock_gettime64", sandbox_rule::allow},
    {"gettimeofday", sandbox_rule::allow},
    {"time", sandbox_rule::allow},
    {"clock_nanosleep", sandbox_rule::allow},
    {"clock_nanosleep_time64", sandbox_rule::allow},
    {"nanosleep", sandbox_rule::allow},

    // Memory for malloc (brk for the main arena, mmap for large blocks,
    // mremap for realloc of those, madvise for trimming). mmap and mprotect
    // are added below with their arguments checked: never PROT_EXEC, so no
    // new code can be mapped.
    {"brk", sandbox_rule::allow},
    {"munmap", sandbox_rule::allow},
    {"mremap", sandbox_rule::allow},
    {"madvise", sandbox_rule::allow},

    // Locks (glibc and OpenSSL take them even with one thread; contention
    // cannot happen, but the calls must not be fatal if it does) and yielding.
    {"futex", sandbox_rule::allow},
    {"futex_time64", sandbox_rule::allow},
    {"sched_yield", sandbox_rule::allow},

    // Randomness: OpenSSL's DRBG reseeds from getrandom (the /dev/urandom
    // fallback is refused above), and checks getpid to notice a fork.
    {"getrandom", sandbox_rule::allow},
    {"getpid", sandbox_rule::allow},
    {"gettid", sandbox_rule::allow},

    // Reading our own ids changes nothing; libraries ask (OpenSSL's
    // secure_getenv fallback, glibc's issetugid checks).
    {"getuid", sandbox_rule::allow},
    {"geteuid", sandbox_rule::allow},
    {"getgid", sandbox_rule::allow},
    {"getegid", sandbox_rule::allow},
    {"getuid32", sandbox_rule::allow},
    {"geteuid32", sandbox_rule::allow},
    {"getgid32", sandbox_rule::allow},
    {"getegid32", sandbox_rule::allow},

    // Signals: masking (glibc blocks signals around some operations) and
    // returning from a handler installed before the sandbox. Installing a
    // handler (rt_sigaction) and sending a signal (kill, tgkill) are absent:
    // abort() is then ended by the filter, which is what it wanted anyway.
    {"rt_sigprocmask", sandbox_rule::allow},
    {"sigprocmask", sandbox_rule::allow},
    {"rt_sigreturn", sandbox_rule::allow},
    {"sigreturn", sandbox_rule::allow},
    // An alternate signal stack names memory the process already has; the
    // sanitizer runtimes (CI's AddressSanitizer builds) set and clear one
    // around exit.
    {"sigaltstack", sandbox_rule::allow},
#ifdef LONGHAUL_SANITIZER_RUNTIME
    // The sanitizer runtime probes whether memory is readable by writing it
    // into a pipe (when that fails it reports a false error), hence also
    // sanitizer_descriptors. Not in release builds.
    {"pipe", sandbox_rule::allow},
    {"pipe2", sandbox_rule::allow},
#endif

    // Leaving.
    {"exit", sandbox_rule::allow},
    {"exit_group", sandbox_rule::allow},
};

result<void> sandbox_add(scmp_filter_ctx ctx, int nr, std::uint32_t action, std::string_view name,
                         const std::vector<scmp_arg_cmp>& args, std::string& error)
{
    const int rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(args.size()),
                                          args.empty() ? nullptr : args.data());
    if (rc != 0)
        return sandbox_fail(error, "seccomp_rule_add " + std::string(name) + ": " + std::strerror(-rc));
    return {};
}

result<void> sandbox_load_filter(std::uint32_t kill_action, std::string& error)
{
    seccomp_ctx_ptr ctx(seccomp_init(kill_action));
    if (!ctx)
        return sandbox_fail(error, "seccomp_init failed");
    // Only the native architecture's calls get through (the filter begins
    // with OpenSSH's AUDIT_ARCH check); libseccomp's x86_64 filter also
    // sends x32 calls (numbers with __X32_SYSCALL_BIT) here, so that the
    // other ABI's numbering cannot slip past the list.
    int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, kill_action);
    if (rc != 0)
        return sandbox_fail(error, std::string("seccomp_attr_set ACT_BADARCH: ") + std::strerror(-rc));
    for (const sandbox_call& c : sandbox_calls) {
        const int nr = seccomp_syscall_resolve_name(c.name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue; // not a system call on this architecture
        const std::uint32_t action = c.rule == sandbox_rule::allow ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EACCES);
        if (!sandbox_add(ctx.get(), nr, action, c.name, {}, error))
            return errc::io_error;
    }
    // Memory mappings, but never executable ones (any bit beyond read and
    // write, PROT_EXEC above all, makes the call fatal), as OpenSSH's.
    const scmp_datum_t not_rw = ~static_cast<scmp_datum_t>(PROT_READ | PROT_WRITE);
    for (const char* name : {"mmap", "mmap2", "mprotect"}) {
        const int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue;
        if (!sandbox_add(ctx.get(), nr, SCMP_ACT_ALLOW, name, {SCMP_A2(SCMP_CMP_MASKED_EQ, not_rw, 0)}, error))
            return errc::io_error;
    }
    // setsockopt only for TCP_QUICKACK: the child acknowledges what it read
    // at once (preauth_child::acknowledge_now).
    if (const int nr = seccomp_syscall_resolve_name("setsockopt"); nr != __NR_SCMP_ERROR && nr >= 0 &&
        !sandbox_add(ctx.get(), nr, SCMP_ACT_ALLOW, "setsockopt",
                     {SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(IPPROTO_TCP)),
                      SCMP_A2(SCMP_CMP_EQ, static_cast<scmp_datum_t>(TCP_QUICKACK))},
                     error))
        return errc::io_error;
    // fcntl only to read a descriptor's flags and switch O_NONBLOCK; never
    // F_DUPFD, locks or F_SETOWN.
    for (const char* name : {"fcntl", "fcntl64"}) {
        const int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue;
        for (const int cmd : {F_GETFL, F_SETFL, F_GETFD})
            if (!sandbox_add(ctx.get(), nr, SCMP_ACT_ALLOW, name,
                             {SCMP_A1(SCMP_CMP_EQ, static_cast<scmp_datum_t>(cmd))}, error))
                return errc::io_error;
    }
#ifdef LONGHAUL_SANITIZER_RUNTIME
    // Lets the runtime prepare what its reports need while it still can
    // (a finding inside the sandbox should still print its report).
    __sanitizer_sandbox_on_notify(nullptr);
#endif
    rc = seccomp_load(ctx.get());
    if (rc != 0)
        return sandbox_fail(error, std::string("seccomp_load: ") + std::strerror(-rc));
    return {};
}

} // namespace

result<sandbox_settings> preauth_sandbox_settings(std::string& error, std::string_view user, std::string_view directory)
{
    sandbox_settings s;
    // OpenSSH's privsep_chroot: only root can chroot and change ids.
    if (::geteuid() != 0)
        return s;
    const std::string name(user);
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    int rc;
    while ((rc = ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found)) == ERANGE && buf.size() < (1u << 20))
        buf.resize(buf.size() * 2);
    if (found == nullptr) {
        error = "Privilege separation user " + name + " does not exist";
        return errc::invalid_argument;
    }
    const std::string dir(directory);
    struct stat st{};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        error = "Missing privilege separation directory: " + dir;
        return errc::invalid_argument;
    }
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        error = dir + " must be owned by root and not group or world-writable.";
        return errc::bad_permissions;
    }
    s.chroot_directory = dir;
    s.uid = pw.pw_uid;
    s.gid = pw.pw_gid;
    return s;
}

result<void> enter_preauth_sandbox(const sandbox_settings& settings, std::string& error)
{
    if (settings.uid.has_value() != settings.gid.has_value()) {
        error = "sandbox: a uid needs a gid and a gid a uid";
        return errc::invalid_argument;
    }
    if (settings.poll_descriptors == 0) {
        // poll() of even one descriptor would fail with EINVAL.
        error = "sandbox: poll_descriptors must be at least 1";
        return errc::invalid_argument;
    }
    if ((settings.uid || !settings.chroot_directory.empty()) && ::geteuid() != 0) {
        error = "sandbox: chroot and a change of user need root";
        return errc::invalid_argument;
    }
    // OpenSSL reads its configuration and loads its providers on first use,
    // and instantiates its DRBG on the first random bytes: both open files
    // (openssl.cnf, maybe /dev/urandom) that neither the chroot nor the
    // filter will let it open later. Harmless when already done.
    if (OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr) != 1) {
        error = "sandbox: OpenSSL initialisation failed";
        return errc::crypto_error;
    }
    unsigned char seed_check[16];
    if (RAND_bytes(seed_check, sizeof(seed_check)) != 1) {
        error = "sandbox: OpenSSL's random generator cannot be seeded";
        return errc::crypto_error;
    }
    OPENSSL_cleanse(seed_check, sizeof(seed_check));
    if (!sandbox_drop_privileges(settings, error))
        return errc::io_error;
    if (!sandbox_limit_resources(settings, error))
        return errc::io_error;
    // No set-id or file-capability execution can ever raise us again, and
    // (what the kernel requires of an unprivileged process) the filter may
    // be loaded. Set here rather than left to libseccomp so that it holds
    // whatever libseccomp's defaults become, and checked because the rest
    // depends on it.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
        return sandbox_fail(error, "prctl(PR_SET_NO_NEW_PRIVS): " + sandbox_errno_text());

    // With a report descriptor, a forbidden call traps into a handler that
    // says which call it was (the way to find what a library needs); the
    // handler runs inside the filter and can do nothing the child could not
    // do anyway, and it never returns to the code that made the call.
    // Without one, the kernel kills the process outright: no user code runs
    // after the violation, and the audit log records the call.
    std::uint32_t kill_action = SCMP_ACT_KILL_PROCESS;
    if (seccomp_api_get() < 3)
        kill_action = SCMP_ACT_KILL; // kernels before 4.14; the same for one thread
    if (settings.report_fd >= 0) {
        g_sandbox_report_fd = settings.report_fd;
        struct sigaction sa{};
        sa.sa_sigaction = sandbox_report_and_exit;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigset_t sys;
        sigemptyset(&sys);
        sigaddset(&sys, SIGSYS);
        if (::sigaction(SIGSYS, &sa, nullptr) != 0 || ::sigprocmask(SIG_UNBLOCK, &sys, nullptr) != 0)
            return sandbox_fail(error, "sigaction(SIGSYS): " + sandbox_errno_text());
        kill_action = SCMP_ACT_TRAP;
    }
    return sandbox_load_filter(kill_action, error);
}

} // namespace longhaul::privsep
