// sshd_config parsing: defaults, values, Match, Include, the command line.
#include "tests/sshd/sshd_config_fixtures.hpp"

#include "tests/skip.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

using namespace longhaul;
using longhaul::test::temp_dir;
using longhaul::test::write_file;

TEST_CASE("sshd_config: OpenSSH 9.2 defaults")
{
    auto c = parse("");
    const auto& g = c.global();
    CHECK(g.ports == std::vector<int>{22});
    CHECK(g.permit_root_login == permit_root_login_mode::prohibit_password);
    CHECK(g.authorized_keys_files == std::vector<std::string>{".ssh/authorized_keys", ".ssh/authorized_keys2"});
    CHECK(g.host_key_files.size() == 3);
    CHECK(g.max_auth_tries == 6);
    CHECK(g.max_sessions == 10);
    CHECK(g.login_grace_time == 120);
    CHECK(g.max_startups_begin == 10);
    CHECK(g.max_startups_rate == 30);
    CHECK(g.max_startups == 100);
    CHECK(g.kbd_interactive_authentication);
    CHECK(g.password_authentication);
    CHECK_FALSE(g.use_pam);
    CHECK(g.strict_modes);
    CHECK(g.compression == compression_mode::delayed);
    CHECK(g.moduli_file == "/etc/ssh/moduli");
    CHECK(g.pid_file == "/run/sshd.pid");
    CHECK(g.banner.empty());
    CHECK(g.authentication_methods.empty());
    CHECK(g.ciphers.find("chacha20-poly1305@openssh.com") == 0);
    CHECK(g.listen_addresses.size() == 2);
}

TEST_CASE("sshd_config: CryptoThreads, auto by default, shown by -T")
{
    CHECK(parse("").global().crypto_threads == -1);
    CHECK(parse("CryptoThreads 3\n").global().crypto_threads == 3);
    CHECK(parse("CryptoThreads 0\nCryptoThreads 5\n").global().crypto_threads == 0);
    CHECK(parse("CryptoThreads auto\n").global().crypto_threads == -1);
    CHECK(dump(parse("").global()).find("\ncryptothreads auto\n") != std::string::npos);
    CHECK(dump(parse("CryptoThreads 2\n").global()).find("\ncryptothreads 2\n") != std::string::npos);
    CHECK(error_of("CryptoThreads many\n") != "(no error)");
    CHECK(error_of("CryptoThreads 65\n") != "(no error)");
    CHECK(error_of("CryptoThreads\n") != "(no error)");
}

TEST_CASE("sshd_config: first value wins, lists accumulate")
{
    auto c = parse("PasswordAuthentication no\n"
                   "PasswordAuthentication yes\n"
                   "Port 2222\nPort 2200\n"
                   "AllowUsers alice bob\nAllowUsers carol\n"
                   "AuthorizedKeysFile /a/%u /b\nAuthorizedKeysFile /c\n"
                   "HostKey /k1\nHostKey /k2\n"
                   "AcceptEnv LANG\nAcceptEnv LC_*\n"
                   "SetEnv A=1 A=2 B=3\nSetEnv C=4\n"
                   "Subsystem sftp /usr/lib/openssh/sftp-server -l INFO\n"
                   "IPQoS af11\nIPQoS cs1 cs2\n"
                   "MaxStartups 5\nMaxStartups 3:50:9\n");
    const auto& g = c.global();
    CHECK_FALSE(g.password_authentication);
    CHECK(g.ports == std::vector<int>{2222, 2200});
    CHECK(g.allow_users == std::vector<std::string>{"alice", "bob", "carol"});
    CHECK(g.authorized_keys_files == std::vector<std::string>{"/a/%u", "/b"});
    CHECK(g.host_key_files == std::vector<std::string>{"/k1", "/k2"});
    CHECK(g.accept_env == std::vector<std::string>{"LANG", "LC_*"});
    CHECK(g.set_env == std::vector<std::string>{"A=1", "B=3"});
    REQUIRE(g.subsystems.size() == 1);
    CHECK(g.subsystems[0].command == "/usr/lib/openssh/sftp-server");
    CHECK(g.subsystems[0].args == "/usr/lib/openssh/sftp-server -l INFO");
    // OpenSSH lets the last IPQoS and MaxStartups win.
    CHECK(g.ipqos_interactive == 0x20);
    CHECK(g.ipqos_bulk == 0x40);
    CHECK(g.max_startups_begin == 3);
    CHECK(g.max_startups_rate == 50);
    CHECK(g.max_startups == 9);
    CHECK(g.listen_addresses.size() == 4);
}

