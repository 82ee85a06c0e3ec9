#include "sshd/login_record.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utmp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace longhaul {

namespace {

// A C string field filled as strncpy does (NUL-padded, not necessarily
// terminated when full), which is how utmp and lastlog readers expect it.
template <std::size_t N>
void put_field(char (&field)[N], std::string_view value)
{
    std::memset(field, 0, N);
    std::memcpy(field, value.data(), std::min(N, value.size()));
}

template <std::size_t N>
std::string get_field(const char (&field)[N])
{
    return std::string(field, strnlen(field, N));
}

// ut_addr_v6: an IPv4 address (or an IPv4-mapped IPv6 one) in the first
// word, as OpenSSH's construct_utmpx() stores it.
void put_address(utmpx& u, const std::string& address)
{
    in_addr v4{};
    in6_addr v6{};
    if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
        std::memcpy(&u.ut_addr_v6[0], &v4, sizeof v4);
    } else if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
        if (IN6_IS_ADDR_V4MAPPED(&v6))
            std::memcpy(&u.ut_addr_v6[0], &v6.s6_addr[12], 4);
        else
            std::memcpy(u.ut_addr_v6, &v6, sizeof v6);
    }
}

void put_common(utmpx& u, pid_t pid, std::string_view tty, timeval when)
{
    u.ut_pid = pid;
    put_field(u.ut_line, tty_line(tty));
    put_field(u.ut_id, tty_id(tty));
    u.ut_tv.tv_sec = static_cast<decltype(u.ut_tv.tv_sec)>(when.tv_sec);
    u.ut_tv.tv_usec = static_cast<decltype(u.ut_tv.tv_usec)>(when.tv_usec);
}

std::string errno_text(const std::string& what)
{
    return what + ": " + std::strerror(errno);
}

// utmp through the C library, which locks the file and replaces the entry
// with the same ut_id; a file that cannot be opened for writing (no
// /run/utmp, as in many containers) is reported, not fatal.
std::string write_utmp(const std::string& path, const utmpx& u)
{
    if (utmpxname(path.c_str()) != 0)
        return errno_text("utmpxname " + path);
    setutxent();
    const bool ok = pututxline(&u) != nullptr;
    const int saved = errno;
    endutxent();
    errno = saved;
    return ok ? std::string() : errno_text("pututxline " + path);
}

// wtmp is appended to; updwtmpx() reports nothing, so the file is checked
// the way it opens it (an existing file, writable).
std::string write_wtmp(const std::string& path, const utmpx& u)
{
    if (::access(path.c_str(), W_OK) != 0)
        return errno_text("wtmp " + path);
    updwtmpx(path.c_str(), &u);
    return {};
}

// The offset of a user's lastlog slot: the file is indexed by uid.
off_t lastlog_offset(uid_t uid)
{
    return static_cast<off_t>(uid) * static_cast<off_t>(sizeof(struct lastlog));
}

// The user's slot, overwritten. No O_CREAT: like utmp and wtmp, the file
// is the system's to create.
std::string write_lastlog(const std::string& path, const login_entry& e)
{
    struct lastlog ll{};
    ll.ll_time = static_cast<decltype(ll.ll_time)>(e.when.tv_sec);
    put_field(ll.ll_line, tty_line(e.tty));
    put_field(ll.ll_host, e.host);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno_text("lastlog " + path);
    struct stat st{};
    std::string failed;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        failed = "lastlog " + path + ": not a regular file";
    else if (::pwrite(fd, &ll, sizeof ll, lastlog_offset(e.uid)) != static_cast<ssize_t>(sizeof ll))
        failed = errno_text("lastlog " + path);
    ::close(fd);
    return failed;
}

// "a; b" of what failed, for one log line.
void add_failure(std::string& failed, const std::string& what)
{
    if (!what.empty())
        failed += (failed.empty() ? "" : "; ") + what;
}

} // namespace

std::string login_host(const std::string& remote_host, const std::string& remote_address, unsigned utmp_length)
{
    if (utmp_length == 0 || remote_host.size() > utmp_length)
        return remote_address;
    return remote_host;
}

std::string tty_line(std::string_view tty)
{
    if (tty.substr(0, 5) == "/dev/")
        tty.remove_prefix(5);
    return std::string(tty);
}

std::string tty_id(std::string_view tty)
{
    std::string line = tty_line(tty);
    constexpr std::size_t id_size = sizeof(utmpx{}.ut_id);
    return line.size() > id_size ? line.substr(line.size() - id_size) : line;
}

