// Hostbased authentication's host checks (sshd/hostbased_auth) as
// OpenSSH's auth-rhosts.c and hostbased_key_allowed() decide: the equiv
// and rhosts file syntax, which files count for whom, and known_hosts.
#include "sshd/hostbased_auth.hpp"

#include "common/keys/key_lines.hpp"
#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

using namespace longhaul;
using longhaul::test::fixture_key;
using longhaul::test::fixture_key_line;
using longhaul::test::read_file;
using longhaul::test::temp_dir;
using longhaul::test::write_file;

namespace {

bool allows(std::string_view text, std::string_view client_user = "alice", std::string_view server_user = "alice",
            std::vector<std::string>* notes = nullptr)
{
    return rhosts_text_allows(text, "client.example", "192.0.2.7", client_user, server_user, "/etc/hosts.equiv", notes);
}

bool logged(const hostbased_verdict& v, std::string_view text)
{
    return std::any_of(v.log.begin(), v.log.end(), [&](const log_message& m) { return m.text == text; });
}

} // namespace

TEST_CASE("hostbased: equiv and rhosts lines as check_rhosts_file reads them")
{
    // A host alone: the same user on both ends.
    CHECK(allows("client.example\n"));
    CHECK_FALSE(allows("client.example\n", "bob", "alice"));
    // By address, and the name case-insensitively; another host is not it.
    CHECK(allows("192.0.2.7\n"));
    CHECK(allows("CLIENT.Example\n"));
    CHECK_FALSE(allows("other.example\n"));
    CHECK_FALSE(allows("192.0.2.70\n"));
    // A named client user, exactly.
    CHECK(allows("client.example bob\n", "bob", "alice"));
    CHECK_FALSE(allows("client.example Bob\n", "bob", "alice"));
    CHECK(allows("  \tclient.example\tbob  \n", "bob", "alice"));
    // '+' before a name is only a name; alone it is everyone: never honoured.
    CHECK(allows("+client.example +bob\n", "bob", "alice"));
    std::vector<std::string> notes;
    CHECK_FALSE(allows("+\n", "alice", "alice", &notes));
    CHECK_FALSE(allows("client.example +\n", "bob", "alice"));
    CHECK_FALSE(allows("-\n"));
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == "Ignoring wild host/user names in /etc/hosts.equiv.");
    // The first matching line decides: a negated one refuses.
    notes.clear();
    CHECK_FALSE(allows("-client.example\nclient.example\n", "alice", "alice", &notes));
    CHECK(notes == std::vector<std::string>{"Matched negative entry in /etc/hosts.equiv."});
    CHECK_FALSE(allows("client.example -alice\nclient.example\n"));
    CHECK(allows("-other.example\nclient.example\n"));
    CHECK(allows("client.example -bob\nclient.example alice\n"));
    // Comments, blank lines, NO_PLUS and a third word are skipped.
    notes.clear();
    CHECK_FALSE(allows("# client.example\n\n   \nNO_PLUS\nclient.example alice extra\n", "alice", "alice", &notes));
    CHECK(notes == std::vector<std::string>{"Found garbage in /etc/hosts.equiv."});
    CHECK(allows("# x\nNO_PLUS\nclient.example"));
    // Text after a NUL is not part of the line (fgets and C strings).
    CHECK_FALSE(allows(std::string_view("client.exa\0mple\n", 16)));
    CHECK(allows(std::string_view("x\0y\nclient.example\n", 19)));
    // A line longer than fgets' 1023 bytes is read as several lines.
    const std::string long_line = std::string(1023, 'x') + "client.example\n";
    CHECK(allows(long_line));
    // ("xxx.. cl" then "ient.example": neither names the client.)
    CHECK_FALSE(allows(std::string(1020, 'x') + " client.example\n"));
    CHECK_FALSE(allows(""));
}