TEST_CASE("sshd_config: keyword spellings, '=' and quotes")
{
    auto c = parse("  passwordauthentication=no\n"
                   "ChallengeResponseAuthentication no\n"
                   "PubkeyAcceptedKeyTypes +ssh-rsa\n"
                   "Banner = \"/etc/issue net\"\n"
                   "ForceCommand   /bin/echo  a   b # not a comment here\n"
                   "VersionAddendum none\n");
    const auto& g = c.global();
    CHECK_FALSE(g.password_authentication);
    CHECK_FALSE(g.kbd_interactive_authentication);
    CHECK(g.pubkey_accepted_algorithms.find("ssh-rsa") != std::string::npos);
    CHECK(g.banner == "/etc/issue net");
    CHECK(g.force_command == "/bin/echo  a   b # not a comment here");
    CHECK(g.version_addendum.empty());
}

TEST_CASE("sshd_config: bad keywords and values with file and line")
{
    CHECK(error_of("Port 22\nFooBar yes\n") ==
          "test.cfg: line 2: Bad configuration option: FooBar\n"
          "test.cfg: terminating, 1 bad configuration options");
    CHECK(error_of("Foo 1\nBar 2\n") == "test.cfg: line 1: Bad configuration option: Foo\n"
                                       "test.cfg: line 2: Bad configuration option: Bar\n"
                                       "test.cfg: terminating, 2 bad configuration options");
    CHECK(error_of("Port\n") == "test.cfg line 1: no argument after keyword \"Port\"\n"
                                "test.cfg: terminating, 1 bad configuration options");
    CHECK(error_of("Port abc\n") == "test.cfg line 1: Badly formatted port number.");
    CHECK(error_of("Port 22 23\n") == "test.cfg line 1: keyword Port extra arguments at end of line\n"
                                      "test.cfg: terminating, 1 bad configuration options");
    CHECK(error_of("Port '22\n") ==
          "test.cfg line 1: invalid quotes\ntest.cfg: terminating, 1 bad configuration options");
    CHECK(error_of("MaxAuthTries x\n") == "test.cfg line 1: MaxAuthTries integer value invalid.");
    CHECK(error_of("PermitRootLogin maybe\n") == "test.cfg line 1: unsupported option \"maybe\".");
    CHECK(error_of("Ciphers foo\n") == "test.cfg line 1: Bad SSH2 cipher spec 'foo'.");
    CHECK(error_of("LogLevel loud\n") == "test.cfg line 1: unsupported log level 'loud'");
    CHECK(error_of("AuthorizedKeysCommand bin/x\n") ==
          "test.cfg line 1: AuthorizedKeysCommand must be an absolute path");
    CHECK(error_of("AuthenticationMethods publickey,pasword\n") ==
          "Unknown authentication method \"pasword\" in list\n"
          "test.cfg line 1: invalid AuthenticationMethods method list.");
    CHECK(error_of("RDomain x\n") == "test.cfg line 1: setting RDomain not supported on this platform.");
    // Deprecated keywords are logged, not fatal.
    auto c = parse("RSAAuthentication no\nKerberosGetAFSToken no\nProtocol 2\n");
    REQUIRE(c.notices().size() == 2);
    CHECK(c.notices()[0].text == "test.cfg line 1: Deprecated option RSAAuthentication");
    CHECK(c.notices()[1].text == "test.cfg line 2: Unsupported option KerberosGetAFSToken");
}

