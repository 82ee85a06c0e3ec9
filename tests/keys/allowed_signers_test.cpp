// allowed_signers files as OpenSSH 9.2's sshsig.c reads them: principals
// patterns, options, certificate authorities, validity, and the messages
// of malformed lines (reported and skipped, as by OpenSSH).
// The certificate fixture is Debian's (tests/data/certs).
#include "common/keys/allowed_signers.hpp"

#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "tests/keys/key_fixtures.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

// user_ed25519-cert.pub: ID "alice@longhaul", serial 42, principals alice
// and bob, valid 2020-2040, CA ca_ed25519.
certificate signers_alice_cert()
{
    auto c = parse_certificate_line(
        test::read_text(std::filesystem::path(LONGHAUL_TEST_DATA) / "certs" / "user_ed25519-cert.pub"));
    REQUIRE(c.has_value());
    return *c;
}

const public_key& signers_key()
{
    static const public_key k = private_key::generate(key_type::ed25519)->public_part();
    return k;
}

constexpr std::uint64_t signers_2030 = 1893456000; // 2030-01-01T00:00:00Z

allowed_signers_query query_for(const signature_signer& signer, std::optional<std::string> principal,
                                std::optional<std::string> ns = "git")
{
    allowed_signers_query q;
    q.path = "allowed";
    q.signer = signer;
    q.principal = std::move(principal);
    q.ns = std::move(ns);
    q.verify_time = signers_2030;
    return q;
}

bool has_error(const allowed_signers_result& r, const std::string& text)
{
    for (const auto& m : r.log)
        if (m.level == log_level::error && m.text == text)
            return true;
    return false;
}

} // namespace

TEST_CASE("allowed_signers: a key line, principal patterns")
{
    const signature_signer me{signers_key(), std::nullopt};
    const std::string key = format_public_key(signers_key());
    const std::string file = "# comment\n"
                             "\n"
                             "other@example.com " + format_public_key(private_key::generate(key_type::ed25519)->public_part()) + "\n"
                             "*@example.com,!mallory@example.com " + key + " comment\n";
    auto r = check_allowed_signers(file, query_for(me, "alice@example.com"));
    CHECK(r.found);
    CHECK_FALSE(check_allowed_signers(file, query_for(me, "mallory@example.com")).found);
    CHECK_FALSE(check_allowed_signers(file, query_for(me, "alice@example.org")).found);
    // find-principals: the line's principals field as written.
    r = check_allowed_signers(file, query_for(me, std::nullopt, std::nullopt));
    CHECK(r.found);
    CHECK(r.principals == "*@example.com,!mallory@example.com");
    // Quoted principals.
    CHECK(check_allowed_signers("\"a b\" " + key + "\n", query_for(me, "a b")).found);
}

TEST_CASE("allowed_signers: namespaces and validity")
{
    const signature_signer me{signers_key(), std::nullopt};
    const std::string key = format_public_key(signers_key());
    auto r = check_allowed_signers("alice namespaces=\"file,mail\" " + key + "\n", query_for(me, "alice"));
    CHECK_FALSE(r.found);
    CHECK(has_error(r, "allowed:1: key is not permitted for use in signature namespace \"git\""));
    CHECK(check_allowed_signers("alice namespaces=\"file,g*\" " + key + "\n", query_for(me, "alice")).found);
    // find-principals knows no namespace.
    CHECK(check_allowed_signers("alice namespaces=\"file\" " + key + "\n", query_for(me, std::nullopt, std::nullopt)).found);

    CHECK(check_allowed_signers("alice valid-after=\"20290101\",valid-before=\"20310101Z\" " + key + "\n",
                                query_for(me, "alice"))
              .found);
    r = check_allowed_signers("alice valid-after=\"20350101Z\" " + key + "\n", query_for(me, "alice"));
    CHECK_FALSE(r.found);
    REQUIRE(r.log.size() >= 2);
    CHECK(r.log.back().text.starts_with("allowed:1: key is not yet valid: verify time "));
    r = check_allowed_signers("alice valid-before=\"20250101Z\" " + key + "\n", query_for(me, "alice"));
    CHECK_FALSE(r.found);
    CHECK(r.log.back().text.starts_with("allowed:1: key has expired: verify time "));
    // A later line may still allow the key.
    CHECK(check_allowed_signers("alice valid-before=\"20250101Z\" " + key + "\nalice " + key + "\n",
                                query_for(me, "alice"))
              .found);
}

