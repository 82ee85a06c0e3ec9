// sshd_config: what this server reports or refuses, `sshd -T` beside
// OpenSSH's, and the settings of issue 12's defect 10.
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
TEST_CASE("sshd_config: settings reported as not supported yet")
{
    auto c = parse("X11Forwarding yes\nAllowTcpForwarding no\nAllowStreamLocalForwarding no\n"
                   "AllowAgentForwarding no\nPermitTunnel yes\n");
    const auto notes = unsupported_settings(c.global());
    // X11 forwarding and tunnels are served (sshd/x11_forwarding,
    // sshd/tunnel_forwarding): not reported.
    CHECK(notes.empty());
    CHECK(c.global().x11_forwarding);
    CHECK(c.global().permit_tunnel == tunnel_mode::yes);
    CHECK(parse("DisableForwarding yes\nPermitTunnel no\n").global().disable_forwarding);
    CHECK(unsupported_settings(parse("DisableForwarding yes\n").global()).empty());
    // Forwarding is served, agent forwarding too: nothing to report.
    CHECK(unsupported_settings(parse("AllowTcpForwarding yes\nAllowStreamLocalForwarding remote\n"
                                     "GatewayPorts clientspecified\nAllowAgentForwarding no\n")
                                   .global())
              .empty());
    CHECK(unsupported_settings(parse("AllowAgentForwarding yes\n").global()).empty());
}