TEST_CASE("sshd_config: Match-only keywords and Match syntax")
{
    CHECK(error_of("Match User x\n  Port 23\n") ==
          "test.cfg line 2: Directive 'Port' is not allowed within a Match block");
    CHECK(error_of("Match User x\n  Ciphers aes128-ctr\n") ==
          "test.cfg line 2: Directive 'Ciphers' is not allowed within a Match block");
    CHECK(error_of("Match User x\n  Foo bar\n") ==
          "test.cfg: line 2: Bad configuration option: Foo\n"
          "test.cfg line 2: Directive 'Foo' is not allowed within a Match block");
    CHECK(error_of("Match User\n") == "Missing Match criteria for User\ntest.cfg line 1: Bad Match condition");
    CHECK(error_of("Match Color red\n") == "Unsupported Match attribute Color\ntest.cfg line 1: Bad Match condition");
    CHECK(error_of("Match all User x\n") ==
          "'all' cannot be combined with other Match attributes\ntest.cfg line 1: Bad Match condition");
    CHECK(error_of("Match Address 10.0.0.1/8\n") == "Invalid Match address argument '10.0.0.1/8' at line 1");
    CHECK(error_of("Match LocalPort x\n") == "Invalid LocalPort 'x' on Match line\ntest.cfg line 1: Bad Match condition");
    // "Match all" is active at start-up, so even global keywords pass there.
    auto c = parse("Match all\nPort 2022\n");
    CHECK(c.global().ports == std::vector<int>{2022});
}

TEST_CASE("sshd_config: Match criteria")
{
    auto c = parse("PasswordAuthentication yes\n"
                   "MaxAuthTries 6\n"
                   "AllowUsers everyone\n"
                   "Match User alice,!bob\n"
                   "  PasswordAuthentication no\n"
                   "Match Group admins\n"
                   "  MaxAuthTries 2\n"
                   "Match Host *.example.org\n"
                   "  Banner /etc/banner.example\n"
                   "Match Address 10.0.0.0/8,!10.9.9.9\n"
                   "  AllowUsers tenners\n"
                   "  AllowUsers more\n"
                   "Match LocalAddress 198.51.100.0/24 LocalPort 2222\n"
                   "  MaxSessions 1\n"
                   "Match RDomain vrf*\n"
                   "  PermitTTY no\n"
                   "Match User carol\n"
                   "  PasswordAuthentication no\n"
                   "  ForceCommand /bin/true\n"
                   "Match User carol\n"
                   "  ForceCommand /bin/false\n"
                   "  PasswordAuthentication yes\n");
    CHECK(c.has_match_blocks());
    CHECK(c.for_connection(conn("alice")).password_authentication == false);
    CHECK(c.for_connection(conn("bob")).password_authentication == true);
    // Negation alone never matches positively.
    auto x = parse("Match User !root\n  MaxSessions 1\n");
    CHECK(x.for_connection(conn("alice")).max_sessions == 10);

    auto admin = conn("dave");
    admin.groups = {"staff", "admins"};
    CHECK(c.for_connection(admin).max_auth_tries == 2);
    CHECK(c.for_connection(conn("dave")).max_auth_tries == 6);

    auto named = conn("erin");
    named.host = "Web1.Example.ORG";
    CHECK(c.for_connection(named).banner == "/etc/banner.example");
    CHECK(c.for_connection(conn("erin")).banner.empty());

    CHECK(c.for_connection(conn("f", "10.1.2.3")).allow_users == std::vector<std::string>{"tenners", "more"});
    CHECK(c.for_connection(conn("f", "10.9.9.9")).allow_users == std::vector<std::string>{"everyone"});

    CHECK(c.for_connection(conn("g", "192.0.2.1", 2222)).max_sessions == 1);
    CHECK(c.for_connection(conn("g", "192.0.2.1", 22)).max_sessions == 10);

    auto vrf = conn("h");
    vrf.rdomain = "vrf-blue";
    CHECK_FALSE(c.for_connection(vrf).permit_tty);
    CHECK(c.for_connection(conn("h")).permit_tty);

    // First value wins across matching blocks.
    const auto carol = c.for_connection(conn("carol"));
    CHECK(carol.force_command == "/bin/true");
    CHECK_FALSE(carol.password_authentication);
    // The global configuration is untouched.
    CHECK(c.global().password_authentication);
    CHECK(c.global().force_command.empty());
}

