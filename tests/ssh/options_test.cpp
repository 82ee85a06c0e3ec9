#include "ssh/options.hpp"

#include "ssh_test_util.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using longhaul::test::scratch_dir;

namespace {

client_options parse(std::vector<std::string> args)
{
    static const auto env = test::test_environment("/home/alice");
    return parse_command_line(args, env);
}

template <class E>
std::string error_of(std::vector<std::string> args)
{
    try {
        parse(std::move(args));
    } catch (const E& e) {
        return e.what();
    }
    return "<no error>";
}

} // namespace

TEST_CASE("options: destination forms")
{
    auto o = parse({"host"});
    CHECK(o.host == "host");
    CHECK_FALSE(o.config.user);
    CHECK_FALSE(o.have_command());

    o = parse({"bob@host"});
    CHECK(o.host == "host");
    CHECK(*o.config.user == "bob");

    // The last '@' separates user and host.
    o = parse({"a@b@host"});
    CHECK(*o.config.user == "a@b");
    CHECK(o.host == "host");

    o = parse({"ssh://carol@example.org:2222"});
    CHECK(o.host == "example.org");
    CHECK(*o.config.user == "carol");
    CHECK(*o.config.port == 2222);

    o = parse({"ssh://b%40b;fp=x@h"});
    CHECK(*o.config.user == "b@b");
    CHECK(o.host == "h");

    o = parse({"ssh://h:"});
    CHECK(o.host == "h");
    CHECK_FALSE(o.config.port);

    // -l and -p given first win over the URI's user and port.
    o = parse({"-l", "dave", "-p", "23", "ssh://carol@h:2222"});
    CHECK(*o.config.user == "dave");
    CHECK(*o.config.port == 23);

    // IPv6 literals: plain or bracketed, as OpenSSH takes them.
    o = parse({"bob@::1"});
    CHECK(o.host == "::1");
    o = parse({"[::1]"});
    CHECK(o.host == "[::1]");

    // "SSH://" is not a URI: it is taken as a host name.
    CHECK(parse({"SSH://h"}).host == "SSH://h");
}

TEST_CASE("options: invalid destinations")
{
    for (const char* bad : {"ssh://[::1]", "ssh://[::1]:22", "ssh://h:0", "ssh://h:abc", "ssh://h/path", "ssh://",
                            "ssh://@h", "ssh://-h", "ssh://h..x", "@host"}) {
        CAPTURE(bad);
        CHECK(error_of<usage_error>({bad}) == "");
    }
    CHECK(error_of<usage_error>({}) == "");
    CHECK(error_of<usage_error>({"-v"}) == "");
    CHECK(error_of<command_line_error>({"a;b"}) == "hostname contains invalid characters");
    CHECK(error_of<command_line_error>({"h x"}) == "hostname contains invalid characters");
    CHECK(error_of<command_line_error>({"--", "-x"}) == "hostname contains invalid characters");
    CHECK(error_of<command_line_error>({"a;b@host"}) == "remote username contains invalid characters");
    CHECK(error_of<command_line_error>({"-l", "-a", "host"}) == "remote username contains invalid characters");
    CHECK(error_of<command_line_error>({"-l", "a -b", "host"}) == "remote username contains invalid characters");
    CHECK(error_of<command_line_error>({"-l", "a\\", "host"}) == "remote username contains invalid characters");
    CHECK(*parse({"-l", "a$b c", "host"}).config.user == "a$b c");
}

TEST_CASE("options: getopt clustering, attached arguments and --")
{
    auto o = parse({"-4Cp2200", "-vvv", "host"});
    CHECK(*o.config.address_family == address_family::inet);
    CHECK(*o.config.compression);
    CHECK(*o.config.port == 2200);
    CHECK(o.verbose == 3);
    CHECK(*o.config.log_level == log_level::debug3);

    o = parse({"-p", "22", "-l", "u", "host"});
    CHECK(*o.config.port == 22);

    // Options after the destination are read too, until the command starts.
    o = parse({"host", "-p", "2222", "uname", "-a"});
    CHECK(*o.config.port == 2222);
    CHECK(o.command_words == std::vector<std::string>{"uname", "-a"});
    CHECK(o.command == "uname -a");

    o = parse({"host", "cmd", "-p", "2222"});
    CHECK_FALSE(o.config.port);
    CHECK(o.command == "cmd -p 2222");

    o = parse({"host", "--", "-p", "5"});
    CHECK_FALSE(o.config.port);
    CHECK(o.command == "-p 5");

    o = parse({"--", "host", "-p", "5"});
    CHECK(o.command == "-p 5");

    // "-" alone is not an option: it is the destination (and an invalid one).
    CHECK(error_of<command_line_error>({"-"}) == "hostname contains invalid characters");

    // The getopt lines end in CR LF, as OpenSSH's logger ends them.
    CHECK(error_of<usage_error>({"-Z", "host"}) == "unknown option -- Z\r");
    CHECK(error_of<usage_error>({"-p"}) == "option requires an argument -- p\r");
    CHECK(error_of<usage_error>({"host", "-l"}) == "option requires an argument -- l\r");
    CHECK(usage_text().substr(0, 47) == "usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_");
}

