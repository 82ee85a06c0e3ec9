#include "ssh/ssh_config.hpp"

#include "ssh/options.hpp"
#include "ssh_test_util.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

using namespace longhaul;
using longhaul::test::log_capture;
using longhaul::test::scratch_dir;

namespace {

// Loads the configuration for `args` (command line without argv[0]) with
// `home` as the user's home and `home`/etc/ssh_config as the system file.
client_config load(const scratch_dir& home, std::vector<std::string> args, log_capture* log = nullptr,
                   config_environment* env_out = nullptr)
{
    auto env = test::test_environment(home.path(), home / "etc/ssh_config");
    if (env_out != nullptr)
        env = *env_out;
    auto opts = parse_command_line(args, env);
    client_config cfg = opts.config;
    load_client_config(cfg, opts.request(), env, log != nullptr ? log->sink() : log_sink{});
    return cfg;
}

std::string load_error(const scratch_dir& home, std::vector<std::string> args, log_capture* log = nullptr)
{
    try {
        load(home, std::move(args), log);
    } catch (const ssh_config_error& e) {
        return e.what();
    }
    return "<no error>";
}

std::vector<std::string> paths(const std::vector<identity_file>& files)
{
    std::vector<std::string> out;
    for (const auto& f : files)
        out.push_back(f.path);
    return out;
}

} // namespace

TEST_CASE("ssh_config: first value wins across command line, user and system files")
{
    scratch_dir home;
    home.write(".ssh/config", "Host *\n  Port 2201\n  User fromuser\n  Compression yes\n");
    home.write("etc/ssh_config", "Host *\n  Port 2202\n  User fromsystem\n  ConnectTimeout 7\n  Compression no\n");
    auto cfg = load(home, {"-p", "2200", "h"});
    CHECK(*cfg.port == 2200);
    CHECK(*cfg.user == "fromuser");
    CHECK(*cfg.compression);
    CHECK(*cfg.connect_timeout == 7);

    // Within one file the first matching value wins too.
    home.write(".ssh/config", "Host h\n  User first\nHost *\n  User second\n");
    CHECK(*load(home, {"h"}).user == "first");
    CHECK(*load(home, {"other"}).user == "second");

    // -F replaces both files.
    const auto f = home.write("alt.conf", "User alt\n");
    cfg = load(home, {"-F", f, "h"});
    CHECK(*cfg.user == "alt");
    CHECK_FALSE(cfg.connect_timeout.value() == 7);
    // -F none reads nothing.
    CHECK(*load(home, {"-F", "none", "h"}).user == "alice");
}

TEST_CASE("ssh_config: Host patterns")
{
    scratch_dir home;
    home.write(".ssh/config", "Host *.example.com !bad.example.com\n  User ex\n"
                              "Host web? db*\n  User multi\n"
                              "Host !nomatch\n  Port 2222\n");
    CHECK(*load(home, {"a.example.com"}).user == "ex");
    CHECK(*load(home, {"bad.example.com"}).user == "alice"); // negated: the block is skipped
    CHECK(*load(home, {"web1"}).user == "multi");
    CHECK(*load(home, {"db-main"}).user == "multi");
    CHECK(*load(home, {"web12"}).user == "alice");
    // A block with only a negated pattern matches nothing.
    CHECK(*load(home, {"web1"}).port == 22);
    // Host patterns compare case-sensitively with the name as typed.
    CHECK(*load(home, {"A.EXAMPLE.COM"}).user == "alice");
}

TEST_CASE("ssh_config: Match criteria")
{
    scratch_dir home;
    home.write(".ssh/config", "Host alias\n  HostName Real.Example.com\n"
                              "Match host real.example.com\n  Port 1001\n"
                              "Match originalhost alias\n  User fromalias\n"
                              "Match user carol\n  Compression yes\n"
                              "Match localuser alice !user nobody\n  ServerAliveInterval 33\n"
                              "Match all\n  ServerAliveCountMax 9\n");
    auto cfg = load(home, {"alias"});
    CHECK(*cfg.hostname == "real.example.com"); // HostName is lowercased
    CHECK(*cfg.port == 1001);
    CHECK(*cfg.user == "fromalias");
    CHECK_FALSE(*cfg.compression);
    CHECK(*cfg.server_alive_interval == 33);
    CHECK(*cfg.server_alive_count_max == 9);
    // "Match user" sees the user given on the command line.
    CHECK(*load(home, {"carol@x"}).compression);
    CHECK_FALSE(*load(home, {"x"}).compression);
}

