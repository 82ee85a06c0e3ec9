// Login records, as OpenSSH's loginrec.c writes them on Linux for a
// session with a pty: a USER_PROCESS entry in utmp (who(1)) and wtmp
// (last(1)), the user's slot in lastlog (lastlog(8)), and at the session's
// end a DEAD_PROCESS entry in utmp and wtmp. Also PrintLastLog's
// "Last login:" line, read from lastlog before the new login is written.
#pragma once

#include "common/log.hpp"

#include <paths.h>
#include <sys/time.h>
#include <sys/types.h>
#include <utmpx.h>

#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace longhaul {

// Where the records live; tests point them at temporary files.
struct login_record_files {
    std::string utmp = _PATH_UTMPX;
    std::string wtmp = _PATH_WTMPX;
    std::string lastlog = _PATH_LASTLOG;
    std::string btmp = "/var/log/btmp"; // OpenSSH's _PATH_BTMP (glibc has none)
};

struct login_entry {
    pid_t pid = 0;       // the process that serves the session
    std::string tty;     // "/dev/pts/3"
    std::string user;
    uid_t uid = 0;
    std::string host;    // the client as utmp shows it (login_host)
    std::string address; // numeric, for ut_addr_v6 (anything else: none)
    timeval when{};
};

// The host utmp and lastlog record, as OpenSSH's
// session_get_remote_name_or_ip(): the canonical name (UseDNS) when it fits
// in `utmp_length` (sshd -u), otherwise the address; -u0 always the address.
std::string login_host(const std::string& remote_host, const std::string& remote_address, unsigned utmp_length);

// sshd's default -u: HOST_NAME_MAX + 1, as OpenSSH's; -u accepts 0..this.
inline constexpr unsigned default_utmp_length = 65;

// ut_line: the tty without "/dev/" ("pts/3"); ut_id: its last four
// characters ("ts/3"), as OpenSSH's line_stripname and line_abbrevname.
std::string tty_line(std::string_view tty);
std::string tty_id(std::string_view tty);

// The entries written (no I/O: tests check them field by field).
utmpx login_utmpx(const login_entry& e);
utmpx logout_utmpx(pid_t pid, std::string_view tty, timeval when);

// A failed login for btmp (lastb(1)), as OpenSSH's record_failed_login():
// a LOGIN_PROCESS entry on "ssh:notty" with the name the client gave.
utmpx failed_login_utmpx(pid_t pid, std::string_view user, std::string_view host, const std::string& address,
                         timeval when);

struct last_login {
    std::time_t time = 0;
    std::string line;
    std::string host;
};
// The user's lastlog slot; nullopt when there is none (no file, a short
// file, a zero time).
std::optional<last_login> read_last_login(const std::string& lastlog_path, uid_t uid);
// "Last login: Fri Dec  4 23:14:45 2026 from 127.0.0.1\r\n" (ctime, local
// time; no "from" without a host), as OpenSSH's store_lastlog_message().
std::string last_login_message(const last_login& l);

// Each returns what failed, for the log; empty when all was written.
std::string write_login(const login_record_files& f, const login_entry& e);
std::string write_logout(const login_record_files& f, pid_t pid, std::string_view tty, timeval when);
// btmp holds what clients typed as user names (passwords too, at times), so
// it is written only when root's and closed to others, as OpenSSH checks:
// otherwise `bad_file` is set and nothing is written. A missing file is no
// error (failed logins are then not recorded).
std::string write_failed_login(const std::string& btmp, const utmpx& u, bool& bad_file);

// One connection's records: the ptys it logged in, so that each is logged
// out once, when its session ends or, at the latest, with the connection.
class login_recorder {
public:
    struct settings {
        login_record_files files;
        std::string user;
        uid_t uid = 0;
        std::string host;
        std::string address;
        bool print_last_log = true;
        bool write = true; // false when not root: nothing could be written
    };
    login_recorder(settings s, logger& log) : s_(std::move(s)), log_(log) {}
    ~login_recorder() { logout_all(); }
    login_recorder(const login_recorder&) = delete;
    login_recorder& operator=(const login_recorder&) = delete;

    // Records a login on `tty` served by `pid`; returns the "Last login:"
    // line to show (empty under PrintLastLog no or for a first login).
    std::string login(pid_t pid, const std::string& tty);
    // Only a tty this recorder logged in (a request naming another is
    // ignored: the user's process may not write others' records).
    void logout(const std::string& tty);
    void logout_all();

private:
    settings s_;
    logger& log_;
    std::vector<std::pair<std::string, pid_t>> open_; // tty, pid
};

} // namespace longhaul
