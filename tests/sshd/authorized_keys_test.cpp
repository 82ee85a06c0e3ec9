#include "sshd/authorized_keys.hpp"

#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "sshd/secure_path.hpp"
#include "tests/sshd/sshd_test_util.hpp"

#include "tests/skip.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

using namespace longhaul;
using longhaul::test::temp_dir;
using longhaul::test::write_file;

namespace {

const public_key& key_a()
{
    static const public_key k = private_key::generate(key_type::ed25519)->public_part();
    return k;
}
const public_key& key_b()
{
    static const public_key k = private_key::generate(key_type::ecdsa_p256)->public_part();
    return k;
}

std::string line_for(const public_key& k, const std::string& options = "", const std::string& comment = "c")
{
    return (options.empty() ? "" : options + " ") + format_public_key_line(k, comment);
}

authorized_keys_context ctx(std::string ip = "192.0.2.7", std::string host = "")
{
    authorized_keys_context c;
    c.user = "alice";
    c.remote_address = ip;
    c.remote_host = host.empty() ? ip : host;
    c.now = 1700000000; // 2023-11-14T22:13:20Z
    return c;
}

authorized_key_options options_of(const std::string& text)
{
    std::string reason;
    auto o = parse_authorized_key_options(text, reason);
    INFO(text << ": " << reason);
    REQUIRE(o);
    return *o;
}

std::string option_error(const std::string& text)
{
    std::string reason;
    auto o = parse_authorized_key_options(text, reason);
    return o ? "(accepted)" : reason;
}

bool logged(const authorized_keys_result& r, syslog_level level, const std::string& text)
{
    return std::any_of(r.log.begin(), r.log.end(), [&](const log_message& m) { return m.level == level && m.text == text; });
}

} // namespace

TEST_CASE("authorized_keys: option flags, restrict and re-enabling")
{
    auto o = options_of("no-pty,no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-user-rc");
    CHECK_FALSE(o.permit_pty);
    CHECK_FALSE(o.permit_port_forwarding);
    CHECK_FALSE(o.permit_agent_forwarding);
    CHECK_FALSE(o.permit_x11_forwarding);
    CHECK_FALSE(o.permit_user_rc);
    CHECK_FALSE(o.restricted);

    o = options_of("restrict");
    CHECK(o.restricted);
    CHECK_FALSE(o.permit_pty);
    CHECK_FALSE(o.permit_port_forwarding);
    CHECK_FALSE(o.permit_agent_forwarding);
    CHECK_FALSE(o.permit_x11_forwarding);
    CHECK_FALSE(o.permit_user_rc);

    o = options_of("restrict,pty,port-forwarding,agent-forwarding,X11-forwarding,user-rc");
    CHECK(o.restricted);
    CHECK(o.permit_pty);
    CHECK(o.permit_port_forwarding);
    CHECK(o.permit_agent_forwarding);
    CHECK(o.permit_x11_forwarding);
    CHECK(o.permit_user_rc);

    // Names are case-insensitive, as in OpenSSH.
    o = options_of("RESTRICT,Pty,No-Touch-Required,verify-required,cert-authority");
    CHECK(o.permit_pty);
    CHECK(o.no_touch_required);
    CHECK(o.verify_required);
    CHECK(o.cert_authority);

    // Both security-key flags take "no-" (OpenSSH's opt_flag with
    // negation), the last one said counting.
    o = options_of("verify-required,no-verify-required,no-touch-required,touch-required");
    CHECK_FALSE(o.verify_required);
    CHECK_FALSE(o.no_touch_required);
}

