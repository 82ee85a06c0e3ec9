#include "sshd/revoked_keys.hpp"

#include "common/keys/key_lines.hpp"
#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>

using namespace longhaul;
using longhaul::test::fixture_key;
using longhaul::test::fixture_key_line;
using longhaul::test::read_file;
using longhaul::test::temp_dir;
using longhaul::test::write_file;

namespace {

const std::string key_data = std::string(LONGHAUL_TEST_DATA) + "/keys/";

sshd_config parse_config(const std::string& text)
{
    config_load_options o;
    o.resolve_addresses = true; // numeric addresses only
    return sshd_config::parse(text, "test.cfg", o);
}

} // namespace

TEST_CASE("RevokedKeys: a listed key is refused with OpenSSH's log line")
{
    temp_dir dir;
    const std::string list = dir.file("revoked_keys");
    write_file(list, "# revoked\n" + fixture_key_line("ed25519_plain_key.pub") + "\n");
    const auto ed = fixture_key("ed25519_plain_key.pub");

    auto r = check_revoked_key(list, ed, fingerprint_hash::sha256);
    CHECK(r.refused);
    REQUIRE(r.log.size() == 1);
    CHECK(r.log[0].level == syslog_level::error);
    CHECK(r.log[0].text == "Authentication key ED25519 " + ed.fingerprint_sha256() + " revoked by file " + list);

    // FingerprintHash is honoured.
    auto md5 = check_revoked_key(list, ed, fingerprint_hash::md5);
    REQUIRE(md5.log.size() == 1);
    CHECK(md5.log[0].text == "Authentication key ED25519 " + ed.fingerprint_md5() + " revoked by file " + list);

    // Other keys pass without a word.
    auto other = check_revoked_key(list, fixture_key("rsa2048_plain_key.pub"), fingerprint_hash::sha256);
    CHECK_FALSE(other.refused);
    CHECK(other.log.empty());
}

TEST_CASE("RevokedKeys: a KRL made by ssh-keygen -k")
{
    const std::string krl = key_data + "krl/keys.krl";
    const auto ecdsa = fixture_key("ecdsa256_plain_key.pub"); // revoked by SHA1 hash
    auto r = check_revoked_key(krl, ecdsa, fingerprint_hash::sha256);
    CHECK(r.refused);
    REQUIRE(r.log.size() == 1);
    CHECK(r.log[0].text == "Authentication key ECDSA " + ecdsa.fingerprint_sha256() + " revoked by file " + krl);
    CHECK_FALSE(check_revoked_key(krl, fixture_key("ecdsa521_plain_key.pub"), fingerprint_hash::sha256).refused);
    auto rsa = check_revoked_key(krl, fixture_key("rsa2048_plain_key.pub"), fingerprint_hash::sha256);
    REQUIRE(rsa.log.size() == 1);
    CHECK(rsa.log[0].text.rfind("Authentication key RSA SHA256:", 0) == 0);
}

TEST_CASE("RevokedKeys: a file that cannot be read or parsed refuses every key")
{
    temp_dir dir;
    const auto ed = fixture_key("ed25519_plain_key.pub");
    const std::string fp = ed.fingerprint_sha256();

    const std::string missing = dir.file("none-such");
    auto r = check_revoked_key(missing, ed, fingerprint_hash::sha256);
    CHECK(r.refused);
    REQUIRE(r.log.size() == 1);
    CHECK(r.log[0].level == syslog_level::error);
    CHECK(r.log[0].text == "Error checking authentication key ED25519 " + fp + " in revoked keys file " + missing +
                               ": No such file or directory");

    const std::string garbage = dir.file("garbage");
    write_file(garbage, fixture_key_line("rsa2048_plain_key.pub") + "\nthis is not a key\n");
    r = check_revoked_key(garbage, ed, fingerprint_hash::sha256);
    CHECK(r.refused);
    REQUIRE(r.log.size() == 1);
    CHECK(r.log[0].text ==
          "Error checking authentication key ED25519 " + fp + " in revoked keys file " + garbage + ": invalid format");

    const std::string truncated = dir.file("truncated.krl");
    const std::string krl = read_file(key_data + "krl/keys.krl");
    write_file(truncated, krl.substr(0, krl.size() - 3));
    r = check_revoked_key(truncated, ed, fingerprint_hash::sha256);
    CHECK(r.refused);
    REQUIRE(r.log.size() == 1);
    CHECK(r.log[0].text == "Error checking authentication key ED25519 " + fp + " in revoked keys file " + truncated +
                               ": incomplete message");

    if (::geteuid() != 0) { // root reads whatever the mode says
        const std::string unreadable = dir.file("unreadable");
        write_file(unreadable, "", 0);
        r = check_revoked_key(unreadable, ed, fingerprint_hash::sha256);
        CHECK(r.refused);
        REQUIRE(r.log.size() == 1);
        CHECK(r.log[0].text.ends_with(": Permission denied"));
    }

    // An empty file revokes nothing.
    const std::string empty = dir.file("empty");
    write_file(empty, "");
    CHECK_FALSE(check_revoked_key(empty, ed, fingerprint_hash::sha256).refused);
}

TEST_CASE("RevokedKeys: configuration (none, Match) and no longer reported as unsupported")
{
    const auto c = parse_config("RevokedKeys /etc/ssh/revoked\n");
    CHECK(c.global().revoked_keys == "/etc/ssh/revoked");
    for (const auto& note : unsupported_settings(c.global()))
        CHECK(note.find("RevokedKeys") == std::string::npos);
    CHECK(parse_config("RevokedKeys none\n").global().revoked_keys.empty());

    const auto m = parse_config("Match User alice\n  RevokedKeys /etc/ssh/alice_revoked\n");
    CHECK(m.global().revoked_keys.empty());
    connection_info alice;
    alice.user = "alice";
    alice.address = alice.host = "192.0.2.1";
    CHECK(m.for_connection(alice).revoked_keys == "/etc/ssh/alice_revoked");
    connection_info bob = alice;
    bob.user = "bob";
    CHECK(m.for_connection(bob).revoked_keys.empty());
}