utmpx login_utmpx(const login_entry& e)
{
    utmpx u{};
    u.ut_type = USER_PROCESS;
    put_common(u, e.pid, e.tty, e.when);
    put_field(u.ut_user, e.user);
    put_field(u.ut_host, e.host);
    put_address(u, e.address);
    return u;
}

utmpx logout_utmpx(pid_t pid, std::string_view tty, timeval when)
{
    utmpx u{};
    u.ut_type = DEAD_PROCESS;
    put_common(u, pid, tty, when);
    return u;
}

utmpx failed_login_utmpx(pid_t pid, std::string_view user, std::string_view host, const std::string& address,
                         timeval when)
{
    utmpx u{};
    u.ut_type = LOGIN_PROCESS;
    u.ut_pid = pid;
    put_field(u.ut_line, "ssh:notty");
    put_field(u.ut_user, user);
    put_field(u.ut_host, host);
    put_address(u, address);
    u.ut_tv.tv_sec = static_cast<decltype(u.ut_tv.tv_sec)>(when.tv_sec);
    u.ut_tv.tv_usec = static_cast<decltype(u.ut_tv.tv_usec)>(when.tv_usec);
    return u;
}

std::optional<last_login> read_last_login(const std::string& lastlog_path, uid_t uid)
{
    const int fd = ::open(lastlog_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    struct stat st{};
    struct lastlog ll{};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    const ssize_t n = regular ? ::pread(fd, &ll, sizeof ll, lastlog_offset(uid)) : -1;
    ::close(fd);
    if (n != static_cast<ssize_t>(sizeof ll) || ll.ll_time == 0)
        return std::nullopt;
    return last_login{static_cast<std::time_t>(ll.ll_time), get_field(ll.ll_line), get_field(ll.ll_host)};
}

std::string last_login_message(const last_login& l)
{
    char when[32] = {};
    const std::time_t t = l.time;
    if (::ctime_r(&t, when) == nullptr)
        return {};
    std::string text = "Last login: " + std::string(when, std::strcspn(when, "\n"));
    if (!l.host.empty())
        text += " from " + l.host;
    return text + "\r\n";
}

std::string write_login(const login_record_files& f, const login_entry& e)
{
    const utmpx u = login_utmpx(e);
    std::string failed = write_utmp(f.utmp, u);
    add_failure(failed, write_wtmp(f.wtmp, u));
    add_failure(failed, write_lastlog(f.lastlog, e));
    return failed;
}

std::string write_logout(const login_record_files& f, pid_t pid, std::string_view tty, timeval when)
{
    const utmpx u = logout_utmpx(pid, tty, when);
    std::string failed = write_utmp(f.utmp, u);
    add_failure(failed, write_wtmp(f.wtmp, u));
    return failed;
}

std::string write_failed_login(const std::string& btmp, const utmpx& u, bool& bad_file)
{
    bad_file = false;
    const int fd = ::open(btmp.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? std::string() : errno_text("btmp " + btmp);
    struct stat st{};
    std::string failed;
    if (::fstat(fd, &st) != 0) {
        failed = errno_text("btmp " + btmp);
    } else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IXGRP | S_IRWXO)) != 0) {
        bad_file = true;
        failed = "Excess permission or bad ownership on file " + btmp;
    } else if (::write(fd, &u, sizeof u) != static_cast<ssize_t>(sizeof u)) {
        failed = errno_text("Failed to write to " + btmp);
    }
    ::close(fd);
    return failed;
}

std::string login_recorder::login(pid_t pid, const std::string& tty)
{
    std::string message;
    if (s_.print_last_log)
        if (auto last = read_last_login(s_.files.lastlog, s_.uid))
            message = last_login_message(*last);
    if (!s_.write)
        return message;
    login_entry e;
    e.pid = pid;
    e.tty = tty;
    e.user = s_.user;
    e.uid = s_.uid;
    e.host = s_.host;
    e.address = s_.address;
    ::gettimeofday(&e.when, nullptr);
    if (std::string failed = write_login(s_.files, e); !failed.empty())
        log_.debug("login records of " + tty_line(tty) + " incomplete: " + failed);
    open_.emplace_back(tty, pid);
    return message;
}

void login_recorder::logout(const std::string& tty)
{
    auto it = std::find_if(open_.begin(), open_.end(), [&](const auto& o) { return o.first == tty; });
    if (it == open_.end())
        return;
    timeval now{};
    ::gettimeofday(&now, nullptr);
    if (std::string failed = write_logout(s_.files, it->second, tty, now); !failed.empty())
        log_.debug("logout records of " + tty_line(tty) + " incomplete: " + failed);
    open_.erase(it);
}

void login_recorder::logout_all()
{
    while (!open_.empty())
        logout(open_.back().first);
}

} // namespace longhaul