TEST_CASE("authorized_keys: valued options and their errors")
{
    auto o = options_of("command=\"echo \\\"hi\\\", there\",from=\"10.0.0.0/8,*.example.org\","
                        "environment=\"LANG=C\",environment=\"TZ=UTC\",environment=\"LANG=fr\","
                        "permitopen=\"host:22\",permitopen=\"[::1]:*\",permitlisten=\"8080\","
                        "permitlisten=\"localhost:9000\",principals=\"a,b\",tunnel=\"3\","
                        "expiry-time=\"20300101\",expiry-time=\"20250101Z\"");
    CHECK(o.force_command == "echo \"hi\", there");
    CHECK(o.required_from == "10.0.0.0/8,*.example.org");
    CHECK(o.environment == std::vector<std::string>{"LANG=C", "TZ=UTC"});
    CHECK(o.permit_open == std::vector<std::string>{"host:22", "[::1]:*"});
    CHECK(o.permit_listen == std::vector<std::string>{"*:8080", "localhost:9000"});
    CHECK(o.principals == "a,b");
    CHECK(o.force_tunnel_device == 3);
    CHECK(o.valid_before == 1735689600); // the earliest: 2025-01-01T00:00:00Z

    CHECK(option_error("bogus") == "unknown key option");
    CHECK(option_error("no-restrict") == "unknown key option");
    CHECK(option_error("command=\"a\",command=\"b\"") == "multiple \"command\" clauses");
    CHECK(option_error("from=\"a\",from=\"b\"") == "multiple \"from\" clauses");
    CHECK(option_error("principals=\"a\",principals=\"b\"") == "multiple \"principals\" clauses");
    CHECK(option_error("expiry-time=\"2020\"") == "invalid expires time");
    CHECK(option_error("expiry-time=\"20201301\"") == "invalid expires time");
    CHECK(option_error("environment=\"NOEQUALS\"") == "invalid environment string");
    CHECK(option_error("environment=\"BAD-NAME=x\"") == "invalid environment string");
    CHECK(option_error("permitopen=\"host\"") == "invalid permission port");
    CHECK(option_error("permitopen=\"host:0\"") == "invalid permission port");
    CHECK(option_error("permitopen=\"[::1\"") == "invalid permission hostname");
    CHECK(option_error("tunnel=\"x\"") == "invalid tun device");
    CHECK(option_error("command=\"unterminated") != "(accepted)");
    CHECK(option_error("pty,") != "(accepted)");
}

TEST_CASE("authorized_keys: expiry-time formats")
{
    CHECK(parse_expiry_time("20240229Z") == 1709164800);
    CHECK(parse_expiry_time("202402291230Z") == 1709209800);
    CHECK(parse_expiry_time("20240229123045UTC") == 1709209845);
    CHECK_FALSE(parse_expiry_time("2024022"));
    CHECK_FALSE(parse_expiry_time("2024022912a0"));
    // Local time: whatever mktime() says for the same fields (standard time).
    std::tm tm{};
    tm.tm_year = 2024 - 1900;
    tm.tm_mon = 1;
    tm.tm_mday = 29;
    tm.tm_hour = 12;
    tm.tm_min = 30;
    CHECK(parse_expiry_time("202402291230") == static_cast<std::uint64_t>(mktime(&tm)));
}