TEST_CASE("sshd_config: RekeyLimit in Match blocks, its two values each first-wins")
{
    // As OpenSSH's copy_set_server_options(): a matching block's value
    // replaces the global one, the first matching block's wins, and the
    // interval is its own setting (a block that names only the volume
    // leaves it to a later block or the global line).
    auto c = parse("RekeyLimit 1G 1h\n"
                   "Match User alice\n  RekeyLimit 16M\n"
                   "Match User alice,bob\n  RekeyLimit 32M 30\n"
                   "Match User carol\n  RekeyLimit default none\n");
    CHECK(c.global().rekey_limit == (1ull << 30));
    CHECK(c.global().rekey_interval == 3600);
    const auto a = c.for_connection(conn("alice"));
    CHECK(a.rekey_limit == 16ull << 20);
    CHECK(a.rekey_interval == 30);
    const auto b = c.for_connection(conn("bob"));
    CHECK(b.rekey_limit == 32ull << 20);
    CHECK(b.rekey_interval == 30);
    const auto d = c.for_connection(conn("dave"));
    CHECK(d.rekey_limit == (1ull << 30));
    CHECK(d.rekey_interval == 3600);
    // "default" is the cipher's own bound (0); "none" leaves the interval.
    const auto e = c.for_connection(conn("carol"));
    CHECK(e.rekey_limit == 0);
    CHECK(e.rekey_interval == 3600);
}

TEST_CASE("sshd_config: a Match value of none clears the global one")
{
    auto c = parse("ForceCommand /usr/bin/restricted\nChrootDirectory /srv\nBanner /etc/issue\n"
                   "Match User admin\n  ForceCommand none\n  ChrootDirectory none\n  Banner none\n");
    const auto a = c.for_connection(conn("admin"));
    CHECK(a.force_command.empty());
    CHECK(a.chroot_directory.empty());
    CHECK(a.banner.empty());
    CHECK(c.for_connection(conn("other")).force_command == "/usr/bin/restricted");
}

TEST_CASE("sshd_config: test-mode connection specs")
{
    std::string err;
    auto ci = parse_connection_spec("user=root,host=h.example,addr=10.0.0.1,laddr=10.0.0.2,lport=22,rdomain=r", err);
    REQUIRE(ci);
    CHECK(ci->user == "root");
    CHECK(ci->host == "h.example");
    CHECK(ci->address == "10.0.0.1");
    CHECK(ci->local_address == "10.0.0.2");
    CHECK(ci->local_port == 22);
    CHECK(ci->rdomain == "r");
    CHECK(ci->test);
    CHECK(std::find(ci->groups.begin(), ci->groups.end(), "root") != ci->groups.end());
    CHECK_FALSE(parse_connection_spec("foo=bar", err));
    CHECK(err == "Invalid test mode specification foo=bar");
    CHECK_FALSE(parse_connection_spec("lport=x", err));
    CHECK(err == "Invalid port 'x' in test mode specification lport=x");

    auto c = parse("Match LocalPort 22\n  MaxSessions 1\n");
    connection_info partial;
    partial.test = true;
    partial.user = "root";
    try {
        (void)c.for_connection(partial);
        FAIL("expected an error");
    } catch (const config_error& e) {
        CHECK(std::string(e.what()) ==
              "'Match LocalPort' in configuration but 'lport' not in connection test specification.");
    }
}