TEST_CASE("options: how OpenSSH prints each error")
{
    auto logged = [](std::vector<std::string> args) {
        try {
            parse(std::move(args));
        } catch (const command_line_error& e) {
            return e.logged();
        }
        FAIL("no error");
        return false;
    };
    CHECK_FALSE(logged({"-p", "0", "h"}));      // fprintf
    CHECK_FALSE(logged({"-e", "xx", "h"}));
    CHECK_FALSE(logged({"-L", "x", "h"}));
    CHECK(logged({"-J", "a:0", "h"}));          // fatal()
    CHECK(logged({"-o", "Port=0", "h"}));       // error()
    CHECK(logged({"a;b"}));
}

TEST_CASE("options: ports")
{
    CHECK(error_of<command_line_error>({"-p", "0", "h"}) == "Bad port '0'");
    CHECK(error_of<command_line_error>({"-p", "70000", "h"}) == "Bad port '70000'");
    CHECK(error_of<command_line_error>({"-p", "abc", "h"}) == "Bad port 'abc'");
    CHECK(error_of<command_line_error>({"-p22x", "h"}) == "Bad port '22x'");
    CHECK(*parse({"-p", "65535", "h"}).config.port == 65535);
    // Service names work, as with getservbyname().
    CHECK(*parse({"-p", "ssh", "h"}).config.port == 22);
    // The first -p wins and a later one is not even checked.
    CHECK(*parse({"-p", "1", "-p", "junk", "h"}).config.port == 1);
}

TEST_CASE("options: precedence between flags and -o")
{
    // -o sets only what is unset; so do -p and -l.
    CHECK(*parse({"-o", "Port=5", "-p", "2", "h"}).config.port == 5);
    CHECK(*parse({"-p", "2", "-o", "Port=5", "h"}).config.port == 2);
    CHECK(*parse({"-l", "a", "-l", "b", "h"}).config.user == "a");
    // -c always overwrites; -o Ciphers does not.
    CHECK(*parse({"-c", "aes128-ctr", "-o", "Ciphers=aes256-ctr", "h"}).config.ciphers == "aes128-ctr");
    CHECK(*parse({"-o", "Ciphers=aes256-ctr", "-c", "aes128-ctr", "h"}).config.ciphers == "aes128-ctr");
    auto o = parse({"-o", "User alice", "-o", "LogLevel=ERROR", "h"});
    CHECK(o.option_lines == std::vector<std::string>{"User alice", "LogLevel=ERROR"});
    CHECK(*o.config.user == "alice");
}

TEST_CASE("options: -o errors carry OpenSSH's messages")
{
    CHECK(error_of<command_line_error>({"-o", "Foo=bar", "h"}) == "command-line: line 0: Bad configuration option: foo");
    CHECK(error_of<command_line_error>({"-o", "Host x", "h"}) == "Host directive not supported as a command-line option");
    CHECK(error_of<command_line_error>({"-o", "Match all", "h"}) ==
          "Host directive not supported as a command-line option");
    CHECK(error_of<command_line_error>({"-o", "Include x", "h"}) ==
          "Include directive not supported as a command-line option");
    CHECK(error_of<command_line_error>({"-o", "Port", "h"}) == "command-line line 0: no argument after keyword \"port\"");
    CHECK(error_of<command_line_error>({"-o", "Port=0", "h"}) == "command-line line 0: Bad port '0'.");
    CHECK(error_of<command_line_error>({"-o", "Ciphers=foo", "h"}) == "command-line line 0: Bad SSH2 cipher spec 'foo'.");
    CHECK(error_of<command_line_error>({"-o", "KexAlgorithms=foo", "h"}) ==
          "Unsupported KEX algorithm \"foo\"\ncommand-line line 0: Bad SSH2 KexAlgorithms 'foo'.");
    CHECK(error_of<command_line_error>({"-o", "Ciphers=aes128-ctr aes256-ctr", "h"}) ==
          "command-line line 0: keyword ciphers extra arguments at end of line");
    // Unsupported options are reported but not fatal.
    auto o = parse({"-o", "RSAAuthentication=yes", "h"});
    REQUIRE(o.log_messages.size() == 1);
    CHECK(o.log_messages[0].second == "command-line line 0: Unsupported option \"rsaauthentication\"");
}

