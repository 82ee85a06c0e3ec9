#include "sshd/login_record.hpp"

#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <utmp.h>

#include <cstring>
#include <fstream>

using namespace longhaul;

namespace {

std::string fixed_field(const char* f, std::size_t n) { return std::string(f, strnlen(f, n)); }
#define FIELD(u, name) fixed_field((u).name, sizeof((u).name))

// Empty record files in a temporary directory, as the system keeps them.
struct record_files {
    test::temp_dir dir;
    login_record_files files;
    record_files()
    {
        files = {dir.file("utmp"), dir.file("wtmp"), dir.file("lastlog")};
        for (const auto* p : {&files.utmp, &files.wtmp, &files.lastlog})
            std::ofstream(*p).flush();
    }
};

// Every entry of a utmp-format file, in order.
std::vector<utmpx> entries(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::vector<utmpx> out;
    utmpx u{};
    while (in.read(reinterpret_cast<char*>(&u), sizeof u))
        out.push_back(u);
    return out;
}

// The TZ of a test, restored after it (ctime formats local time).
class time_zone {
public:
    explicit time_zone(const char* tz)
    {
        if (const char* old = std::getenv("TZ"))
            old_ = old;
        ::setenv("TZ", tz, 1);
        ::tzset();
    }
    ~time_zone()
    {
        if (old_)
            ::setenv("TZ", old_->c_str(), 1);
        else
            ::unsetenv("TZ");
        ::tzset();
    }

private:
    std::optional<std::string> old_;
};

login_entry login_at(const std::string& tty, const std::string& address = "192.0.2.7")
{
    login_entry e;
    e.pid = 4242;
    e.tty = tty;
    e.user = "alice";
    e.uid = 1001;
    e.host = "client.example";
    e.address = address;
    e.when = {1796426085, 123456};
    return e;
}

constexpr std::time_t dec4 = 1796426085; // Fri Dec  4 23:14:45 2026 UTC

} // namespace

TEST_CASE("login records: tty line and id, the host utmp shows")
{
    CHECK(tty_line("/dev/pts/3") == "pts/3");
    CHECK(tty_id("/dev/pts/3") == "ts/3");
    CHECK(tty_id("/dev/pts/123") == "/123");
    CHECK(tty_id("/dev/tty1") == "tty1");
    CHECK(tty_line("pts/9") == "pts/9");
    // -u: the name while it fits, else the address; -u0 always the address.
    CHECK(login_host("client.example", "192.0.2.7", default_utmp_length) == "client.example");
    CHECK(login_host("client.example", "192.0.2.7", 14) == "client.example");
    CHECK(login_host("client.example", "192.0.2.7", 13) == "192.0.2.7");
    CHECK(login_host("client.example", "192.0.2.7", 0) == "192.0.2.7");
    CHECK(login_host(std::string(70, 'h'), "192.0.2.7", default_utmp_length) == "192.0.2.7");
}

TEST_CASE("login records: the utmp entries of a login and a logout")
{
    const utmpx in = login_utmpx(login_at("/dev/pts/3"));
    CHECK(in.ut_type == USER_PROCESS);
    CHECK(in.ut_pid == 4242);
    CHECK(FIELD(in, ut_line) == "pts/3");
    CHECK(FIELD(in, ut_id) == "ts/3");
    CHECK(FIELD(in, ut_user) == "alice");
    CHECK(FIELD(in, ut_host) == "client.example");
    CHECK(in.ut_tv.tv_sec == 1796426085);
    CHECK(in.ut_tv.tv_usec == 123456);
    in_addr v4{};
    REQUIRE(inet_pton(AF_INET, "192.0.2.7", &v4) == 1);
    CHECK(std::memcmp(&in.ut_addr_v6[0], &v4, 4) == 0);
    CHECK(in.ut_addr_v6[1] == 0);

    // IPv4-mapped addresses are stored as IPv4; others whole; names not.
    const utmpx mapped = login_utmpx(login_at("/dev/pts/3", "::ffff:192.0.2.7"));
    CHECK(std::memcmp(&mapped.ut_addr_v6[0], &v4, 4) == 0);
    CHECK(mapped.ut_addr_v6[3] == 0);
    const utmpx v6 = login_utmpx(login_at("/dev/pts/3", "2001:db8::1"));
    in6_addr a6{};
    REQUIRE(inet_pton(AF_INET6, "2001:db8::1", &a6) == 1);
    CHECK(std::memcmp(v6.ut_addr_v6, &a6, 16) == 0);
    const utmpx none = login_utmpx(login_at("/dev/pts/3", "UNKNOWN"));
    for (auto w : none.ut_addr_v6)
        CHECK(w == 0);

    // Long values are cut to the field, never past it.
    login_entry e = login_at("/dev/pts/3");
    e.user = std::string(100, 'u');
    e.host = std::string(300, 'h');
    const utmpx cut = login_utmpx(e);
    CHECK(FIELD(cut, ut_user) == std::string(sizeof cut.ut_user, 'u'));
    CHECK(FIELD(cut, ut_host) == std::string(sizeof cut.ut_host, 'h'));

    const utmpx out = logout_utmpx(4242, "/dev/pts/3", {1796426100, 0});
    CHECK(out.ut_type == DEAD_PROCESS);
    CHECK(out.ut_pid == 4242);
    CHECK(FIELD(out, ut_line) == "pts/3");
    CHECK(FIELD(out, ut_id) == "ts/3");
    CHECK(FIELD(out, ut_user).empty());
    CHECK(FIELD(out, ut_host).empty());
    CHECK(out.ut_tv.tv_sec == 1796426100);
}