TEST_CASE("ssh_config: Match exec runs $SHELL -c with tokens expanded")
{
    scratch_dir home;
    const auto marker = home / "ran";
    home.write(".ssh/config", "Match exec \"test %h = yes.example && test %p = 2222 && test %r = bob && test %n = yes.example\"\n"
                              "  User matched\n"
                              "Match host nope exec \"touch " + marker + "\"\n  Port 1\n"
                              "Match !exec false\n  Compression yes\n");
    auto cfg = load(home, {"-p", "2222", "bob@yes.example"});
    CHECK(*cfg.user == "bob");
    CHECK(*load(home, {"-p", "2222", "-o", "User=bob", "yes.example"}).user == "bob");
    CHECK(*load(home, {"-p", "2222", "yes.example"}).user == "alice"); // %r is alice: no match
    // The exec after a failed criterion is not run.
    CHECK_FALSE(std::filesystem::exists(marker));
    CHECK(*cfg.compression);

    home.write(".ssh/config", "Match exec \"test %u = alice\"\n  User viaexec\n");
    CHECK(*load(home, {"h"}).user == "viaexec");

    // With exec disallowed (the fuzzer), commands never match.
    auto env = test::test_environment(home.path());
    env.allow_exec = false;
    CHECK(*load(home, {"h"}, nullptr, &env).user == "alice");

    // A command killed by a signal is fatal.
    home.write(".ssh/config", "Match exec \"kill -9 $$\"\n  User x\n");
    CHECK(load_error(home, {"h"}) == home.path() + "/.ssh/config line 1: match exec 'kill -9 $$' error");
}

TEST_CASE("ssh_config: Match final and canonical take a second pass")
{
    scratch_dir home;
    home.write(".ssh/config", "Match final host real.example.com\n  User final\n"
                              "Match canonical\n  Port 4444\n"
                              "Host short\n  HostName real.example.com\n"
                              "Host real.example.com\n  Compression yes\n"
                              "Host *\n  SendEnv A\n");
    log_capture log;
    auto cfg = load(home, {"short"}, &log);
    CHECK(*cfg.user == "final");
    CHECK(*cfg.port == 4444);
    // In the second pass Host patterns see the final host name.
    CHECK(*cfg.compression);
    // Accumulating keywords accumulate again, as in OpenSSH.
    CHECK(cfg.send_env == std::vector<std::string>{"A", "A"});
    CHECK(log.text(log_level::debug1).find("configuration requests final Match pass") != std::string::npos);

    // Without "final" there is one pass and "canonical" never holds.
    home.write(".ssh/config", "Match canonical\n  Port 4444\n");
    CHECK(*load(home, {"h"}).port == 22);
    // Any "final", even negated, asks for the second pass.
    home.write(".ssh/config", "Match canonical\n  Port 4444\nMatch !final\n  User firstpass\n");
    cfg = load(home, {"h"});
    CHECK(*cfg.port == 4444);
    CHECK(*cfg.user == "firstpass");

    // CanonicalizeHostname asks for the second pass too.
    home.write(".ssh/config", "CanonicalizeHostname yes\nMatch canonical\n  Port 4444\n");
    CHECK(*load(home, {"h"}).port == 4444);
}