TEST_CASE("options: flags")
{
    auto o = parse({"-tt", "-N", "-q", "-n", "-x", "-a", "-k", "-g", "h"});
    CHECK(*o.config.request_tty == request_tty::no); // -N after -tt
    CHECK(*o.config.session_type == session_type::none);
    CHECK(*o.config.log_level == log_level::quiet);
    CHECK(*o.config.stdin_null);
    CHECK_FALSE(*o.config.forward_x11);
    CHECK_FALSE(*o.config.forward_agent);
    CHECK_FALSE(*o.config.gssapi_delegate_credentials);
    CHECK(*o.config.gateway_ports);

    o = parse({"-t", "h"});
    CHECK(*o.config.request_tty == request_tty::yes);
    o = parse({"-tt", "h"});
    CHECK(*o.config.request_tty == request_tty::force);
    o = parse({"-T", "-t", "h"});
    CHECK(*o.config.request_tty == request_tty::yes);

    o = parse({"-f", "-Y", "-A", "-MM", "-K", "-6", "h", "true"});
    CHECK(*o.config.fork_after_authentication);
    CHECK(*o.config.stdin_null);
    CHECK(*o.config.forward_x11);
    CHECK(*o.config.forward_x11_trusted);
    CHECK(*o.config.forward_agent);
    CHECK(*o.config.control_master == control_master::ask);
    CHECK(*o.config.gssapi_authentication);
    CHECK(*o.config.address_family == address_family::inet6);
    CHECK(o.saw('f'));
    CHECK(o.saw('M'));
    CHECK_FALSE(o.saw('L'));

    o = parse({"-G", "-F", "cfg", "-E", "log", "-b", "10.0.0.1", "-B", "eth0", "-S", "ctl", "-I", "p11", "h"});
    CHECK(o.dump_config);
    CHECK(*o.config_file == "cfg");
    CHECK(*o.log_file == "log");
    CHECK(*o.config.bind_address == "10.0.0.1");
    CHECK(*o.config.bind_interface == "eth0");
    CHECK(*o.config.control_path == "ctl");
    CHECK(*o.config.pkcs11_provider == "p11");
    CHECK(o.request().host_arg == "h");

    // -v after -v goes up to DEBUG3 and stops there.
    o = parse({"-vvvvv", "h"});
    CHECK(o.verbose == 3);
    CHECK(*o.config.log_level == log_level::debug3);
    // -P (a 9.4 option) takes no argument in 9.2 and is ignored.
    o = parse({"-P", "foo", "h"});
    CHECK(o.host == "foo");
    CHECK(o.command == "h");

    CHECK(error_of<command_line_error>({"-1", "h"}) == "SSH protocol v.1 is no longer supported");
    CHECK(error_of<command_line_error>({"-y", "-E", "f", "h"}) == "Can't specify both -y and -E");
}