TEST_CASE("sshd_config: sshd -T output matches OpenSSH's")
{
    if (!have_sshd())
        LONGHAUL_SKIP("/usr/sbin/sshd not installed (openssh-server)");
    // OpenSSH's sshd -T stops at a missing privilege separation directory;
    // the package's service creates it when it starts, which a CI machine
    // (or a container) may never have done. regress/lib.sh does the same.
    if (::access("/run/sshd", F_OK) != 0 && ::geteuid() == 0)
        ::mkdir("/run/sshd", 0755);
    temp_dir keys;
    const auto gen = longhaul::test::run_command("ssh-keygen -q -t ed25519 -N '' -f " + keys.file("hk") + " 2>&1");
    REQUIRE(gen.status == 0);
    const std::string hk = "HostKey " + keys.file("hk") + "\n";
    check_against_openssh(hk, "");
    check_against_openssh(hk + "Port 2222\nPort 22\nListenAddress 127.0.0.1\nListenAddress [::1]:2200\n"
                               "LogLevel DEBUG1\nSyslogFacility LOCAL3\nUnusedConnectionTimeout 1h\n"
                               "ChannelTimeout none\nLogVerbose none\n"
                               "AllowUsers alice bob@10.0.0.0/8\nAllowUsers carol\nDenyGroups wheel\n"
                               "AcceptEnv LANG LC_*\nSetEnv A=1 B=\"two words\"\n"
                               "Subsystem sftp /usr/lib/openssh/sftp-server -f AUTHPRIV -l INFO\n"
                               "MaxStartups 5\nPerSourceMaxStartups 3\nPerSourceNetBlockSize 24:64\n"
                               "PermitTunnel point-to-point\nIPQoS af11\nRekeyLimit 1G 1h\n"
                               "PermitOpen host:22 [::1]:80 *:*\nPermitListen 8080 localhost:9000\n"
                               "PermitUserEnvironment LANG,LC_*\nPubkeyAuthOptions touch-required\n"
                               "AuthenticationMethods publickey,password publickey,keyboard-interactive\n"
                               "Compression delayed\nGatewayPorts clientspecified\nAllowTcpForwarding local\n"
                               "IgnoreRhosts shosts-only\nPermitRootLogin forced-commands-only\n"
                               "VersionAddendum hello world\nForceCommand /bin/echo hi   there\n"
                               "ChrootDirectory /srv/%u\nBanner /etc/issue.net\n"
                               "AuthorizedKeysFile %h/.ssh/a /etc/keys/%u none\n"
                               "AuthorizedKeysCommand /usr/bin/cmd %u %f\nAuthorizedKeysCommandUser nobody\n"
                               "StreamLocalBindMask 022\nFingerprintHash md5\nCiphers +aes128-cbc\n"
                               "MACs -hmac-sha1*,umac*\nKexAlgorithms ^diffie-hellman-group14-sha1\n"
                               "PubkeyAcceptedAlgorithms +ssh-rsa\nHostKeyAlgorithms ssh-ed25519,rsa-*\n"
                               "X11DisplayOffset 12\nMaxAuthTries 3\nClientAliveInterval 1m\nUsePAM yes\n"
                               "KbdInteractiveAuthentication no\nPrintMotd no\nX11Forwarding yes\n",
                          "");
    const std::string matches = hk + "PasswordAuthentication yes\nAllowUsers global1\n"
                                     "Match User alice,!bob Address 10.0.0.0/8\n"
                                     "  PasswordAuthentication no\n  AllowUsers m1\n  AllowUsers m2\n"
                                     "  ForceCommand none\n"
                                     "Match Group root\n  X11Forwarding yes\n  MaxAuthTries 2\n"
                                     "Match LocalPort 2222\n  Banner /etc/issue\n"
                                     "Match Host *.example.org LocalAddress 192.168.0.0/16\n  MaxSessions 1\n";
    check_against_openssh(matches, "user=alice,addr=10.1.2.3,host=h,lport=22");
    check_against_openssh(matches, "user=root,addr=10.1.2.3,lport=2222,laddr=1.1.1.1,rdomain=x");
    check_against_openssh(matches, "user=x,host=a.example.org,laddr=192.168.5.5,addr=1.2.3.4,lport=22");
    check_against_openssh(matches, "user=root,addr=1.2.3.4"); // lport missing: an error in both
    check_against_openssh(hk + "Match LocalPort 22\n  MaxSessions 1\n", "");
    // ChannelTimeout and ExposeAuthInfo, globally and for a Match block.
    const std::string timeouts = hk + "ChannelTimeout session:*=5m direct-tcpip=2s *=1h\nExposeAuthInfo yes\n"
                                      "Match User alice\n  ChannelTimeout x11-connection=0\n  ExposeAuthInfo no\n";
    check_against_openssh(timeouts, "");
    check_against_openssh(timeouts, "user=alice,addr=10.1.2.3,host=h,lport=22");
    check_against_openssh(timeouts, "user=bob,addr=10.1.2.3,host=h,lport=22");
    check_against_openssh(hk + "ChannelTimeout direct-tcpip=2x\n", "");
    check_against_openssh(hk + "ChannelTimeout none direct-tcpip=2\n", "");
    // Errors: same message, same status.
    check_against_openssh(hk + "FooBar yes\nBaz 1\n", "");
    check_against_openssh(hk + "Match User x\n  Port 23\n", "");
    check_against_openssh(hk + "Port 0\n", "");
    check_against_openssh(hk + "MaxStartups 10:0:20\n", "");
    check_against_openssh(hk + "AllowUsers bob@10.0.0.1/8\n", "");
    check_against_openssh(hk + "ListenAddress 127.0.0.1 rdomain x\n", "");
    check_against_openssh(hk + "LogVerbose none x\n", "");
    check_against_openssh(hk + "AuthenticationMethods publickey\nAuthenticationMethods any\n", "");
    check_against_openssh(hk + "AuthenticationMethods publickey\nMatch User x\n AuthenticationMethods any\n", "user=x");
    for (const char* spec : {"user=y,lport=22", "user=x,lport=22"}) // fatal for x only, as "reprocess config"
        check_against_openssh(hk + "Match User x\n AuthenticationMethods publickey\n AuthenticationMethods any\n",
                              spec);
}

TEST_CASE("sshd_config: settings this server cannot enforce are refused, never ignored (issue 12, defect 10)")
{
    // Each names the keyword and says "not supported yet", in a Match block too.
    const std::pair<const char*, const char*> refused[] = {
        {"LogVerbose kex.c:*:1000\n", "test.cfg line 1: LogVerbose is not supported yet"},
        {"SecurityKeyProvider /usr/lib/libsk.so\n", "test.cfg line 1: SecurityKeyProvider /usr/lib/libsk.so is not supported yet"},
    };
    for (const auto& [text, message] : refused) {
        const auto& config = text; // clang 14 cannot capture a structured binding in CAPTURE's lambda
        CAPTURE(config);
        CHECK(error_of(text) == message);
    }
    // What asks for nothing new still loads, and what is enforced now
    // (ChannelTimeout, ExposeAuthInfo: sshd/channel_timeouts, sshd/auth_info;
    // PerSourcePenalties: sshd/penalty_table).
    for (const char* ok : {"ChannelTimeout none\n", "LogVerbose none\n", "ExposeAuthInfo no\n",
                           "PerSourcePenalties no\n", "PerSourcePenalties yes\n", "PerSourcePenalties authfail:30s\n",
                           "PerSourcePenaltyExemptList 10.0.0.0/8\n", "SecurityKeyProvider internal\n", "RekeyLimit 1G 1h\n",
                           "Match User x\n  ExposeAuthInfo no\n", "ChannelTimeout session=5m\n",
                           "ExposeAuthInfo yes\n", "Match User x\n  ChannelTimeout session:*=1m direct-tcpip=0\n",
                           "Match User x\n  ExposeAuthInfo yes\n", "Match User x\n  RekeyLimit 1G 1h\n"}) {
        CAPTURE(ok);
        CHECK(error_of(ok) == "(no error)");
    }
}