TEST_CASE("ssh_config: Match errors")
{
    scratch_dir home;
    const auto cfgfile = home / ".ssh/config";
    log_capture log;
    home.write(".ssh/config", "Match all host x\n  Port 1\n");
    CHECK(load_error(home, {"h"}, &log) == cfgfile + ": terminating, 1 bad configuration options");
    CHECK(log.text() == cfgfile + " line 1: 'all' cannot be combined with other Match attributes\n" + cfgfile +
                            " line 1: Bad Match condition");
    log.messages.clear();
    home.write(".ssh/config", "Match host\n");
    CHECK(load_error(home, {"h"}, &log) == cfgfile + ": terminating, 1 bad configuration options");
    CHECK(log.text() == "Missing Match criteria for host\n" + cfgfile + " line 1: Bad Match condition");
    log.messages.clear();
    home.write(".ssh/config", "Match !bogus x\n");
    load_error(home, {"h"}, &log);
    CHECK(log.text() == "Unsupported Match attribute bogus\n" + cfgfile + " line 1: Bad Match condition");
    log.messages.clear();
    home.write(".ssh/config", "Match\n");
    load_error(home, {"h"}, &log);
    CHECK(log.text() == cfgfile + " line 1: no argument after keyword \"match\"");
    // "Match canonical all" is allowed (all may follow one attribute).
    home.write(".ssh/config", "Match canonical all\n  Port 1\n");
    CHECK(*load(home, {"h"}).port == 22);
}

TEST_CASE("ssh_config: Include")
{
    scratch_dir home;
    home.write(".ssh/conf.d/b.conf", "Host *\n  User fromb\n");
    home.write(".ssh/conf.d/a.conf", "Host h\n  Port 1234\n");
    home.write(".ssh/config", "Include conf.d/*.conf\nHost *\n  User fromconfig\n");
    auto cfg = load(home, {"h"});
    CHECK(*cfg.port == 1234);
    CHECK(*cfg.user == "fromb");

    // Absolute and ~ paths; a pattern matching nothing is fine.
    home.write("abs.conf", "Compression yes\n");
    home.write(".ssh/config", "Include " + (home / "abs.conf") + " ~/.ssh/none*.conf\n");
    CHECK(*load(home, {"h"}).compression);

    // An Include under a non-matching Host is read but applies nothing, and
    // a Match in an included file does not change the includer's state.
    home.write(".ssh/inc.conf", "Match all\n  Port 999\n");
    home.write(".ssh/config", "Host nothere\n  Include inc.conf\n  User skipped\nHost h\n  Include inc.conf\n  User kept\n");
    cfg = load(home, {"h"});
    CHECK(*cfg.port == 999);
    CHECK(*cfg.user == "kept");
    CHECK(*load(home, {"other"}).port == 22);

    // System files include relative to their own directory, and may not use ~.
    home.write("etc/sys.d/x.conf", "Port 4321\n");
    home.write("etc/ssh_config", "Include sys.d/*.conf\n");
    home.write(".ssh/config", "");
    CHECK(*load(home, {"h"}).port == 4321);
    home.write("etc/ssh_config", "Include ~/x.conf\n");
    log_capture log;
    CHECK(load_error(home, {"h"}, &log) == (home / "etc/ssh_config") + ": terminating, 1 bad configuration options");
    CHECK(log.text() == (home / "etc/ssh_config") + " line 1: bad include path ~/x.conf.");

    // Recursion ends at depth 16 with OpenSSH's message.
    home.write("etc/ssh_config", "");
    home.write(".ssh/config", "Include config\n");
    CHECK(load_error(home, {"h"}) == "Too many recursive configuration includes");

    // Included files must not be writable by others.
    home.write(".ssh/config", "Include loose.conf\n");
    const auto loose = home.write(".ssh/loose.conf", "Port 1\n");
    chmod(loose.c_str(), 0666);
    auto env = test::test_environment(home.path(), home / "etc/ssh_config");
    env.check_permissions = true;
    CHECK_THROWS_WITH_AS(load(home, {"h"}, nullptr, &env), ("Bad owner or permissions on " + loose).c_str(),
                         ssh_config_error);
}