TEST_CASE("login records: written to utmp, wtmp and lastlog, and read back")
{
    record_files r;
    CHECK(write_login(r.files, login_at("/dev/pts/3")).empty());
    auto u = entries(r.files.utmp);
    REQUIRE(u.size() == 1);
    CHECK(u[0].ut_type == USER_PROCESS);
    CHECK(FIELD(u[0], ut_user) == "alice");
    auto w = entries(r.files.wtmp);
    REQUIRE(w.size() == 1);
    CHECK(FIELD(w[0], ut_host) == "client.example");

    // lastlog is indexed by uid: slot 1001, the slots before it empty.
    CHECK(std::filesystem::file_size(r.files.lastlog) == 1002 * sizeof(struct lastlog));
    auto last = read_last_login(r.files.lastlog, 1001);
    REQUIRE(last);
    CHECK(last->time == 1796426085);
    CHECK(last->line == "pts/3");
    CHECK(last->host == "client.example");
    CHECK_FALSE(read_last_login(r.files.lastlog, 1000)); // a zero time
    CHECK_FALSE(read_last_login(r.files.lastlog, 5000)); // past the end
    CHECK_FALSE(read_last_login(r.dir.file("missing"), 1001));
    CHECK_FALSE(read_last_login(r.dir.path(), 1001)); // not a regular file

    // The logout replaces the utmp entry (same id) and is appended to wtmp.
    CHECK(write_logout(r.files, 4242, "/dev/pts/3", {1796426100, 0}).empty());
    u = entries(r.files.utmp);
    REQUIRE(u.size() == 1);
    CHECK(u[0].ut_type == DEAD_PROCESS);
    w = entries(r.files.wtmp);
    REQUIRE(w.size() == 2);
    CHECK(w[1].ut_type == DEAD_PROCESS);
    CHECK(FIELD(w[1], ut_line) == "pts/3");

    // A second tty gets its own utmp entry.
    CHECK(write_login(r.files, login_at("/dev/pts/4")).empty());
    CHECK(entries(r.files.utmp).size() == 2);
}

TEST_CASE("login records: missing or unusable files are reported, nothing else is created")
{
    test::temp_dir dir;
    const login_record_files files{dir.file("utmp"), dir.file("wtmp"), dir.file("lastlog")};
    const std::string failed = write_login(files, login_at("/dev/pts/3"));
    CHECK(failed.find("utmp") != std::string::npos);
    CHECK(failed.find("wtmp") != std::string::npos);
    CHECK(failed.find("lastlog") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(files.wtmp));
    CHECK_FALSE(std::filesystem::exists(files.lastlog));
    CHECK_FALSE(write_logout(files, 1, "/dev/pts/3", {}).empty());

    // A lastlog that is a symbolic link is not followed.
    record_files r;
    std::filesystem::remove(r.files.lastlog);
    std::filesystem::create_symlink(r.dir.file("wtmp"), r.files.lastlog);
    CHECK(write_login(r.files, login_at("/dev/pts/3")).find("lastlog") != std::string::npos);
    CHECK(entries(r.files.wtmp).size() == 1);
}