TEST_CASE("sshd_config: HostCertificate accumulates, as OpenSSH's servconf_add_hostcert")
{
    const auto loaded = parse("HostCertificate /etc/ssh/a-cert.pub\nHostCertificate /etc/ssh/b-cert.pub\n");
    CHECK(loaded.global().host_certificate_files ==
          std::vector<std::string>{"/etc/ssh/a-cert.pub", "/etc/ssh/b-cert.pub"});
    // The certificate algorithms HostKeyAlgorithms allows are kept apart
    // (offered only with a certificate); host_key_algorithms is unchanged.
    CHECK(loaded.global().host_certificate_algorithms ==
          "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
          "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
          "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com");
    CHECK(loaded.global().host_key_algorithms.find("cert") == std::string::npos);
    CHECK(parse("HostKeyAlgorithms ssh-ed25519,rsa-sha2-256-cert-v01@openssh.com\n").global().host_certificate_algorithms ==
          "rsa-sha2-256-cert-v01@openssh.com");
    CHECK(parse("HostKeyAlgorithms -*-cert-v01@openssh.com\n").global().host_certificate_algorithms.empty());
    // sshd -T shows the configured list, certificates and all, in its order,
    // less the security-key algorithms this server cannot serve.
    CHECK(loaded.global().host_key_algorithms_shown ==
          "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
          "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
          "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,"
          "ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256");
    CHECK(parse("HostKeyAlgorithms ssh-ed25519,sk-ssh-ed25519@openssh.com,rsa-sha2-256-cert-v01@openssh.com\n")
              .global()
              .host_key_algorithms_shown == "ssh-ed25519,rsa-sha2-256-cert-v01@openssh.com");
}

TEST_CASE("sshd_config: enforced settings of defect 10 parse into what the server uses")
{
    const auto loaded = parse("RequiredRSASize 3072\nUnusedConnectionTimeout 90s\nPerSourceMaxStartups 4\n"
                              "PerSourceNetBlockSize 24:56\nSyslogFacility AUTHPRIV\n");
    const auto& g = loaded.global();
    CHECK(g.required_rsa_size == 3072);
    CHECK(g.unused_connection_timeout == 90);
    CHECK(g.per_source_max_startups == 4);
    CHECK(g.per_source_netblock_ipv4 == 24);
    CHECK(g.per_source_netblock_ipv6 == 56);
    CHECK(syslog_facility_code(g.log_facility) == LOG_AUTHPRIV);
    CHECK(syslog_facility_code(parse("").global().log_facility) == LOG_AUTH);
    CHECK(syslog_facility_code(parse("SyslogFacility LOCAL7\n").global().log_facility) == LOG_LOCAL7);
    CHECK(syslog_facility_code(parse("SyslogFacility DAEMON\n").global().log_facility) == LOG_DAEMON);
    // Match blocks may change them per user.
    auto c = parse("UnusedConnectionTimeout 1h\nMatch User alice\n  UnusedConnectionTimeout 5\n"
                   "  RequiredRSASize 4096\n");
    CHECK(c.for_connection(conn("alice")).unused_connection_timeout == 5);
    CHECK(c.for_connection(conn("alice")).required_rsa_size == 4096);
    CHECK(c.for_connection(conn("bob")).unused_connection_timeout == 3600);
}

TEST_CASE("sshd_config: Debian 12's stock sshd_config keywords load")
{
    auto c = parse("KbdInteractiveAuthentication no\nUsePAM yes\nX11Forwarding yes\nPrintMotd no\n"
                   "AcceptEnv LANG LC_*\nSubsystem\tsftp\t/usr/lib/openssh/sftp-server\n");
    CHECK(c.global().use_pam);
    CHECK_FALSE(c.global().print_motd);
    // X11 forwarding is served: on, and nothing said about it at start.
    CHECK(c.global().x11_forwarding);
    CHECK(unsupported_settings(c.global()).empty());
}
