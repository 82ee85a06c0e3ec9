#include "ssh/known_hosts.hpp"

#include "ssh_test_util.hpp"
#include "tests/counting_random.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

using namespace longhaul;
using longhaul::test::counting_random;
using longhaul::test::fixture_key;
using longhaul::test::scratch_dir;

namespace {

std::string key_text(const public_key& k) { return format_public_key(k); }

} // namespace

TEST_CASE("known_hosts: names for non-default ports and aliases")
{
    CHECK(known_hosts_name("example.org", 22) == "example.org");
    CHECK(known_hosts_name("example.org", 0) == "example.org");
    CHECK(known_hosts_name("example.org", 2222) == "[example.org]:2222");
    CHECK(known_hosts_name("::1", 2222) == "[::1]:2222");
    CHECK(known_hosts_name("example.org", 2222, std::string("alias")) == "alias");
}

TEST_CASE("known_hosts: host field matching")
{
    CHECK(known_hosts_field_matches("example.org", "example.org"));
    CHECK(known_hosts_field_matches("EXAMPLE.org", "example.ORG"));
    CHECK(known_hosts_field_matches("a,example.org,10.0.0.1", "10.0.0.1"));
    CHECK(known_hosts_field_matches("*.example.org", "www.example.org"));
    CHECK(known_hosts_field_matches("web?.example.org", "web1.example.org"));
    CHECK_FALSE(known_hosts_field_matches("*.example.org,!bad.example.org", "bad.example.org"));
    CHECK(known_hosts_field_matches("[example.org]:2222", "[example.org]:2222"));
    CHECK_FALSE(known_hosts_field_matches("example.org", "[example.org]:2222"));
    CHECK(known_hosts_field_matches("[*.example.org]:*", "[a.example.org]:2222"));

    counting_random rng{1}; // deterministic salts for hashed names
    const auto hashed = hash_known_host("example.org", rng);
    CHECK(known_hosts_field_matches(hashed, "example.org"));
    CHECK_FALSE(known_hosts_field_matches(hashed, "example.com"));
    // A hashed field is one name: commas are not separators there.
    CHECK_FALSE(known_hosts_field_matches(hashed + ",other", "other"));
    CHECK_FALSE(known_hosts_field_matches("|1|bad|entry", "example.org"));
}

TEST_CASE("known_hosts: lookups and status")
{
    const auto ed = fixture_key("ed25519_plain_key.pub");
    const auto rsa = fixture_key("rsa2048_pem_plain_key.pub");
    const auto ecdsa = fixture_key("ecdsa256_plain_key.pub");
    counting_random rng{1}; // deterministic salts for hashed names
    const std::string text = "# comment\n"
                             "\n"
                             "plain.example " + key_text(ed) + "\n" +
                             hash_known_host("hashed.example", rng) + " " + key_text(rsa) + " comment here\n" +
                             "[port.example]:2222 " + key_text(ecdsa) + "\n" +
                             "*.wild.example,!no.wild.example " + key_text(ed) + "\n" +
                             "@revoked * " + key_text(rsa) + "\n" +
                             "@cert-authority *.example " + key_text(ecdsa) + "\n" +
                             "broken.example ssh-ed25519 AAAA!!notbase64\n" +
                             "dss.example ssh-dss AAAAB3NzaC1kc3MAAACBAP\n" +
                             "changed.example " + key_text(rsa) + "\n";

    auto lookup = [&](std::string_view name) {
        known_host_keys k;
        k.load_text(name, text, "/kh");
        return k;
    };

    const known_host_entry* found = nullptr;
    auto k = lookup("plain.example");
    CHECK(k.check(ed, &found) == host_key_status::ok);
    REQUIRE(found != nullptr);
    CHECK(found->file == "/kh");
    CHECK(found->line == 3);
    CHECK(found->hosts == "plain.example");

    // A different key of the same or another type: changed, with the entry.
    CHECK(k.check(ecdsa, &found) == host_key_status::changed);
    REQUIRE(found != nullptr);
    CHECK(found->line == 3);

    CHECK(lookup("unknown.other").check(ed) == host_key_status::not_found);
    CHECK(lookup("port.example").check(ecdsa) == host_key_status::not_found);
    CHECK(lookup("[port.example]:2222").check(ecdsa) == host_key_status::ok);
    CHECK(lookup("a.wild.example").check(ed) == host_key_status::ok);
    CHECK(lookup("no.wild.example").check(ed) == host_key_status::not_found);

    // The @revoked line applies to every host and wins over a match.
    k = lookup("hashed.example");
    CHECK(k.check(rsa, &found) == host_key_status::revoked);
    CHECK(found == nullptr);
    CHECK(lookup("changed.example").check(rsa) == host_key_status::revoked);

    // @cert-authority entries are recognised but never match plain keys.
    k = lookup("x.example");
    CHECK(k.has_cert_authority());
    CHECK(k.check(ecdsa) == host_key_status::not_found);
    CHECK(k.find_type(key_type::ecdsa_p256) == nullptr);

    // Lines that do not parse (bad base64, unknown types) are skipped.
    // (Only the wildcard @revoked and @cert-authority lines name them.)
    CHECK(lookup("broken.example").entries().size() == 2);
    CHECK(lookup("dss.example").entries().size() == 2);

    k = lookup("plain.example");
    CHECK(k.find_type(key_type::ed25519) != nullptr);
    CHECK(k.find_type(key_type::rsa) == nullptr);
}