TEST_CASE("ssh_config: bad lines are reported with file and line, then counted")
{
    scratch_dir home;
    const auto f = home.write("c", "Port 22\nFoo bar\nBaz\nPort x\nCiphers aes1\nCompression maybe\nHost\n"
                                   "User \"unterminated\nRSAAuthentication yes\nCipher blowfish\n");
    log_capture log;
    CHECK(load_error(home, {"-F", f, "h"}, &log) == f + ": terminating, 7 bad configuration options");
    CHECK(log.text(log_level::error) == f + ": line 2: Bad configuration option: foo\n" +
                                            f + " line 3: no argument after keyword \"baz\"\n" +
                                            f + " line 4: Bad port 'x'.\n" +
                                            f + " line 5: Bad SSH2 cipher spec 'aes1'.\n" +
                                            f + " line 6: unsupported option \"maybe\".\n" +
                                            f + " line 7: no argument after keyword \"host\"\n" +
                                            f + " line 8: invalid quotes\n" +
                                            f + " line 9: Unsupported option \"rsaauthentication\"");
    CHECK(log.text(log_level::debug1).find(f + " line 10: Deprecated option \"cipher\"") != std::string::npos);

    // IgnoreUnknown (set first) silences unknown keywords only.
    const auto g = home.write("g", "IgnoreUnknown foo*,baz\nFooBar 1\nBaz 2\nPort 2200\n");
    CHECK(*load(home, {"-F", g, "h"}).port == 2200);
    CHECK(load_error(home, {"-F", f, "-o", "IgnoreUnknown=foo", "h"}) == f + ": terminating, 6 bad configuration options");

    CHECK(load_error(home, {"-F", home / "missing", "h"}) ==
          "Can't open user config file " + (home / "missing") + ": No such file or directory");
}

TEST_CASE("ssh_config: value errors")
{
    scratch_dir home;
    struct bad {
        std::string line;
        std::string message;
    };
    const std::vector<bad> cases = {
        {"ConnectTimeout 1x", "line 1: invalid time value."},
        {"ServerAliveCountMax -1", "line 1: integer value too small."},
        {"ConnectionAttempts x", "line 1: integer value invalid."},
        {"LogLevel LOUD", "line 1: unsupported log level 'LOUD'"},
        {"EscapeChar ab", "line 1: Bad escape character."},
        {"SendEnv A=B", "line 1: Invalid environment name."},
        {"SetEnv A", "line 1: Invalid SetEnv."},
        {"LocalForward 8080", "line 1: Missing target argument."},
        {"LocalForward 8080 nohostport", "line 1: Bad forwarding specification."},
        {"ControlPersist maybe", "line 1: Bad ControlPersist argument."},
        {"TunnelDevice x", "line 1: Bad tun device."},
        {"IPQoS bogus", "line 1: Bad IPQoS value: bogus"},
        {"RekeyLimit 8", "line 1: RekeyLimit too small"},
        {"RekeyLimit 1Q", "line 1: Bad number '1Q': Invalid argument"},
        {"RekeyLimit 1e3", "line 1: Bad number '1e3': Invalid argument"},
        {"RekeyLimit 9E", "line 1: Bad number '9E': Numerical result out of range"},
        {"RekeyLimit 4.9999999999999999999K", "line 1: Bad number '4.9999999999999999999K': Numerical result out of range"},
        {"RekeyLimit 15.9", "line 1: RekeyLimit too small"},
        {"StreamLocalBindMask 999", "line 1: Bad mask."},
        {"FingerprintHash sha3", "line 1: Invalid hash algorithm \"sha3\"."},
        {"HostKeyAlgorithms foo*", "line 1: Bad key types 'foo*'."},
        {"MACs hmac-foo", "line 1: Bad SSH2 MAC spec 'hmac-foo'."},
        {"UserKnownHostsFile a none", "line 1: keyword userknownhostsfile \"none\" argument must appear alone."},
        {"ProxyJump a:0", "line 1: Invalid ProxyJump \"a:0\""},
        {"IdentityAgent $a-b", "line 1: Invalid environment name $a-b."},
        {"CanonicalDomains -bad", "line 1: domain name \"-bad\" starts with invalid character"},
        {"CanonicalizePermittedCNAMEs nocolon", "line 1: Invalid permitted CNAME \"nocolon\""},
        {"AddKeysToAgent maybe", "line 1: unsupported option"},
        {"StrictHostKeyChecking sometimes", "line 1: unsupported option \"sometimes\"."},
        {"Port 22 23", "line 1: keyword port extra arguments at end of line"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.line);
        const auto f = home.write("c", c.line + "\n");
        log_capture log;
        CHECK(load_error(home, {"-F", f, "h"}, &log) == f + ": terminating, 1 bad configuration options");
        CHECK(log.text(log_level::error) == f + " " + c.message);
    }
    {
        const auto f = home.write("c", "IdentityAgent ${UNTERMINATED\n");
        log_capture log;
        load_error(home, {"-F", f, "h"}, &log);
        CHECK(log.text(log_level::error) ==
              "vdollar_percent_expand: environment variable 'UNTERMINATED' missing closing '}'\n" + f +
                  " line 1: Invalid environment expansion ${UNTERMINATED.");
    }
    // PermitRemoteOpen problems are fatal at once.
    const auto f = home.write("c", "PermitRemoteOpen host:x\n");
    CHECK(load_error(home, {"-F", f, "h"}) == f + " line 1: bad port number in permitremoteopen");
}