TEST_CASE("options: -e, -c, -m, -w, -O")
{
    CHECK(*parse({"-e", "^]", "h"}).config.escape_char == 0x1d);
    CHECK(*parse({"-e", "none", "h"}).config.escape_char == escape_char_none);
    CHECK(*parse({"-e", "%", "h"}).config.escape_char == '%');
    CHECK(*parse({"-e", "^", "h"}).config.escape_char == '^');
    CHECK(error_of<command_line_error>({"-e", "xx", "h"}) == "Bad escape character 'xx'.");

    CHECK(*parse({"-c", "+aes128-cbc", "h"}).config.ciphers == "+aes128-cbc");
    CHECK(error_of<command_line_error>({"-c", "foo", "h"}) == "Unknown cipher type 'foo'");
    CHECK(error_of<command_line_error>({"-m", "foo", "h"}) == "Unknown mac type 'foo'");
    // -m takes no '+' prefix (OpenSSH 9.2 does not strip it).
    CHECK(error_of<command_line_error>({"-m", "+hmac-sha1", "h"}) == "Unknown mac type '+hmac-sha1'");

    auto o = parse({"-w", "1:2", "h"});
    CHECK(*o.config.tunnel == tunnel_request::point_to_point);
    CHECK(*o.config.tunnel_local == 1);
    CHECK(*o.config.tunnel_remote == 2);
    o = parse({"-w", "any", "h"});
    CHECK(*o.config.tunnel_local == tun_id_any);
    CHECK(error_of<command_line_error>({"-w", "x", "h"}) == "Bad tun device 'x'");
    CHECK(error_of<command_line_error>({"-w", "1:x", "h"}) == "Bad tun device '1:x'");
    CHECK(error_of<command_line_error>({"-w", "-1", "h"}) == "Bad tun device '-1'");
    CHECK(error_of<command_line_error>({"-w", "2147483646", "h"}) == "Bad tun device '2147483646'");
    o = parse({"-w", "3:any", "h"});
    CHECK(*o.config.tunnel_local == 3);
    CHECK(*o.config.tunnel_remote == tun_id_any);
    // -w after -o Tunnel=ethernet keeps ethernet (OpenSSH sets
    // point-to-point only when Tunnel was not given).
    o = parse({"-o", "Tunnel=ethernet", "-w", "0:1", "h"});
    CHECK(*o.config.tunnel == tunnel_request::ethernet);

    CHECK(parse({"-O", "check", "h"}).mux == mux_command::check);
    CHECK(error_of<command_line_error>({"-O", "bogus", "h"}) == "Invalid multiplex command.");
    CHECK(error_of<command_line_error>({"-O", "check", "-O", "exit", "h"}) == "Multiplexing command already specified");
}

TEST_CASE("options: forwarding and jump specifications")
{
    auto o = parse({"-L", "8080:localhost:80", "-L", "[::1]:8081:[fe80::1]:81", "-D", "1080", "-R", "9091", "-R",
                    "/tmp/r.sock:/tmp/l.sock", "h"});
    REQUIRE(o.config.local_forwards.size() == 3);
    CHECK(o.config.local_forwards[0].listen_port == 8080);
    CHECK(*o.config.local_forwards[0].connect_host == "localhost");
    CHECK(o.config.local_forwards[0].connect_port == 80);
    CHECK(*o.config.local_forwards[1].listen_host == "::1");
    CHECK(*o.config.local_forwards[1].connect_host == "fe80::1");
    CHECK(o.config.local_forwards[2].is_dynamic());
    REQUIRE(o.config.remote_forwards.size() == 2);
    CHECK(o.config.remote_forwards[0].is_dynamic());
    CHECK(*o.config.remote_forwards[1].listen_path == "/tmp/r.sock");
    CHECK(*o.config.remote_forwards[1].connect_path == "/tmp/l.sock");

    CHECK(error_of<command_line_error>({"-L", "8080", "h"}) == "Bad local forwarding specification '8080'");
    CHECK(error_of<command_line_error>({"-L", "0:h:80", "h"}) == "Bad local forwarding specification '0:h:80'");
    CHECK(error_of<command_line_error>({"-D", "a:b:c", "h"}) == "Bad dynamic forwarding specification 'a:b:c'");
    CHECK(error_of<command_line_error>({"-R", "x:y", "h"}) == "Bad remote forwarding specification 'x:y'");

    o = parse({"-W", "[::1]:22", "h"});
    CHECK(*o.config.stdio_forward_host == "::1");
    CHECK(o.config.stdio_forward_port == 22);
    CHECK(*o.config.request_tty == request_tty::no);
    CHECK(error_of<command_line_error>({"-W", "h:22", "-W", "h:23", "h"}) == "stdio forward already specified");
    CHECK(error_of<command_line_error>({"-W", "x", "h"}) == "Bad stdio forwarding specification 'x'");

    o = parse({"-J", "bob@gw:2222,ssh://carol@other", "h"});
    CHECK(*o.config.jump_user == "carol");
    CHECK(*o.config.jump_host == "other");
    CHECK(*o.config.jump_extra == "bob@gw:2222");
    CHECK(*o.config.proxy_command == "none");
    CHECK(error_of<command_line_error>({"-J", "a", "-J", "b", "h"}) ==
          "Only a single -J option is permitted (use commas to separate multiple jump hops)");
    CHECK(error_of<command_line_error>({"-o", "ProxyCommand=nc %h %p", "-J", "b", "h"}) ==
          "Cannot specify -J with ProxyCommand");
    CHECK(error_of<command_line_error>({"-J", "a:0", "h"}) == "Invalid -J argument");
}