TEST_CASE("known_hosts: files, other names and algorithm order")
{
    scratch_dir dir;
    const auto ed = fixture_key("ed25519_plain_key.pub");
    const auto rsa = fixture_key("rsa2048_pem_plain_key.pub");
    counting_random rng{1}; // deterministic salts for hashed names
    const auto f1 = dir.write("kh1", "target " + key_text(rsa) + "\nalias1,alias2 " + key_text(ed) + "\n");
    const auto f2 = dir.write("kh2", hash_known_host("alias3", rng) + " " + key_text(ed) + "\n@revoked other " +
                                         key_text(ed) + "\n");

    known_host_keys k;
    k.load_file("target", f1);
    k.load_file("target", f2);
    k.load_file("target", dir / "missing");
    CHECK(k.entries().size() == 1);

    const auto names = other_names_for_key(ed, "target", {f1, f2, dir / "missing"}, "");
    CHECK(names == std::vector<std::string>{f1 + ":2: alias1,alias2", f2 + ":1: [hashed name]"});
    // Paths under the home directory are shown with "~".
    CHECK(other_names_for_key(ed, "target", {f1}, dir.path()) == std::vector<std::string>{"~/kh1:2: alias1,alias2"});
    CHECK(other_names_for_key(ed, "alias1", {f1}, "").empty());

    // Known key types go first unless the first algorithm's type is known.
    CHECK(order_host_key_algorithms("ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256", k) ==
          "rsa-sha2-512,rsa-sha2-256,ssh-ed25519,ecdsa-sha2-nistp256");
    CHECK(order_host_key_algorithms("rsa-sha2-512,ssh-ed25519", k) == "rsa-sha2-512,ssh-ed25519");
    known_host_keys none;
    CHECK(order_host_key_algorithms("ssh-ed25519,rsa-sha2-512", none) == "ssh-ed25519,rsa-sha2-512");
}

TEST_CASE("known_hosts: adding keys")
{
    scratch_dir home;
    const auto ed = fixture_key("ed25519_plain_key.pub");
    const auto rsa = fixture_key("rsa2048_pem_plain_key.pub");
    counting_random rng{1}; // deterministic salts for hashed names
    const std::string ssh_dir = home / ".ssh";
    const std::string kh = ssh_dir + "/known_hosts";

    // ~/.ssh is created (0700) when missing; names are lowercased.
    REQUIRE(add_known_host(kh, "[Host.Example]:2222", ed, false, rng, ssh_dir));
    struct stat st {};
    REQUIRE(stat(ssh_dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(test::read_text_file(kh) == "[host.example]:2222 " + key_text(ed) + "\n");

    REQUIRE(add_known_host(kh, "host2,10.0.0.2", rsa, false, rng, ssh_dir));
    // Hashed: one line per name.
    REQUIRE(add_known_host(kh, "host3,10.0.0.3", ed, true, rng, ssh_dir));
    const auto text = test::read_text_file(kh);
    std::vector<std::string> lines;
    for (std::size_t p = 0; p < text.size();) {
        const auto nl = text.find('\n', p);
        lines.push_back(text.substr(p, nl - p));
        p = nl + 1;
    }
    REQUIRE(lines.size() == 4);
    CHECK(lines[1] == "host2,10.0.0.2 " + key_text(rsa));
    CHECK(lines[2].rfind("|1|", 0) == 0);
    CHECK(lines[2].ends_with(" " + key_text(ed)));

    for (const auto& [name, want] : std::vector<std::pair<std::string, host_key_status>>{
             {"host3", host_key_status::ok},
             {"10.0.0.3", host_key_status::ok},
             {"[host.example]:2222", host_key_status::ok},
             {"host.example", host_key_status::not_found},
             {"host2", host_key_status::changed}}) {
        const auto& host = name; // clang 14 cannot capture a structured binding in CAPTURE's lambda
        CAPTURE(host);
        known_host_keys k;
        k.load_file(name, kh);
        CHECK(k.check(ed) == want);
    }

    // An unwritable location fails quietly; the caller reports it.
    CHECK_FALSE(add_known_host(home / "no/such/dir/kh", "h", ed, false, rng, ssh_dir));
}

TEST_CASE("known_hosts: fingerprints and labels")
{
    const auto ed = fixture_key("ed25519_plain_key.pub");
    CHECK(key_type_label(ed) == "ED25519");
    CHECK(key_type_label(fixture_key("rsa2048_pem_plain_key.pub")) == "RSA");
    CHECK(key_type_label(fixture_key("ecdsa256_plain_key.pub")) == "ECDSA");
    CHECK(key_fingerprint_text(ed, key_fingerprint_hash::sha256) == ed.fingerprint_sha256());
    CHECK(key_fingerprint_text(ed, key_fingerprint_hash::md5) == ed.fingerprint_md5());
    CHECK(key_fingerprint_text(ed, key_fingerprint_hash::sha1).rfind("SHA1:", 0) == 0);
    CHECK(key_fingerprint_text(ed, key_fingerprint_hash::sha512).size() == 7 + 86);
}