TEST_CASE("authorized_keys: finding the line for a key")
{
    const std::string file = "# comment\n\n" + line_for(key_b()) + "\n" + line_for(key_a(), "no-pty,command=\"/bin/id\"") +
                             "\n" + line_for(key_a(), "restrict") + "\n";
    auto r = check_authorized_keys(file, "/home/alice/.ssh/authorized_keys", key_a(), ctx());
    REQUIRE(r.match);
    CHECK(r.match->location == "/home/alice/.ssh/authorized_keys:4");
    CHECK(r.match->options.force_command == "/bin/id");
    CHECK_FALSE(r.match->options.permit_pty);
    CHECK(logged(r, syslog_level::verbose,
                 "Accepted key ED25519 " + key_a().fingerprint_sha256() + " found at /home/alice/.ssh/authorized_keys:4"));

    auto none = check_authorized_keys(line_for(key_b()) + "\n", "f", key_a(), ctx());
    CHECK_FALSE(none.match);

    // Options given as leading whitespace, CR LF endings and odd comments.
    auto crlf = check_authorized_keys("  " + line_for(key_a(), "", "a comment with spaces") + "\r\n", "f", key_a(), ctx());
    CHECK(crlf.match);

    // A bad options field is skipped and the next line is still read.
    auto bad = check_authorized_keys(line_for(key_a(), "bogus-option") + "\n" + line_for(key_a(), "no-pty") + "\n", "f",
                                     key_a(), ctx());
    REQUIRE(bad.match);
    CHECK(bad.match->location == "f:2");
    CHECK(logged(bad, syslog_level::debug1, "f:1: bad key options: unknown key option"));
    auto unterminated = check_authorized_keys("command=\"x " + format_public_key_line(key_a(), "c") + "\n", "f", key_a(), ctx());
    CHECK_FALSE(unterminated.match);
    CHECK(logged(unterminated, syslog_level::error, "invalid key option string"));
}

TEST_CASE("authorized_keys: from= with addresses, CIDR, host patterns and negation")
{
    auto check = [](const std::string& from, const std::string& ip, const std::string& host = "") {
        auto r = check_authorized_keys(line_for(key_a(), "from=\"" + from + "\""), "ak", key_a(), ctx(ip, host));
        return r.match.has_value();
    };
    CHECK(check("192.0.2.7", "192.0.2.7"));
    CHECK(check("10.0.0.0/8,192.0.2.0/24", "192.0.2.7"));
    CHECK_FALSE(check("10.0.0.0/8", "192.0.2.7"));
    CHECK(check("192.0.2.*", "192.0.2.7"));
    CHECK_FALSE(check("192.0.2.0/24,!192.0.2.7", "192.0.2.7"));
    CHECK(check("*.example.org", "192.0.2.7", "Host1.Example.ORG"));
    CHECK(check("host1.example.org", "192.0.2.7", "host1.example.org"));
    CHECK_FALSE(check("*.example.org,!host1.example.org", "192.0.2.7", "host1.example.org"));
    CHECK(check("2001:db8::/32", "2001:db8::5"));
    CHECK_FALSE(check("10.0.0.1/8", "10.0.0.1")); // host bits set: an invalid list

    auto r = check_authorized_keys(line_for(key_a(), "from=\"10.0.0.0/8\""), "/h/.ssh/authorized_keys", key_a(),
                                   ctx("192.0.2.7", "client.example.org"));
    CHECK_FALSE(r.match);
    CHECK(logged(r, syslog_level::info,
                 "/h/.ssh/authorized_keys:1: Authentication tried for alice with correct key but not from a permitted "
                 "host (host=client.example.org, ip=192.0.2.7, required=10.0.0.0/8)."));
    CHECK(logged(r, syslog_level::error, "Refused by key options"));
    auto invalid = check_authorized_keys(line_for(key_a(), "from=\"10.0.0.1/8\""), "f", key_a(), ctx());
    CHECK(logged(invalid, syslog_level::debug1, "f:1: invalid from criteria"));

    // A refused line does not stop a later one from authorising the key.
    auto later = check_authorized_keys(line_for(key_a(), "from=\"10.0.0.0/8\"") + "\n" + line_for(key_a()), "f", key_a(), ctx());
    REQUIRE(later.match);
    CHECK(later.match->location == "f:2");
}