TEST_CASE("allowed_signers: certificate authorities")
{
    const certificate cert = signers_alice_cert();
    const signature_signer signer{cert.key(), cert};
    const std::string ca = format_public_key(cert.signature_key());
    // The certified key itself on a plain line does not match a
    // certificate's signature (OpenSSH's sshkey_equal), the CA's does only
    // with cert-authority.
    CHECK_FALSE(check_allowed_signers("alice " + format_public_key(cert.key()) + "\n", query_for(signer, "alice")).found);
    CHECK_FALSE(check_allowed_signers("alice " + ca + "\n", query_for(signer, "alice")).found);
    CHECK(check_allowed_signers("alice cert-authority " + ca + "\n", query_for(signer, "alice")).found);
    CHECK(check_allowed_signers("*@x,bob cert-authority " + ca + "\n", query_for(signer, "bob")).found);
    // The line's pattern allows carol, the certificate does not name her.
    auto r = check_allowed_signers("* cert-authority " + ca + "\n", query_for(signer, "carol"));
    CHECK_FALSE(r.found);
    CHECK(has_error(r, "allowed:1: certificate not authorized: Certificate invalid: name is not a listed principal"));
    // Expired by 2045.
    auto late = query_for(signer, "alice");
    late.verify_time = 2366841600; // 2045-01-01
    r = check_allowed_signers("alice cert-authority " + ca + "\n", late);
    CHECK_FALSE(r.found);
    CHECK(has_error(r, "allowed:1: certificate not authorized: Certificate invalid: expired"));

    // find-principals: the certificate's principals the patterns match.
    r = check_allowed_signers("b*,alice cert-authority " + ca + "\n", query_for(signer, std::nullopt, std::nullopt));
    CHECK(r.found);
    CHECK(r.principals == "bob,alice");
    r = check_allowed_signers("carol cert-authority " + ca + "\n", query_for(signer, std::nullopt, std::nullopt));
    CHECK_FALSE(r.found);
    CHECK(has_error(r, "allowed:1: no valid principals found"));
}

TEST_CASE("allowed_signers: malformed lines, with OpenSSH's messages")
{
    const signature_signer me{signers_key(), std::nullopt};
    const std::string key = format_public_key(signers_key());
    const std::string good = "alice " + key + "\n";
    const auto find = query_for(me, std::nullopt, std::nullopt);
    struct bad_line {
        std::string line;
        std::string message;
    };
    // Each checked against Debian's ssh-keygen -Y find-principals.
    const bad_line cases[] = {
        {"alice", "allowed:1: invalid line"},
        {"alice\n", "allowed:1: missing key"},
        {"alice \n", "allowed:1: missing key"},
        {"\"alice " + key + "\n", "allowed:1: invalid line"},
        {"alice cert-authority", "allowed:1: missing key"},
        {"alice cert-authority\n", "allowed:1: missing key"},
        {"alice cert-authority \n", "allowed:1: invalid key"},
        {"alice ssh-ed25519 AAAA!!!!\n", "allowed:1: invalid key"},
        {"alice namespaces=\"a\n", "allowed:1: invalid options"},
        {"alice frobnicate " + key + "\n", "allowed:1: bad options: unknown key option"},
        {"alice cert-authority=\"x\" " + key + "\n", "allowed:1: bad options: unknown key option"},
        {"alice namespaces " + key + "\n", "allowed:1: bad options: unknown key option"},
        {"alice namespaces=\"a\",namespaces=\"b\" " + key + "\n", "allowed:1: bad options: multiple \"namespaces\" clauses"},
        {"alice valid-after=\"2020\" " + key + "\n", "allowed:1: bad options: invalid \"valid-after\" time"},
        {"alice valid-after=\"20300101\",valid-before=\"20200101\" " + key + "\n",
         "allowed:1: bad options: \"valid-before\" time is before \"valid-after\""},
    };
    for (const auto& c : cases) {
        CAPTURE(c.line);
        auto r = check_allowed_signers(c.line, find);
        CHECK_FALSE(r.found);
        CHECK(has_error(r, c.message));
        // Reported and skipped: a good line after it still counts.
        if (c.line.ends_with("\n"))
            CHECK(check_allowed_signers(c.line + good, find).found);
    }
    // With a principal, a line for someone else is not even parsed.
    CHECK(check_allowed_signers("bob frobnicate " + key + "\n" + good, query_for(me, "alice")).found);
}

TEST_CASE("allowed_signers: match-principals")
{
    const std::string key = format_public_key(signers_key());
    auto r = match_allowed_principals("*@example.com " + key + "\nbob " + key + "\nalice@example.com,x " + key + "\n",
                                      "allowed", "alice@example.com");
    CHECK_FALSE(r.error);
    REQUIRE(r.principals.size() == 2);
    CHECK(r.principals[0] == "*@example.com");
    CHECK(r.principals[1] == "alice@example.com,x");
    r = match_allowed_principals("alice frobnicate " + key + "\nalice " + key + "\n", "allowed", "alice");
    CHECK(r.error);
    CHECK(r.principals.empty());
    CHECK(match_allowed_principals("bob " + key + "\n", "allowed", "alice").principals.empty());
}