TEST_CASE("options: session checks")
{
    CHECK(error_of<usage_error>({"-s", "h"}) == "You must specify a subsystem to invoke.");
    CHECK(parse({"-s", "h", "sftp"}).command == "sftp");
    CHECK(error_of<command_line_error>({"-N", "-s", "h", "x"}) == "Cannot specify -s with -N/SessionType");
    CHECK(error_of<command_line_error>({"-s", "-N", "h", "x"}) == "Cannot specify -N with -s/SessionType");
}

TEST_CASE("options: -V and -Q stop at once")
{
    auto o = parse({"-V", "-Z"});
    CHECK(o.action == command_line_action::version);
    o = parse({"-Q", "cipher", "-p", "junk"});
    CHECK(o.action == command_line_action::query);
    CHECK(o.query_lines.front() == "aes128-ctr");
    CHECK(o.query_lines.back() == "chacha20-poly1305@openssh.com");
    CHECK(parse({"-Q", "help"}).query_lines.size() == 11);
    CHECK(parse({"-Q", "Ciphers"}).query_lines == parse({"-Q", "cipher"}).query_lines);
    // As OpenSSH lists them: each name, then its certificate's; host keys
    // are never security keys here.
    CHECK(parse({"-Q", "HostKeyAlgorithms"}).query_lines ==
          std::vector<std::string>{"ssh-ed25519", "ssh-ed25519-cert-v01@openssh.com", "ecdsa-sha2-nistp256",
                                   "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp384",
                                   "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp521",
                                   "ecdsa-sha2-nistp521-cert-v01@openssh.com", "ssh-rsa", "ssh-rsa-cert-v01@openssh.com",
                                   "rsa-sha2-256", "rsa-sha2-256-cert-v01@openssh.com", "rsa-sha2-512",
                                   "rsa-sha2-512-cert-v01@openssh.com"});
    const auto user_algorithms = parse({"-Q", "key-sig"}).query_lines;
    CHECK(user_algorithms.size() == 18); // the 14 above and the two security keys' with their certificates
    CHECK(user_algorithms == parse({"-Q", "PubkeyAcceptedAlgorithms"}).query_lines);
    CHECK(user_algorithms == parse({"-Q", "HostbasedAcceptedAlgorithms"}).query_lines);
    CHECK(parse({"-Q", "key-cert"}).query_lines ==
          std::vector<std::string>{"ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519-cert-v01@openssh.com",
                                   "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp384-cert-v01@openssh.com",
                                   "ecdsa-sha2-nistp521-cert-v01@openssh.com",
                                   "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "ssh-rsa-cert-v01@openssh.com"});
    CHECK(parse({"-Q", "key-plain"}).query_lines.size() == 7);
    CHECK(parse({"-Q", "key"}).query_lines.size() == 14);
    CHECK(parse({"-Q", "sig"}).query_lines ==
          std::vector<std::string>{"ssh-ed25519", "sk-ssh-ed25519@openssh.com", "ecdsa-sha2-nistp256",
                                   "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "sk-ecdsa-sha2-nistp256@openssh.com",
                                   "ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"});
    CHECK(error_of<command_line_error>({"-Q", "bogus"}) == "Unsupported query \"bogus\"");
    CHECK(error_of<command_line_error>({"-Q", "CIPHER"}) == "Unsupported query \"CIPHER\"");
    // -V after the destination is still honoured.
    CHECK(parse({"h", "-V"}).action == command_line_action::version);
}

TEST_CASE("options: -i checks the file and expands ~")
{
    scratch_dir home;
    const auto key = home.write(".ssh/id_test", "x");
    const auto env = test::test_environment(home.path());
    auto o = parse_command_line({"-i", "~/.ssh/id_test", "-i", "~/.ssh/missing", "-i", key, "h"}, env);
    REQUIRE(o.config.identity_files.size() == 1); // the same file once
    CHECK(o.config.identity_files[0].path == key);
    CHECK(o.config.identity_files[0].user_provided);
    REQUIRE(o.warnings.size() == 1);
    CHECK(o.warnings[0] == "Warning: Identity file " + home.path() + "/.ssh/missing not accessible: No such file or directory.");
}