TEST_CASE("authorized_keys: expiry, certificates and principals")
{
    auto c = ctx(); // now = 2023-11-14T22:13:20Z
    CHECK(check_authorized_keys(line_for(key_a(), "expiry-time=\"20231115Z\""), "f", key_a(), c).match);
    auto expired = check_authorized_keys(line_for(key_a(), "expiry-time=\"20231114Z\""), "f", key_a(), c);
    CHECK_FALSE(expired.match);
    CHECK(logged(expired, syslog_level::error, "Refused by key options"));
    CHECK(std::any_of(expired.log.begin(), expired.log.end(), [](const log_message& m) {
        return m.level == syslog_level::debug1 && m.text.rfind("f:1: entry expired at 2023-11-1", 0) == 0;
    }));
    // cert-authority lines are for certificates (not supported yet) and
    // never authorise a plain key; principals= needs cert-authority.
    CHECK_FALSE(check_authorized_keys(line_for(key_a(), "cert-authority"), "f", key_a(), c).match);
    auto principals = check_authorized_keys(line_for(key_a(), "principals=\"alice\""), "f", key_a(), c);
    CHECK_FALSE(principals.match);
    CHECK(logged(principals, syslog_level::debug1, "f:1: principals on non-CA key"));
}

TEST_CASE("authorized_keys: environment= needs PermitUserEnvironment")
{
    const std::string line = line_for(key_a(), "environment=\"LANG=C\",environment=\"SECRET=1\"");
    auto c = ctx();
    auto off = check_authorized_keys(line, "f", key_a(), c);
    REQUIRE(off.match);
    CHECK(off.match->environment.empty());
    CHECK(off.match->options.environment.size() == 2);
    c.permit_user_environment = true;
    auto on = check_authorized_keys(line, "f", key_a(), c);
    CHECK(on.match->environment == std::vector<std::string>{"LANG=C", "SECRET=1"});
    c.permit_user_environment_patterns = "LANG,LC_*";
    auto some = check_authorized_keys(line, "f", key_a(), c);
    CHECK(some.match->environment == std::vector<std::string>{"LANG=C"});
}

TEST_CASE("authorized_keys: AuthorizedKeysFile tokens")
{
    user_account u{"alice", 1001, 1001, "/home/alice", "/bin/sh"};
    std::string err;
    CHECK(expand_authorized_keys_path("%h/.ssh/authorized_keys", u, err).value() == "/home/alice/.ssh/authorized_keys");
    CHECK(expand_authorized_keys_path(".ssh/authorized_keys", u, err).value() == "/home/alice/.ssh/authorized_keys");
    CHECK(expand_authorized_keys_path("/etc/ssh/keys/%u.%U.100%%", u, err).value() == "/etc/ssh/keys/alice.1001.100%");
    CHECK_FALSE(expand_authorized_keys_path("/x/%q", u, err));
    CHECK(err == "percent_expand: unknown key %q");
    server_config cfg;
    cfg.authorized_keys_files = {"none", "%h/a", "/etc/%u", "/bad/%z"};
    std::vector<log_message> log;
    CHECK(authorized_keys_paths(cfg, u, log) == std::vector<std::string>{"/home/alice/a", "/etc/alice"});
    REQUIRE(log.size() == 1);
    CHECK(log[0].text == "percent_expand: unknown key %z");
}

