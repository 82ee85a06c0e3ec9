// AuthorizedKeysCommand and AuthorizedPrincipalsCommand
// (authorized_keys_command.hpp): the tokens each expands, as OpenSSH 9.2's
// auth2-pubkey.c lists them, the account it runs as, OpenSSH's failure
// messages, and the output checked as sshd checks it. Running a command
// needs root: the command and its directories must be root's.
#include "sshd/authorized_keys_command.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "sshd/certificate_auth.hpp"
#include "tests/file_text.hpp"
#include "tests/skip.hpp"
#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>

using namespace longhaul;
using longhaul::test::write_file;

namespace {

const public_key& command_key()
{
    static const public_key k = private_key::generate(key_type::ed25519)->public_part();
    return k;
}

authorized_keys_context command_ctx()
{
    authorized_keys_context c;
    c.user = "alice";
    c.remote_address = "192.0.2.7";
    c.remote_host = "192.0.2.7";
    c.now = 1700000000; // 2023-11-14T22:13:20Z, within the fixtures' validity
    return c;
}

// A directory for test commands that sshd would run: it and every
// directory above it root's and not group/world-writable. Next to the test
// binary, or, when the tree is checked out under such a directory (/tmp),
// in /run. Removed at the end.
class command_dir {
public:
    command_dir()
    {
        char exe[PATH_MAX] = {};
        REQUIRE(::readlink("/proc/self/exe", exe, sizeof exe - 1) > 0);
        std::string base(exe);
        base = base.substr(0, base.find_last_of('/'));
        if (!safe(base) && safe("/run"))
            base = "/run";
        std::string tmpl = base + "/akc-XXXXXX";
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path_ = tmpl;
        ::chmod(path_.c_str(), 0755);
    }
    ~command_dir() { std::filesystem::remove_all(path_); }
    command_dir(const command_dir&) = delete;
    command_dir& operator=(const command_dir&) = delete;
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    static bool safe(std::string dir)
    {
        for (;;) {
            struct stat st {};
            if (::stat(dir.empty() ? "/" : dir.c_str(), &st) != 0 || st.st_uid != 0 || (st.st_mode & 022) != 0)
                return false;
            if (dir.empty())
                return true;
            dir = dir.substr(0, dir.find_last_of('/'));
        }
    }
    std::string path_;
};

std::optional<user_account> runner_account()
{
    return ::geteuid() == 0 ? lookup_user("nobody") : lookup_user(::geteuid());
}

// A certificate of the fixtures (Debian's ssh-keygen): user_ed25519-cert.pub,
// ID "alice@longhaul", serial 42, principals alice and bob, CA ca_ed25519.
certificate fixture_alice_certificate()
{
    const std::string text = test::read_whole_file(std::string(LONGHAUL_TEST_DATA) + "/certs/user_ed25519-cert.pub");
    const auto sp1 = text.find(' ');
    const auto sp2 = text.find_first_of(" \n", sp1 + 1);
    auto blob = base64_decode(text.substr(sp1 + 1, sp2 - sp1 - 1));
    REQUIRE(blob);
    auto c = certificate::from_blob(*blob);
    REQUIRE(c);
    return std::move(*c);
}

std::string base64_of(const public_key& k)
{
    const std::string line = format_public_key(k);
    return line.substr(line.find(' ') + 1);
}

} // namespace

TEST_CASE("auth commands: the command's user")
{
    const user_account alice{"alice", 1001, 1001, "/home/alice", "/bin/sh"};
    std::vector<log_message> log;
    CHECK_FALSE(command_user("AuthorizedKeysCommand", "", alice, log));
    CHECK(log.at(0).text == "No user for AuthorizedKeysCommand specified, skipping");
    log.clear();
    CHECK_FALSE(command_user("AuthorizedPrincipalsCommand", "", alice, log));
    CHECK(log.at(0).text == "No user for AuthorizedPrincipalsCommand specified, skipping");
    log.clear();
    // %u is the user logging in: here a name no system has.
    CHECK_FALSE(command_user("AuthorizedPrincipalsCommand", "lh-no-such-%u", alice, log));
    REQUIRE(log.size() == 1);
    CHECK(log[0].text.starts_with("AuthorizedPrincipalsCommandUser \"lh-no-such-alice\" not found: "));
    log.clear();
    auto root = command_user("AuthorizedKeysCommand", "root", alice, log);
    REQUIRE(root);
    CHECK(root->uid == 0);
    CHECK(log.empty());
    // An unrequested request runs nothing.
    keys_command_request rq;
    rq.command = "/bin/true";
    rq.target = alice;
    CHECK_FALSE(run_authorized_keys_command(rq).output);
    principals_command_request pq;
    pq.command = "/bin/true";
    pq.target = alice;
    pq.run_as = root;
    CHECK_FALSE(run_authorized_principals_command(pq).output); // no certificate
}