TEST_CASE("hostbased: the files, the users they count for, and known_hosts")
{
    temp_dir d;
    ::chmod(d.path().c_str(), 0755);
    // A user who is not root (the system files never count for root); as
    // root the tests read the home as that user, so it is open to all.
    user_account u;
    u.uid = ::geteuid() == 0 ? 65534 : ::geteuid();
    u.gid = ::getegid() == 0 ? 65534 : ::getegid();
    u.name = "alice";
    u.home = d.file("home");
    ::mkdir(u.home.c_str(), 0755);
    user_groups g;
    g.ids = {u.gid};
    const public_key key = fixture_key("ed25519_plain_key.pub");
    const std::string key_text = fixture_key_line("ed25519_plain_key.pub");

    hostbased_files files;
    files.hosts_equiv = d.file("hosts.equiv");
    files.shosts_equiv = d.file("shosts.equiv");
    files.system_known_hosts = d.file("ssh_known_hosts");
    files.system_known_hosts2 = d.file("ssh_known_hosts2");

    server_config c;
    c.strict_modes = false;
    hostbased_query q;
    q.user = &u;
    q.groups = &g;
    q.client_user = "alice";
    q.client_host = "client.example.";
    q.remote_address = "192.0.2.7";
    q.remote_host = "192.0.2.7"; // UseDNS no
    q.key = &key;

    SUBCASE("no access file at all: refused before any lookup")
    {
        write_file(files.system_known_hosts, "192.0.2.7 " + key_text + "\n");
        const auto v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "auth_rhosts2: no hosts access files exist"));
        CHECK(logged(v, "userauth_hostbased mismatch: client sends client.example, but we resolve 192.0.2.7 to "
                        "192.0.2.7"));
    }
    SUBCASE("the client's names cannot start a log line of their own")
    {
        c.hostbased_uses_name_from_packet_only = true;
        q.client_user = "alice\nAccepted publickey for root";
        q.client_host = "client.example\r\nAccepted publickey for root";
        write_file(files.shosts_equiv, "client.example\n");
        const auto v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        REQUIRE_FALSE(v.log.empty());
        for (const auto& m : v.log)
            CHECK(m.text.find_first_of("\r\n") == std::string::npos);
    }
    SUBCASE("hosts.equiv by address, the key known for the address")
    {
        write_file(files.hosts_equiv, "192.0.2.7\n");
        write_file(files.system_known_hosts, "other.example " + key_text + "\n");
        auto v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "check_key_in_hostfiles: key for host 192.0.2.7 not found"));
        write_file(files.system_known_hosts, "192.0.2.7 " + key_text + "\n");
        v = hostbased_key_allowed(c, q, files);
        CHECK(v.allowed);
        CHECK(logged(v, "Accepted for 192.0.2.7 [192.0.2.7] by " + files.hosts_equiv + "."));
        CHECK(logged(v, "Accepted ED25519 public key " + key.fingerprint_sha256() + " from alice@192.0.2.7"));
        // The older file names, when the first files do not know the host.
        write_file(files.system_known_hosts, "");
        write_file(files.system_known_hosts2, "192.0.2.7 " + key_text + "\n");
        CHECK(hostbased_key_allowed(c, q, files).allowed);
        // A different key known for the host is not a fallback case.
        write_file(files.system_known_hosts, "192.0.2.7 " + fixture_key_line("ecdsa256_plain_key.pub") + "\n");
        CHECK_FALSE(hostbased_key_allowed(c, q, files).allowed);
        // @revoked wins.
        write_file(files.system_known_hosts, "192.0.2.7 " + key_text + "\n@revoked * " + key_text + "\n");
        v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "WARNING: revoked key for 192.0.2.7 attempted authentication"));
    }
    SUBCASE("the client's own name with HostbasedUsesNameFromPacketOnly")
    {
        c.hostbased_uses_name_from_packet_only = true;
        write_file(files.shosts_equiv, "client.example\n");
        write_file(files.system_known_hosts, "client.example " + key_text + "\n");
        auto v = hostbased_key_allowed(c, q, files);
        CHECK(v.allowed);
        CHECK(logged(v, "Accepted ED25519 public key " + key.fingerprint_sha256() + " from alice@client.example"));
        CHECK_FALSE(logged(v, "userauth_hostbased mismatch: client sends client.example, but we resolve 192.0.2.7 to "
                              "192.0.2.7"));
        c.hostbased_uses_name_from_packet_only = false;
        CHECK_FALSE(hostbased_key_allowed(c, q, files).allowed);
    }
    SUBCASE("root: the system files do not count")
    {
        user_account root = u;
        root.uid = 0;
        q.user = &root;
        write_file(files.hosts_equiv, "192.0.2.7 alice\n");
        write_file(files.system_known_hosts, "192.0.2.7 " + key_text + "\n");
        auto v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "auth_rhosts2: root user, ignoring system hosts files"));
    }
    SUBCASE("~/.shosts and ~/.rhosts under IgnoreRhosts, StrictModes, user known_hosts")
    {
        write_file(files.system_known_hosts, "192.0.2.7 " + key_text + "\n");
        write_file(u.home + "/.rhosts", "192.0.2.7\n", 0644);
        c.ignore_rhosts = ignore_rhosts_mode::yes;
        auto v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "Server has been configured to ignore .rhosts."));
        c.ignore_rhosts = ignore_rhosts_mode::shosts_only;
        CHECK_FALSE(hostbased_key_allowed(c, q, files).allowed);
        c.ignore_rhosts = ignore_rhosts_mode::no;
        CHECK(hostbased_key_allowed(c, q, files).allowed);
        ::unlink((u.home + "/.rhosts").c_str());
        write_file(u.home + "/.shosts", "192.0.2.7 alice\n", 0644);
        c.ignore_rhosts = ignore_rhosts_mode::shosts_only;
        CHECK(hostbased_key_allowed(c, q, files).allowed);
        // StrictModes: a file others may write is passed over.
        c.strict_modes = true;
        ::chmod((u.home + "/.shosts").c_str(), 0666);
        v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "Rhosts authentication refused for alice: bad modes for " + u.home + "/.shosts"));
        ::chmod((u.home + "/.shosts").c_str(), 0644);
        CHECK(hostbased_key_allowed(c, q, files).allowed);
        // ... and a home directory others may write refuses them all.
        ::chmod(u.home.c_str(), 0777);
        v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "Rhosts authentication refused for alice: bad ownership or modes for home directory."));
        ::chmod(u.home.c_str(), 0755);
        // The user's known_hosts, unless IgnoreUserKnownHosts.
        write_file(files.system_known_hosts, "");
        ::mkdir((u.home + "/.ssh").c_str(), 0755);
        write_file(u.home + "/.ssh/known_hosts", "192.0.2.7 " + key_text + "\n", 0644);
        CHECK(hostbased_key_allowed(c, q, files).allowed);
        c.ignore_user_known_hosts = true;
        CHECK_FALSE(hostbased_key_allowed(c, q, files).allowed);
        c.ignore_user_known_hosts = false;
        ::chmod((u.home + "/.ssh/known_hosts").c_str(), 0666);
        v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "Authentication refused for alice: bad owner or modes for " + u.home + "/.ssh/known_hosts"));
    }
    SUBCASE("a directory where an equiv file should be")
    {
        ::mkdir(files.shosts_equiv.c_str(), 0755);
        write_file(files.system_known_hosts, "192.0.2.7 " + key_text + "\n");
        auto v = hostbased_key_allowed(c, q, files);
        CHECK_FALSE(v.allowed);
        CHECK(logged(v, "User alice hosts file " + files.shosts_equiv + " is not a regular file"));
    }
}