TEST_CASE("authorized_keys: StrictModes")
{
    temp_dir dir;
    const std::string home = dir.file("home");
    const std::string ssh = home + "/.ssh";
    const std::string ak = ssh + "/authorized_keys";
    ::mkdir(home.c_str(), 0755);
    ::mkdir(ssh.c_str(), 0700);
    write_file(ak, line_for(key_a()) + "\n", 0600);
    const uid_t me = ::geteuid();
    user_account u{"tester", me, ::getegid(), home, "/bin/sh"};

    auto ok = read_user_file(ak, u, true);
    REQUIRE(ok.contents);
    CHECK(ok.log.empty());

    ::chmod(ssh.c_str(), 0770);
    auto group_writable = read_user_file(ak, u, true);
    CHECK_FALSE(group_writable.contents);
    REQUIRE(group_writable.log.size() == 1);
    CHECK(group_writable.log[0].level == syslog_level::info);
    CHECK(group_writable.log[0].text == "Authentication refused: bad ownership or modes for directory " + ssh);
    // Without StrictModes the same file is read.
    CHECK(read_user_file(ak, u, false).contents);
    ::chmod(ssh.c_str(), 0700);

    ::chmod(ak.c_str(), 0666);
    auto world_writable = read_user_file(ak, u, true);
    REQUIRE(world_writable.log.size() == 1);
    CHECK(world_writable.log[0].text == "Authentication refused: bad ownership or modes for file " + ak);
    ::chmod(ak.c_str(), 0600);

    ::chmod(home.c_str(), 0775);
    CHECK(read_user_file(ak, u, true).log.at(0).text ==
          "Authentication refused: bad ownership or modes for directory " + home);
    ::chmod(home.c_str(), 0755);

    // Not a regular file; missing files are quiet.
    ::mkdir((ssh + "/dir").c_str(), 0700);
    auto d = read_user_file(ssh + "/dir", u, true);
    CHECK(d.log.at(0).text == "User 'tester' authorized keys '" + ssh + "/dir' is not a regular file");
    CHECK(read_user_file(ssh + "/missing", u, true).log.empty());
    // A FIFO must not hang the server.
    ::mkfifo((ssh + "/fifo").c_str(), 0600);
    CHECK_FALSE(read_user_file(ssh + "/fifo", u, true).contents);

    if (me != 0)
        LONGHAUL_SKIP("ownership checks need root for chown");
    // Owned by someone else (neither root nor the user).
    user_account other{"other", 4242, 4242, home, "/bin/sh"};
    ::chown(ak.c_str(), 4243, 4243);
    CHECK(read_user_file(ak, other, true).log.at(0).text == "Authentication refused: bad ownership or modes for file " + ak);
    // Owned by the user: fine; root-owned directories above are fine too.
    ::chown(ak.c_str(), 4242, 4242);
    ::chown(ssh.c_str(), 4242, 4242);
    ::chown(home.c_str(), 4242, 4242);
    CHECK(read_user_file(ak, other, true).contents);
    ::chown(ssh.c_str(), 4243, 4243);
    CHECK(read_user_file(ak, other, true).log.at(0).text ==
          "Authentication refused: bad ownership or modes for directory " + ssh);
    // A symlink is judged by its target.
    ::chown(ssh.c_str(), 4242, 4242);
    ::symlink(ak.c_str(), (home + "/link").c_str());
    CHECK(read_user_file(home + "/link", other, true).contents);
}

// issue 12 (9): with AuthenticationMethods publickey,publickey only the last
// key's options used to apply, so a forced command or no-pty on the first
// key was lost. They are merged as OpenSSH's sshauthopt_merge() does.
TEST_CASE("authorized_keys: two keys' options merge restrictively")
{
    auto with = [](const std::string& opts) {
        std::string reason;
        auto o = parse_authorized_key_options(opts, reason);
        REQUIRE(o.has_value());
        authorized_key_match m;
        m.options = *o;
        return m;
    };
    std::string error;
    auto m = merge_key_options(with("command=\"echo a\",no-pty,expiry-time=\"20300101\""),
                               with("no-user-rc,expiry-time=\"20290101\""), error);
    REQUIRE(m.has_value());
    CHECK(m->options.force_command == std::optional<std::string>("echo a"));
    CHECK_FALSE(m->options.permit_pty);
    CHECK_FALSE(m->options.permit_user_rc);
    CHECK(m->options.permit_port_forwarding);
    CHECK(m->options.valid_before == parse_expiry_time("20290101"));

    m = merge_key_options(with("restrict"), with("command=\"echo b\""), error);
    REQUIRE(m.has_value());
    CHECK(m->options.force_command == std::optional<std::string>("echo b"));
    CHECK_FALSE(m->options.permit_pty);

    CHECK_FALSE(merge_key_options(with("command=\"echo a\""), with("command=\"echo b\""), error).has_value());
    CHECK(error == "forced command options do not match");
    CHECK(merge_key_options(with("command=\"same\""), with("command=\"same\""), error).has_value());
}