TEST_CASE("auth commands: AuthorizedKeysCommand")
{
    command_dir dir;
    const std::string script = dir.file("keys.sh");
    write_file(script, "#!/bin/sh\n"
                       "echo '" + format_public_key_line(command_key(), "from-command") + "'\n"
                       "echo \"# args: $*\"\n"
                       "echo \"# env: $USER $HOME $PATH\"\n",
               0755);
    keys_command_request rq;
    rq.command = script + " %u %U %h %t %f %k %%";
    rq.target = user_account{"alice", 1001, 1001, "/home/alice", "/bin/sh"};
    rq.key = command_key();
    const bool root = ::geteuid() == 0;
    rq.run_as = runner_account();
    REQUIRE(rq.run_as);
    if (!root) {
        auto r = run_authorized_keys_command(rq);
        CHECK_FALSE(r.output);
        LONGHAUL_SKIP("running AuthorizedKeysCommand needs root (the command must be root's)");
    }
    auto r = run_authorized_keys_command(rq);
    REQUIRE(r.output);
    CHECK(r.output->find("# args: alice 1001 /home/alice ssh-ed25519 " + command_key().fingerprint_sha256() + " " +
                         base64_of(command_key()) + " %") != std::string::npos);
    CHECK(r.output->find("# env: nobody ") != std::string::npos);
    auto found = check_authorized_keys(*r.output, rq.command, command_key(), command_ctx());
    REQUIRE(found.match);
    CHECK(found.match->location == rq.command + ":1");

    // No arguments: the user name is passed.
    rq.command = script;
    r = run_authorized_keys_command(rq);
    REQUIRE(r.output);
    CHECK(r.output->find("# args: alice\n") != std::string::npos);

    // Failures are logged as OpenSSH does.
    write_file(script, "#!/bin/sh\nexit 3\n", 0755);
    r = run_authorized_keys_command(rq);
    CHECK_FALSE(r.output);
    CHECK(r.log.at(0).text == "AuthorizedKeysCommand " + script + " alice failed, status 3");
    write_file(script, "#!/bin/sh\nsleep 10\n", 0755);
    rq.timeout = std::chrono::milliseconds(300);
    r = run_authorized_keys_command(rq);
    CHECK_FALSE(r.output);
    CHECK(r.log.at(0).text == "AuthorizedKeysCommand " + script + " alice timed out after 0 seconds");
    write_file(script, "#!/bin/sh\nwhile :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done\n", 0755);
    rq.timeout = std::chrono::milliseconds(10000);
    rq.max_output = 100000;
    r = run_authorized_keys_command(rq);
    CHECK_FALSE(r.output);
    CHECK(r.log.at(0).text == "AuthorizedKeysCommand " + script + " alice output exceeds 100000 bytes");
    ::chmod(script.c_str(), 0777);
    r = run_authorized_keys_command(rq);
    CHECK(r.log.at(0).text == "Unsafe AuthorizedKeysCommand \"" + script + "\": bad ownership or modes for file " + script);
}

