// ssh-keygen -F / -R / -H's editing of known_hosts text (edit_known_hosts),
// as OpenSSH 9.2's hostkeys_foreach and its callbacks decide it. The
// program's output is compared with Debian's in
// regress/ssh_keygen_known_hosts.sh.
#include "ssh/keygen/keygen_known_hosts.hpp"

#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "tests/counting_random.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

std::string known_hosts_key()
{
    static const std::string k = format_public_key(private_key::generate(key_type::ed25519)->public_part());
    return k;
}

known_hosts_request kh_request(known_hosts_action a, std::string host = "host1")
{
    known_hosts_request rq;
    rq.action = a;
    rq.host = std::move(host);
    rq.path = "kh";
    return rq;
}

} // namespace

TEST_CASE("known_hosts editing: -R removes a host's lines, keeps markers and the rest")
{
    const std::string k = known_hosts_key();
    const std::string file = "host1,10.0.0.1 " + k + "\n# comment\n\n@revoked host1 " + k + "\nhost2 " + k +
                             "\n*.example " + k + "\nHOST1 " + k;
    test::counting_random rng;
    auto r = edit_known_hosts(file, kh_request(known_hosts_action::remove), rng);
    CHECK(r.found);
    CHECK_FALSE(r.invalid);
    CHECK(r.printed == "# Host host1 found: line 1\n# Host host1 found: line 7\n");
    CHECK(r.file == "# comment\n\n@revoked host1 " + k + "\nhost2 " + k + "\n*.example " + k + "\n");
    // A pattern line that matches goes too, as in OpenSSH.
    r = edit_known_hosts(file, kh_request(known_hosts_action::remove, "a.example"), rng);
    CHECK(r.found);
    CHECK(r.file.find("*.example") == std::string::npos);
    r = edit_known_hosts(file, kh_request(known_hosts_action::remove, "nothere"), rng);
    CHECK_FALSE(r.found);
    CHECK(r.file == file + "\n");
}

TEST_CASE("known_hosts editing: -F finds plain, bracketed and hashed names")
{
    const std::string k = known_hosts_key();
    test::counting_random rng;
    const std::string hashed = hash_known_host("hashed.example", rng);
    const std::string file = "[host2]:2222 " + k + "\n" + hashed + " " + k + "\n@cert-authority *.example " + k + "\n";
    auto r = edit_known_hosts(file, kh_request(known_hosts_action::find, "[host2]:2222"), rng);
    CHECK(r.found);
    CHECK(r.printed == "# Host [host2]:2222 found: line 1 \n[host2]:2222 " + k + "\n");
    CHECK_FALSE(edit_known_hosts(file, kh_request(known_hosts_action::find, "host2"), rng).found);
    r = edit_known_hosts(file, kh_request(known_hosts_action::find, "hashed.example"), rng);
    CHECK(r.printed.starts_with("# Host hashed.example found: line 2 \n" + hashed + " " + k + "\n"));
    r = edit_known_hosts(file, kh_request(known_hosts_action::find, "a.example"), rng);
    CHECK(r.printed.starts_with("# Host a.example found: line 3 CA\n"));
}

TEST_CASE("known_hosts editing: -H hashes each name, not markers or wildcards")
{
    const std::string k = known_hosts_key();
    const std::string file = "Host1,10.0.0.1 " + k + " comment\n@revoked host1 " + k + "\n*.example " + k + "\n";
    test::counting_random rng;
    auto r = edit_known_hosts(file, kh_request(known_hosts_action::hash, ""), rng);
    CHECK(r.has_unhashed);
    CHECK_FALSE(r.invalid);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0] == "kh:3: ignoring host name with wildcard: *.example");
    const auto first_nl = r.file.find('\n');
    const std::string line1 = r.file.substr(0, first_nl);
    // Names are lowercased before hashing: "host1" finds it.
    CHECK(hashed_host_matches(line1.substr(0, line1.find(' ')), "host1"));
    CHECK(line1.ends_with(" " + k + " comment"));
    CHECK(r.file.find("@revoked host1 " + k + "\n") != std::string::npos);
    // Hashing what is already hashed changes nothing.
    auto again = edit_known_hosts(r.file, kh_request(known_hosts_action::hash, ""), rng);
    CHECK(again.file.substr(0, first_nl) == line1);
}

TEST_CASE("known_hosts editing: invalid lines")
{
    const std::string k = known_hosts_key();
    test::counting_random rng;
    const std::vector<std::string> bad_lines = {"brokenline",          "host9 ssh-ed25519",   "host9 ssh-ed25519 # x",
                                                "host9 12 34 56",      "@bogus host9 " + k,   "|1|notbase64|x " + k,
                                                "host9 nosuchtype AAAA"};
    for (const std::string& bad : bad_lines) {
        CAPTURE(bad);
        const std::string file = "host1 " + k + "\n" + bad + "\n";
        auto r = edit_known_hosts(file, kh_request(known_hosts_action::remove), rng);
        CHECK(r.invalid);
        CHECK(r.notes.back() == "kh:2: invalid line");
        // -H matches no name, so a malformed hashed name is only copied.
        if (bad[0] != '|')
            CHECK(edit_known_hosts(file, kh_request(known_hosts_action::hash, ""), rng).invalid);
    }
    // -F reads a matching line's key only with -l, and skips one it cannot
    // read without calling the file invalid (known_hosts_find_delete).
    auto rq = kh_request(known_hosts_action::find, "host9");
    CHECK(edit_known_hosts("host9 ssh-ed25519 AAAA\n", rq, rng).found);
    rq.print_fingerprint = true;
    auto r = edit_known_hosts("host9 ssh-ed25519 AAAA\n", rq, rng);
    CHECK_FALSE(r.found);
    CHECK_FALSE(r.invalid);
}