TEST_CASE("sshd_config: Include with globs, nesting and Match state")
{
    temp_dir dir;
    std::filesystem::create_directory(dir.file("conf.d"));
    write_file(dir.file("conf.d/10-a.conf"), "MaxAuthTries 4\nMatch User bob\n  MaxAuthTries 2\n");
    write_file(dir.file("conf.d/20-b.conf"), "MaxAuthTries 5\nPermitRootLogin no\n");
    write_file(dir.file("alice.conf"), "MaxSessions 3\n");
    write_file(dir.file("main"), "Include conf.d/*.conf\n"
                                 "Match User alice\n"
                                 "  Include " + dir.file("alice.conf") + "\n"
                                 "  X11Forwarding yes\n"
                                 "Match User bob\n"
                                 "  Include /nonexistent/*.conf\n");
    config_load_options o;
    o.path = dir.file("main");
    o.include_base = dir.path();
    auto c = sshd_config::load(o);
    CHECK(c.global().max_auth_tries == 4); // the first included file wins
    CHECK(c.global().permit_root_login == permit_root_login_mode::no);
    // The included Match ended with its file: later global lines stay global.
    CHECK(c.for_connection(conn("bob")).max_auth_tries == 2);
    const auto alice = c.for_connection(conn("alice"));
    CHECK(alice.max_sessions == 3);
    CHECK(alice.x11_forwarding);
    CHECK(c.for_connection(conn("carol")).max_sessions == 10);

    write_file(dir.file("loop"), "Include " + dir.file("loop") + "\n");
    o.path = dir.file("loop");
    try {
        (void)sshd_config::load(o);
        FAIL("expected an error");
    } catch (const config_error& e) {
        CHECK(std::string(e.what()) == "Too many recursive configuration includes");
    }
    o.path = dir.file("missing");
    try {
        (void)sshd_config::load(o);
        FAIL("expected an error");
    } catch (const config_error& e) {
        CHECK(std::string(e.what()) == dir.file("missing") + ": No such file or directory");
        CHECK(e.exit_status() == 1);
    }
}

TEST_CASE("sshd_config: command-line -o, -p and -h come first")
{
    config_load_options o;
    o.command_line = {"PasswordAuthentication no", "Port 2022"};
    o.command_line_host_keys = {"/cmdline/key"};
    auto c = sshd_config::parse("PasswordAuthentication yes\nPort 22\nHostKey /file/key\n", "test.cfg", o);
    CHECK_FALSE(c.global().password_authentication);
    CHECK(c.global().ports == std::vector<int>{2022, 22});
    CHECK(c.global().host_key_files == std::vector<std::string>{"/cmdline/key", "/file/key"});

    config_load_options p;
    p.command_line_ports = {2200};
    auto d = sshd_config::parse("Port 22\n", "test.cfg", p);
    CHECK(d.global().ports == std::vector<int>{2200});

    config_load_options bad;
    bad.command_line = {"Bogus yes"};
    try {
        (void)sshd_config::parse("", "test.cfg", bad);
        FAIL("expected an error");
    } catch (const config_error& e) {
        CHECK(std::string(e.what()) == "command-line: line 0: Bad configuration option: Bogus");
        CHECK(e.exit_status() == 1);
    }
    config_load_options match;
    match.command_line = {"Match all"};
    CHECK(error_of("", match) == "Match directive not supported as a command-line option");
}

TEST_CASE("sshd_config: algorithm lists load with names this build lacks")
{
    auto c = parse("Ciphers +aes128-cbc\n"
                   "MACs hmac-md5,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com\n"
                   "KexAlgorithms diffie-hellman-group14-sha1,sntrup761x25519-sha512@openssh.com,curve25519-sha256\n"
                   "HostKeyAlgorithms ssh-ed25519-cert-v01@openssh.com,ssh-ed25519,rsa-*\n");
    const auto& g = c.global();
    CHECK(g.ciphers.find("cbc") == std::string::npos);
    CHECK(g.macs == "umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com");
    CHECK(g.kex_algorithms == "sntrup761x25519-sha512@openssh.com,curve25519-sha256");
    CHECK(g.host_key_algorithms == "ssh-ed25519,rsa-sha2-256,rsa-sha2-512");
    CHECK(error_of("MACs hmac-md5\n") ==
          "test.cfg line 1: none of the MACs in 'hmac-md5' is implemented by this server");
}