// For a certificate OpenSSH passes the certificate itself as %t and %k
// and the certified key's fingerprint as %f; the output is then checked as
// an authorized_keys file holding cert-authority lines.
TEST_CASE("auth commands: AuthorizedKeysCommand for a certificate")
{
    if (::geteuid() != 0)
        LONGHAUL_SKIP("running AuthorizedKeysCommand needs root (the command must be root's)");
    const certificate cert = fixture_alice_certificate();
    command_dir dir;
    const std::string script = dir.file("keys.sh");
    write_file(script, "#!/bin/sh\n"
                       "echo 'cert-authority,principals=\"alice\" " +
                           format_public_key_line(cert.signature_key(), "ca") + "'\n"
                       "echo \"# args: $*\"\n",
               0755);
    keys_command_request rq;
    rq.command = script + " %t %f %k";
    rq.target = user_account{"alice", 1001, 1001, "/home/alice", "/bin/sh"};
    rq.run_as = runner_account();
    rq.key = cert.key();
    rq.cert = cert;
    auto r = run_authorized_keys_command(rq);
    REQUIRE(r.output);
    CHECK(r.output->find("# args: ssh-ed25519-cert-v01@openssh.com " + cert.key().fingerprint_sha256() + " " +
                         base64_encode(cert.blob()) + "\n") != std::string::npos);
    // The certificate's source-address is 127.0.0.1/32,::1.
    authorized_keys_context ctx = command_ctx();
    ctx.remote_address = ctx.remote_host = "127.0.0.1";
    auto found = check_authorized_keys(*r.output, rq.command, cert, ctx);
    REQUIRE(found.match);
    CHECK(found.match->location == rq.command + ":1");
}

TEST_CASE("auth commands: AuthorizedPrincipalsCommand")
{
    const certificate cert = fixture_alice_certificate();
    command_dir dir;
    const std::string script = dir.file("principals.sh");
    write_file(script, "#!/bin/sh\n"
                       "echo \"# args: $*\"\n"
                       "echo 'carol'\n"
                       "echo 'no-pty bob'\n",
               0755);
    principals_command_request rq;
    rq.command = script + " %u %U %h %t %T %f %F %i %s %k %K %C %%";
    rq.target = user_account{"alice", 1001, 1001, "/home/alice", "/bin/sh"};
    rq.run_as = runner_account();
    rq.cert = cert;
    rq.connection_id = "192.0.2.7 40000 127.0.0.1 2222";
    if (::geteuid() != 0) {
        CHECK_FALSE(run_authorized_principals_command(rq).output);
        LONGHAUL_SKIP("running AuthorizedPrincipalsCommand needs root (the command must be root's)");
    }
    auto r = run_authorized_principals_command(rq);
    REQUIRE(r.output);
    const std::string args = "# args: alice 1001 /home/alice ssh-ed25519-cert-v01@openssh.com ssh-ed25519 " +
                             cert.key().fingerprint_sha256() + " " + cert.signature_key().fingerprint_sha256() +
                             " alice@longhaul 42 " + base64_encode(cert.blob()) + " " +
                             base64_of(cert.signature_key()) + " 192.0.2.7 40000 127.0.0.1 2222 %\n";
    CHECK(r.output->find(args) != std::string::npos);
    // As sshd reads it: the line naming one of the certificate's
    // principals, with its options, at "(command):N".
    std::vector<log_message> notes;
    auto principal = check_authorized_principals(*r.output, "(command)", cert, notes);
    REQUIRE(principal);
    CHECK(principal->location == "(command):3");
    CHECK_FALSE(principal->options.permit_pty);

    // No arguments: nothing is added (unlike AuthorizedKeysCommand).
    rq.command = script;
    r = run_authorized_principals_command(rq);
    REQUIRE(r.output);
    CHECK(r.output->find("# args: \n") != std::string::npos);

    // Failures name the setting.
    write_file(script, "#!/bin/sh\nexit 2\n", 0755);
    r = run_authorized_principals_command(rq);
    CHECK_FALSE(r.output);
    CHECK(r.log.at(0).text == "AuthorizedPrincipalsCommand " + script + " failed, status 2");
    rq.command = script + " %q";
    r = run_authorized_principals_command(rq);
    CHECK_FALSE(r.output);
    CHECK_FALSE(r.log.empty());
    rq.command = "principals.sh";
    r = run_authorized_principals_command(rq);
    CHECK(r.log.at(0).text == "AuthorizedPrincipalsCommand path is not absolute");
    rq.command = script + " \"unterminated";
    r = run_authorized_principals_command(rq);
    CHECK(r.log.at(0).text == "AuthorizedPrincipalsCommand \"" + rq.command + "\" contains invalid quotes");
}