TEST_CASE("login records: PrintLastLog's line is ctime in local time, with the host when there is one")
{
    time_zone utc("UTC0");
    CHECK(last_login_message({dec4, "pts/3", "192.0.2.7"}) == "Last login: Fri Dec  4 23:14:45 2026 from 192.0.2.7\r\n");
    CHECK(last_login_message({dec4, "pts/3", ""}) == "Last login: Fri Dec  4 23:14:45 2026\r\n");
    time_zone paris("CET-1");
    CHECK(last_login_message({dec4, "pts/3", "h"}) == "Last login: Sat Dec  5 00:14:45 2026 from h\r\n");
}

TEST_CASE("login records: a recorder logs out what it logged in, once")
{
    time_zone utc("UTC0");
    record_files r;
    logger log("test");
    login_recorder::settings s;
    s.files = r.files;
    s.user = "alice";
    s.uid = 1001;
    s.host = "client.example";
    s.address = "192.0.2.7";
    {
        login_recorder rec(s, log);
        CHECK(rec.login(10, "/dev/pts/3").empty()); // a first login: no line
        const std::string second = rec.login(10, "/dev/pts/4");
        CHECK(second.rfind("Last login: ", 0) == 0);
        CHECK(second.find(" from client.example\r\n") != std::string::npos);
        rec.logout("/dev/pts/9"); // not this recorder's: ignored
        CHECK(entries(r.files.wtmp).size() == 2);
        rec.logout("/dev/pts/3");
        rec.logout("/dev/pts/3"); // once only
        CHECK(entries(r.files.wtmp).size() == 3);
    } // the rest at the end
    const auto w = entries(r.files.wtmp);
    REQUIRE(w.size() == 4);
    CHECK(w[3].ut_type == DEAD_PROCESS);
    CHECK(FIELD(w[3], ut_line) == "pts/4");

    // PrintLastLog no: the records, no line.
    s.print_last_log = false;
    {
        login_recorder rec(s, log);
        CHECK(rec.login(11, "/dev/pts/5").empty());
    }
    CHECK(entries(r.files.wtmp).size() == 6);

    // Not root: the line, no records.
    s.print_last_log = true;
    s.write = false;
    {
        login_recorder rec(s, log);
        CHECK_FALSE(rec.login(12, "/dev/pts/6").empty());
        rec.logout("/dev/pts/6");
    }
    CHECK(entries(r.files.wtmp).size() == 6);
}

TEST_CASE("login records: a failed login goes to btmp only when the file is root's and closed to others")
{
    const utmpx f = failed_login_utmpx(77, "mallory", "client.example", "192.0.2.7", {1796426085, 0});
    CHECK(f.ut_type == LOGIN_PROCESS);
    CHECK(f.ut_pid == 77);
    CHECK(FIELD(f, ut_line) == "ssh:notty");
    CHECK(FIELD(f, ut_user) == "mallory");
    CHECK(FIELD(f, ut_host) == "client.example");
    CHECK(FIELD(f, ut_id).empty());
    CHECK(f.ut_addr_v6[0] != 0);

    test::temp_dir dir;
    const std::string btmp = dir.file("btmp");
    bool bad = true;
    CHECK(write_failed_login(btmp, f, bad).empty()); // none: nothing recorded, no error
    CHECK_FALSE(bad);
    CHECK_FALSE(std::filesystem::exists(btmp));

    std::ofstream(btmp).flush();
    ::chmod(btmp.c_str(), 0644); // readable by all: refused
    CHECK(write_failed_login(btmp, f, bad) == "Excess permission or bad ownership on file " + btmp);
    CHECK(bad);
    CHECK(std::filesystem::file_size(btmp) == 0);
    ::chmod(btmp.c_str(), 0660);
    if (::geteuid() == 0) {
        CHECK(write_failed_login(btmp, f, bad).empty());
        CHECK(write_failed_login(btmp, f, bad).empty());
        const auto all = entries(btmp);
        REQUIRE(all.size() == 2);
        CHECK(FIELD(all[1], ut_user) == "mallory");
    } else {
        // Owned by this user, not root: refused the same way.
        CHECK_FALSE(write_failed_login(btmp, f, bad).empty());
        CHECK(bad);
    }
}