TEST_CASE("ssh_config: keywords that accumulate")
{
    scratch_dir home;
    home.write(".ssh/config", "Host h\n  IdentityFile ~/.ssh/one\n  CertificateFile ~/.ssh/one-cert.pub\n"
                              "  LocalForward 1 localhost:1\n  SendEnv A B C\n  SetEnv X=1\n  UserKnownHostsFile ~/k1\n"
                              "Host *\n  IdentityFile ~/.ssh/two\n  IdentityFile ~/.ssh/one\n  LocalForward 1 localhost:1\n"
                              "  LocalForward 2 localhost:2\n  RemoteForward 3 localhost:3\n  DynamicForward 4\n"
                              "  SendEnv -B\n  SetEnv X=2 Y=3\n  UserKnownHostsFile ~/k2\n");
    auto cfg = load(home, {"-i", "/dev/null", "h"});
    CHECK(paths(cfg.identity_files) == std::vector<std::string>{"/dev/null", "~/.ssh/one", "~/.ssh/two"});
    CHECK(cfg.identity_files[0].user_provided);
    CHECK(paths(cfg.certificate_files) == std::vector<std::string>{"~/.ssh/one-cert.pub"});
    CHECK(cfg.local_forwards.size() == 3); // duplicates dropped
    CHECK(cfg.remote_forwards.size() == 1);
    CHECK(cfg.send_env == std::vector<std::string>{"A", "C"}); // "-B" removes B
    CHECK(cfg.set_env == std::vector<std::string>{"X=1"});     // the first SetEnv line only
    CHECK(cfg.user_known_hosts_files == std::vector<std::string>{home.path() + "/k1"});

    // Without IdentityFile the defaults are OpenSSH's.
    home.write(".ssh/config", "");
    cfg = load(home, {"h"});
    CHECK(paths(cfg.identity_files) ==
          std::vector<std::string>{"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ecdsa_sk", "~/.ssh/id_ed25519",
                                   "~/.ssh/id_ed25519_sk", "~/.ssh/id_xmss", "~/.ssh/id_dsa"});
    CHECK(cfg.user_known_hosts_files ==
          std::vector<std::string>{home.path() + "/.ssh/known_hosts", home.path() + "/.ssh/known_hosts2"});
    CHECK(cfg.global_known_hosts_files ==
          std::vector<std::string>{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"});
    CHECK(*cfg.update_hostkeys == yes_no_ask::yes);
    // "none" lists mean no files.
    home.write(".ssh/config", "UserKnownHostsFile none\nGlobalKnownHostsFile none\n");
    cfg = load(home, {"h"});
    CHECK(cfg.user_known_hosts_files.empty());
    CHECK(cfg.global_known_hosts_files.empty());
    CHECK(*cfg.update_hostkeys == yes_no_ask::no);
}

TEST_CASE("ssh_config: tokens and expansions")
{
    scratch_dir home;
    home.write(".ssh/config", "Host h\n  HostName %h.example.org\n  User bob\n  Port 2022\n"
                              "  ControlPath ~/.ssh/cm-%r@%h:%p-%u-%L-%l-%n-%i-%k\n"
                              "  UserKnownHostsFile ~/kh/%h ${TESTVAR}/%d\n"
                              "  RemoteCommand echo %r@%h\n"
                              "  IdentityFile ~/.ssh/id-%h-%r\n"
                              "  LocalForward /tmp/%h.sock host:80\n"
                              "  HostKeyAlias MyAlias\n");
    auto cfg = load(home, {"h"});
    const auto& d = home.path();
    CHECK(*cfg.hostname == "h.example.org");
    CHECK(*cfg.control_path == d + "/.ssh/cm-bob@h.example.org:2022-alice-client-client.example.org-h-1000-myalias");
    CHECK(cfg.user_known_hosts_files == std::vector<std::string>{d + "/kh/h.example.org", "value/" + d});
    CHECK(*cfg.remote_command == "echo bob@h.example.org");
    CHECK(*cfg.host_key_alias == "myalias");
    CHECK(*cfg.local_forwards[0].listen_path == "/tmp/h.example.org.sock");
    // IdentityFile stays as written until the keys are loaded.
    CHECK(cfg.identity_files[0].path == "~/.ssh/id-%h-%r");
    const auto env = test::test_environment(d);
    CHECK(expand_identity_path(cfg.identity_files[0].path, cfg, env) == d + "/.ssh/id-h.example.org-bob");
    // %C is SHA-1 of %l%h%p%r.
    CHECK(make_connection_tokens(cfg, env).conn_hash ==
          connection_hash("client.example.org", "h.example.org", "2022", "bob"));

    home.write(".ssh/config", "ProxyCommand nc %h %p %r %n %%\nLocalCommand echo %T %u %h\nPermitLocalCommand yes\n");
    cfg = load(home, {"-p", "2200", "bob@Target"});
    CHECK(expand_proxy_command(cfg) == "nc target 2200 bob Target %");
    CHECK(expand_local_command(cfg, env, "") == "echo NONE alice target");
    CHECK(expand_local_command(cfg, env, "tun0") == "echo tun0 alice target");
    home.write(".ssh/config", "ProxyCommand nc %u\n");
    cfg = load(home, {"h"});
    CHECK_THROWS_AS(expand_proxy_command(cfg), expansion_error);

    home.write(".ssh/config", "ControlPath /x/%j\n");
    CHECK(load_error(home, {"h"}) == "vdollar_percent_expand: unknown key %j\npercent_dollar_expand: failed");
    home.write(".ssh/config", "UserKnownHostsFile ${NOPE}/x\n");
    CHECK(load_error(home, {"h"}) == "vdollar_percent_expand: env var ${NOPE} has no value\n"
                                     "invalid environment variable expansion");
    home.write(".ssh/config", "HostName %r\n");
    CHECK(load_error(home, {"h"}) == "vdollar_percent_expand: unknown key %r\npercent_expand: failed");
}

TEST_CASE("ssh_config: algorithm lists with + - ^")
{
    scratch_dir home;
    home.write(".ssh/config", "Ciphers ^aes256-gcm@openssh.com\nMACs -hmac-sha1*\nKexAlgorithms +diffie-hellman-group1-sha1\n"
                              "HostKeyAlgorithms ssh-ed25519,rsa-sha2-*\nPubkeyAcceptedKeyTypes -ecdsa*\n"
                              "CASignatureAlgorithms +ssh-rsa\n");
    auto cfg = load(home, {"h"});
    CHECK(*cfg.ciphers == "aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,"
                          "aes128-gcm@openssh.com");
    CHECK(*cfg.macs == "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,"
                       "hmac-sha2-512-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,"
                       "hmac-sha2-512");
    // A name OpenSSH knows but this build lacks is accepted and left out.
    CHECK(cfg.kex_algorithms->find("group1-sha1") == std::string::npos);
    // As OpenSSH 9.2's ssh -G: the pattern takes the certificate names too.
    CHECK(*cfg.host_key_algorithms ==
          "ssh-ed25519,rsa-sha2-256,rsa-sha2-256-cert-v01@openssh.com,rsa-sha2-512,rsa-sha2-512-cert-v01@openssh.com");
    // (Debian's ssh -G: "-ecdsa*" leaves the sk-ecdsa names.)
    CHECK(*cfg.pubkey_accepted_algorithms ==
          "ssh-ed25519-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh.com,"
          "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,"
          "rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
          "rsa-sha2-512,rsa-sha2-256");
    CHECK(cfg.ca_signature_algorithms->ends_with(",ssh-rsa"));

    // Unset HostKeyAlgorithms stays unset (ordered per host at connect time).
    home.write(".ssh/config", "");
    CHECK_FALSE(load(home, {"h"}).host_key_algorithms);

    // Removing everything is allowed; naming only unknown things is not.
    home.write(".ssh/config", "Ciphers -*\n");
    CHECK(*load(home, {"h"}).ciphers == "");
    // Naming only algorithms this build lacks leaves the list empty (the
    // connection then fails to negotiate); OpenSSH-invalid lists are refused.
    home.write(".ssh/config", "Ciphers aes128-cbc\nHostKeyAlgorithms ssh-dss\n");
    cfg = load(home, {"h"});
    CHECK(*cfg.ciphers == "");
    CHECK(*cfg.host_key_algorithms == "");
    home.write(".ssh/config", "Ciphers ,foo\n");
    CHECK(load_error(home, {"h"}) == "fill_default_options: ciphers: invalid argument");
}

TEST_CASE("ssh_config: ProxyCommand, ProxyJump and other verbatim values")
{
    scratch_dir home;
    home.write(".ssh/config", "ProxyCommand=ssh -W \"%h:%p\" gw # kept\nLocalCommand echo hi   \n");
    auto cfg = load(home, {"h"});
    CHECK(*cfg.proxy_command == "ssh -W \"%h:%p\" gw # kept");
    CHECK(*cfg.local_command == "echo hi");

    home.write(".ssh/config", "ProxyJump alice@gw1:2200,gw2 # comment\nProxyCommand nc %h %p\n");
    cfg = load(home, {"h"});
    CHECK(*cfg.jump_host == "gw2");
    CHECK(*cfg.jump_extra == "alice@gw1:2200");
    CHECK_FALSE(cfg.proxy_command); // "none" from ProxyJump, cleared

    home.write(".ssh/config", "ProxyJump none\nProxyCommand nc %h %p\n");
    cfg = load(home, {"h"});
    CHECK_FALSE(cfg.jump_host);
    CHECK(*cfg.proxy_command == "nc %h %p");

    home.write(".ssh/config", "ProxyCommand none\nProxyJump x\n");
    cfg = load(home, {"h"});
    CHECK_FALSE(cfg.jump_host);
    CHECK_FALSE(cfg.proxy_command);
}

TEST_CASE("ssh_config: multi-state values and their spellings")
{
    scratch_dir home;
    home.write(".ssh/config", "StrictHostKeyChecking accept-new\nRequestTTY force\nControlMaster auto\n"
                              "PubkeyAuthentication host-bound\nUpdateHostKeys ask\nBatchMode YES\n"
                              "ConnectTimeout none\nConnectTimeout 15\nForwardAgent $SSH_AUTH_SOCK\n"
                              "AddKeysToAgent 1h\nEscapeChar ^A\nRekeyLimit 1G 1h\nTunnel ethernet\n"
                              "TunnelDevice 3:any\nControlPersist 10m\nIPQoS af21 cs1\nLogLevel DEBUG2\n");
    auto cfg = load(home, {"h"});
    CHECK(*cfg.strict_host_key_checking == strict_host_key_checking::accept_new);
    CHECK(*cfg.request_tty == request_tty::force);
    CHECK(*cfg.control_master == control_master::automatic);
    CHECK(*cfg.pubkey_authentication == pubkey_authentication::host_bound);
    CHECK(*cfg.update_hostkeys == yes_no_ask::ask);
    CHECK(*cfg.batch_mode);
    CHECK(*cfg.connect_timeout == 15); // "none" does not count as set
    CHECK(*cfg.forward_agent);
    CHECK(*cfg.forward_agent_sock_path == "$SSH_AUTH_SOCK");
    CHECK(*cfg.add_keys_to_agent == add_keys_to_agent::yes);
    CHECK(cfg.add_keys_to_agent_lifespan == 3600);
    CHECK(*cfg.escape_char == 1);
    CHECK(*cfg.rekey_limit == (1LL << 30));
    CHECK(*cfg.rekey_interval == 3600);
    CHECK(*cfg.tunnel == tunnel_request::ethernet);
    CHECK(*cfg.tunnel_local == 3);
    CHECK(*cfg.tunnel_remote == tun_id_any);
    CHECK(*cfg.control_persist);
    CHECK(cfg.control_persist_timeout == 600);
    CHECK(*cfg.ip_qos_interactive == 0x48);
    CHECK(*cfg.ip_qos_bulk == 0x20);
    CHECK(*cfg.log_level == log_level::debug2);
}

TEST_CASE("ssh_config: RekeyLimit sizes as scan_scaled reads them")
{
    scratch_dir home;
    const std::vector<std::pair<std::string, long long>> cases = {
        {"1.5G", 1610612736LL},        {"100b", 100},           {"1T", 1099511627776LL},
        {"0.5K", 512},                 {"1.25M", 1310720},      {"1.123456789G", 1206302541LL},
        {".5G", 536870912},            {"2g", 2147483648LL},    {"7E", 8070450532247928832LL},
        {"100.7", 100},                {"+16", 16},             {"default", 0},
    };
    for (const auto& [text, want] : cases) {
        const auto& value = text; // clang 14 cannot capture a structured binding in CAPTURE's lambda
        CAPTURE(value);
        home.write(".ssh/config", "RekeyLimit " + text + "\n");
        CHECK(*load(home, {"h"}).rekey_limit == want);
    }
}

TEST_CASE("ssh_config: backslashes and quotes in values")
{
    scratch_dir home;
    home.write(".ssh/config", "User a\\ b\\\\c\nEscapeChar \\\\\nHostKeyAlias \"x\\'y\"\n");
    auto cfg = load(home, {"h"});
    CHECK(*cfg.user == "a b\\c");
    CHECK(*cfg.escape_char == '\\');
    CHECK(*cfg.host_key_alias == "x'y");
}

TEST_CASE("ssh_config: BatchMode makes keepalives the default (Debian)")
{
    scratch_dir home;
    home.write(".ssh/config", "BatchMode yes\n");
    CHECK(*load(home, {"h"}).server_alive_interval == 300);
    home.write(".ssh/config", "BatchMode yes\nServerAliveInterval 0\n");
    CHECK(*load(home, {"h"}).server_alive_interval == 0);
    home.write(".ssh/config", "");
    CHECK(*load(home, {"h"}).server_alive_interval == 0);
}

TEST_CASE("ssh_config: checks made after reading")
{
    scratch_dir home;
    home.write(".ssh/config", "ConnectionAttempts 0\n");
    CHECK(load_error(home, {"h"}) == "Invalid number of ConnectionAttempts");
    home.write(".ssh/config", "RemoteCommand ls\n");
    CHECK(load_error(home, {"h", "uptime"}) == "Cannot execute command-line and remote command.");
    home.write(".ssh/config", "");
    CHECK(load_error(home, {"-f", "h"}) == "Cannot fork into background without a command to execute.");
    CHECK(load(home, {"-f", "-N", "h"}).fork_after_authentication.value());
    home.write(".ssh/config", "GlobalKnownHostsFile none\nGlobalKnownHostsFile x\n");
    CHECK(load(home, {"h"}).global_known_hosts_files.empty());
    // Numeric addresses are canonicalized, names lowercased.
    CHECK(*load(home, {"127.1"}).hostname == "127.0.0.1");
    CHECK(*load(home, {"Host.Example"}).hostname == "host.example");
    CHECK(*load(home, {"[::1]"}).hostname == "[::1]");
}

TEST_CASE("ssh_config: settings not carried out yet are named")
{
    scratch_dir home;
    home.write(".ssh/config", "");
    CHECK(unsupported_settings(load(home, {"h"})).empty());
    home.write(".ssh/config", "GSSAPIAuthentication no\nHostbasedAuthentication no\n");
    CHECK(unsupported_settings(load(home, {"h"})).empty());
    home.write(".ssh/config", "GSSAPIAuthentication yes\nHostbasedAuthentication yes\nLogVerbose kex.c:*:1000\n");
    const auto notes = unsupported_settings(load(home, {"h"}));
    // (Hostbased is carried out: ssh-keysign signs.)
    REQUIRE(notes.size() == 2);
    CHECK(notes[0] == "GSSAPIAuthentication/GSSAPIKeyExchange yes: not supported yet, not tried");
    CHECK(notes[1] == "LogVerbose: not supported yet, ignored (LogLevel applies)");
}
