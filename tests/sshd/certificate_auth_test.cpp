// sshd's decisions on user certificates (certificate_auth.hpp,
// revoked_keys.hpp): the certificate's options, TrustedUserCAKeys with and
// without AuthorizedPrincipalsFile, cert-authority lines, RevokedKeys by
// serial, key ID, certified key and CA, with OpenSSH 9.2's log lines
// (checked against Debian's sshd -d). Fixtures: tests/data/certs, made by
// Debian's ssh-keygen (make_fixtures.sh).
#include "sshd/certificate_auth.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/krl.hpp"
#include "common/keys/private_key.hpp"
#include "common/wire.hpp"
#include "sshd/revoked_keys.hpp"
#include "tests/counting_random.hpp"
#include "tests/file_text.hpp"
#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace longhaul;
using longhaul::test::read_whole_file;
using longhaul::test::temp_dir;
using longhaul::test::write_file;

namespace {

const std::string certs = std::string(LONGHAUL_TEST_DATA) + "/certs/";

// A certificate or key from a .pub file of the fixtures.
bytes blob_of(const std::string& name)
{
    const std::string text = read_whole_file(certs + name);
    const auto sp1 = text.find(' ');
    const auto sp2 = text.find_first_of(" \n", sp1 + 1);
    auto b = base64_decode(text.substr(sp1 + 1, sp2 - sp1 - 1));
    REQUIRE(b);
    return *b;
}
certificate cert_of(const std::string& name)
{
    auto c = certificate::from_blob(blob_of(name));
    REQUIRE(c);
    return std::move(*c);
}
public_key key_of(const std::string& name)
{
    auto k = public_key::from_blob(blob_of(name));
    REQUIRE(k);
    return *k;
}
std::string cert_pub_line(const std::string& name) { return read_whole_file(certs + name); }

// user_ed25519-cert.pub: ID "alice@longhaul", serial 42, principals alice
// and bob, valid 2020-2040, force-command /bin/true, source-address
// 127.0.0.1/32,::1, the five permit-* extensions, CA ca_ed25519.
const certificate& alice_cert()
{
    static const certificate c = cert_of("user_ed25519-cert.pub");
    return c;
}
constexpr std::string_view ca_fp = "SHA256:bvaGjqhPq8hJczYEmhYlQ0/3XmEPpf6yiVcxddg2AJc";

authorized_keys_context cert_ctx(std::string user = "alice", std::string ip = "127.0.0.1")
{
    authorized_keys_context c;
    c.user = std::move(user);
    c.remote_address = ip;
    c.remote_host = ip;
    c.now = 1700000000; // 2023-11-14T22:13:20Z
    return c;
}

bool cert_logged(const std::vector<log_message>& log, syslog_level level, const std::string& text)
{
    return std::any_of(log.begin(), log.end(), [&](const log_message& m) { return m.level == level && m.text == text; });
}

std::string dump(const std::vector<log_message>& log)
{
    std::string s;
    for (const auto& m : log)
        s += std::to_string(static_cast<int>(m.level)) + " " + m.text + "\n";
    return s;
}

const private_key& test_ca()
{
    static const private_key k = *private_key::generate(key_type::ed25519);
    return k;
}

// A user certificate of the fixture's key, signed by test_ca().
certificate make_cert(std::vector<certificate_option> critical, std::vector<std::string> principals = {"alice"},
                      std::uint64_t serial = 5, std::string key_id = "made")
{
    certificate_fields f;
    f.kind = cert_kind::user;
    f.serial = serial;
    f.key_id = std::move(key_id);
    f.principals = std::move(principals);
    f.critical_options = std::move(critical);
    f.extensions = default_user_extensions();
    test::counting_random rng(3);
    auto c = certificate::sign(f, alice_cert().key(), test_ca(), rng);
    REQUIRE(c);
    return std::move(*c);
}

bytes string_data(std::string_view v)
{
    bytes out;
    wire_writer(out).string(v);
    return out;
}

} // namespace

TEST_CASE("certificate options: critical options and extensions as OpenSSH maps them")
{
    std::vector<log_message> log;
    auto o = certificate_options(alice_cert(), log);
    REQUIRE(o);
    CHECK(o->force_command == "/bin/true");
    CHECK(o->required_from_cert == "127.0.0.1/32,::1");
    CHECK(o->permit_pty);
    CHECK(o->permit_port_forwarding);
    CHECK(o->permit_agent_forwarding);
    CHECK(o->permit_x11_forwarding);
    CHECK(o->permit_user_rc);

    // ssh-keygen -O clear: a certificate that grants nothing.
    auto none = certificate_options(cert_of("user_rsa-cert.pub"), log);
    REQUIRE(none);
    CHECK_FALSE(none->permit_pty);
    CHECK_FALSE(none->permit_port_forwarding);
    CHECK_FALSE(none->permit_agent_forwarding);
    CHECK_FALSE(none->permit_x11_forwarding);
    CHECK_FALSE(none->permit_user_rc);
    CHECK_FALSE(none->force_command);
}

TEST_CASE("certificate options: an unknown or malformed critical option refuses the certificate")
{
    std::vector<log_message> log;
    // verify-required (a security key's user verification) is known, and
    // for the keys Longhaul accepts changes nothing, as in OpenSSH.
    CHECK(certificate_options(make_cert({{"verify-required", {}}}), log));
    log.clear();
    CHECK_FALSE(certificate_options(make_cert({{"frobnicate", string_data("x")}}), log));
    CHECK(cert_logged(log, syslog_level::error, "Certificate critical option \"frobnicate\" is not supported"));
    log.clear();
    CHECK_FALSE(certificate_options(make_cert({{"source-address", string_data("10.0.0.0/8,example.com")}}), log));
    CHECK(cert_logged(log, syslog_level::error, "Certificate source-address contents invalid"));
    log.clear();
    bytes extra = string_data("/bin/true");
    extra.push_back(0);
    CHECK_FALSE(certificate_options(make_cert({{"force-command", extra}}), log));
    CHECK(cert_logged(log, syslog_level::error, "Certificate option \"force-command\" corrupt (extra data)"));

    // A force-command or source-address given twice.
    log.clear();
    CHECK_FALSE(certificate_options(
        make_cert({{"force-command", string_data("/bin/true")}, {"force-command", string_data("/bin/false")}}), log));
    CHECK(cert_logged(log, syslog_level::error, "Certificate has multiple force-command options"));
    log.clear();
    CHECK_FALSE(certificate_options(
        make_cert({{"source-address", string_data("10.0.0.0/8")}, {"source-address", string_data("::1")}}), log));
    CHECK(cert_logged(log, syslog_level::error, "Certificate has multiple source-address options"));

    // And nothing accepts it: TrustedUserCAKeys refuses with OpenSSH's reason.
    auto r = check_trusted_user_ca(make_cert({{"frobnicate", string_data("x")}}), "/ca", false, std::nullopt, cert_ctx());
    CHECK_FALSE(r.match);
    CHECK(cert_logged(r.log, syslog_level::error, "Invalid certificate options"));
}

TEST_CASE("source-address: CIDR lists as addr_match_cidr_list reads them")
{
    CHECK(match_cidr_list("127.0.0.1", "127.0.0.1/32,::1") == 1);
    CHECK(match_cidr_list("::1", "127.0.0.1/32,::1") == 1);
    CHECK(match_cidr_list("10.1.2.3", "10.0.0.0/8") == 1);
    CHECK(match_cidr_list("192.0.2.7", "10.0.0.0/8,127.0.0.1") == 0);
    CHECK(match_cidr_list("10.1.2.3", "10.*") == -1); // no patterns
    CHECK(match_cidr_list("10.1.2.3", "!10.0.0.0/8") == -1);
    CHECK(match_cidr_list("", "10.0.0.1/8") == -1);
    CHECK(match_cidr_list("", "") == -1);
}

TEST_CASE("TrustedUserCAKeys: principals, validity, source-address and force-command")
{
    SUBCASE("the user is a principal: accepted with the certificate's options")
    {
        auto r = check_trusted_user_ca(alice_cert(), "/etc/ssh/user_ca", false, std::nullopt, cert_ctx());
        INFO(dump(r.log));
        REQUIRE(r.match);
        CHECK(r.match->options.force_command == "/bin/true");
        CHECK(r.match->options.permit_pty);
        CHECK(cert_logged(r.log, syslog_level::verbose,
                     "Accepted certificate ID \"alice@longhaul\" (serial 42) signed by ED25519 CA " + std::string(ca_fp) +
                         " via /etc/ssh/user_ca"));
    }
    SUBCASE("another user")
    {
        auto r = check_trusted_user_ca(alice_cert(), "/ca", false, std::nullopt, cert_ctx("carol"));
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate invalid: name is not a listed principal"));
    }
    SUBCASE("expired and not yet valid")
    {
        auto late = cert_ctx();
        late.now = 2240000000; // 2040-12-25
        auto r = check_trusted_user_ca(alice_cert(), "/ca", false, std::nullopt, late);
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate invalid: expired"));
        auto early = cert_ctx();
        early.now = 1500000000; // 2017
        r = check_trusted_user_ca(alice_cert(), "/ca", false, std::nullopt, early);
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate invalid: not yet valid"));
        r = check_trusted_user_ca(cert_of("user_expired-cert.pub"), "/ca", false, std::nullopt, cert_ctx());
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate invalid: expired"));
    }
    SUBCASE("a certificate without principals")
    {
        auto r = check_trusted_user_ca(cert_of("user_ecdsa256-cert.pub"), "/ca", false, std::nullopt, cert_ctx());
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate lacks principal list"));
    }
    SUBCASE("source-address not matching the client")
    {
        auto r = check_trusted_user_ca(alice_cert(), "/ca", false, std::nullopt, cert_ctx("alice", "192.0.2.7"));
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::info,
                     "cert: Authentication tried for alice with valid certificate but not from a permitted source "
                     "address (192.0.2.7)."));
        CHECK(cert_logged(r.log, syslog_level::error, "Refused by certificate options"));
    }
    SUBCASE("no extensions: no permissions")
    {
        auto r = check_trusted_user_ca(cert_of("user_rsa-cert.pub"), "/ca", false, std::nullopt, cert_ctx());
        REQUIRE(r.match);
        CHECK_FALSE(r.match->options.permit_pty);
        CHECK_FALSE(r.match->options.permit_port_forwarding);
        CHECK_FALSE(r.match->options.permit_agent_forwarding);
        CHECK_FALSE(r.match->options.permit_user_rc);
    }
}

TEST_CASE("AuthorizedPrincipalsFile: lines, options, and what they do to the certificate")
{
    std::vector<log_message> log;
    const std::string file = "# staff\n"
                             "\n"
                             "badoption carol\n"
                             "  from=\"10.0.0.0/8\",no-pty   bob   # bob only from inside\n"
                             "alice\n";
    auto p = check_authorized_principals(file, "/home/a/principals", alice_cert(), log);
    INFO(dump(log));
    REQUIRE(p);
    CHECK(p->location == "/home/a/principals:4");
    CHECK(p->options.required_from == "10.0.0.0/8");
    CHECK_FALSE(p->options.permit_pty);
    CHECK(cert_logged(log, syslog_level::debug1, "/home/a/principals:3: bad principals options: unknown key option"));
    CHECK_FALSE(check_authorized_principals("nobody\n# alice\n", "f", alice_cert(), log));

    SUBCASE("the principal line's from= applies")
    {
        auto r = check_trusted_user_ca(alice_cert(), "/ca", true, p, cert_ctx());
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::info,
                     "principals: Authentication tried for alice with correct key but not from a permitted host "
                     "(host=127.0.0.1, ip=127.0.0.1, required=10.0.0.0/8)."));
        CHECK(cert_logged(r.log, syslog_level::error, "Refused by certificate principals options"));
    }
    SUBCASE("options merge: no-pty on the line removes the certificate's permit-pty")
    {
        auto q = check_authorized_principals("no-pty carol\nno-pty bob\n", "f", alice_cert(), log);
        REQUIRE(q);
        // The principal, not the user's name, is what counts: carol logs in as bob.
        auto r = check_trusted_user_ca(alice_cert(), "/ca", true, q, cert_ctx("carol"));
        INFO(dump(r.log));
        REQUIRE(r.match);
        CHECK_FALSE(r.match->options.permit_pty);
        CHECK(r.match->options.permit_port_forwarding);
        CHECK(r.match->options.force_command == "/bin/true");
    }
    SUBCASE("a different forced command is refused")
    {
        auto q = check_authorized_principals("command=\"/bin/false\" alice\n", "f", alice_cert(), log);
        REQUIRE(q);
        auto r = check_trusted_user_ca(alice_cert(), "/ca", true, q, cert_ctx());
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "forced command options do not match"));
    }
    SUBCASE("cert-authority is invalid in a principals file")
    {
        auto q = check_authorized_principals("cert-authority alice\n", "f", alice_cert(), log);
        REQUIRE(q);
        auto r = check_trusted_user_ca(alice_cert(), "/ca", true, q, cert_ctx());
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::debug1, "principals: cert-authority flag invalid here"));
    }
    SUBCASE("no principal found")
    {
        auto r = check_trusted_user_ca(alice_cert(), "/ca", true, std::nullopt, cert_ctx());
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate does not contain an authorized principal"));
    }
}

TEST_CASE("TrustedUserCAKeys file: which CA keys are listed")
{
    const std::string file = "# user CAs\n" + cert_pub_line("ca_rsa.pub") + "\n" + cert_pub_line("ca_ed25519.pub");
    CHECK(ca_key_listed(file, alice_cert().signature_key()));
    CHECK_FALSE(ca_key_listed(cert_pub_line("ca_rsa.pub"), alice_cert().signature_key()));
    // A certified key is not its CA.
    CHECK_FALSE(ca_key_listed(cert_pub_line("user_ed25519.pub"), alice_cert().signature_key()));
}

TEST_CASE("authorized_keys: cert-authority lines")
{
    const std::string ca = cert_pub_line("ca_ed25519.pub");
    SUBCASE("the user is a principal")
    {
        auto r = check_authorized_keys("cert-authority " + ca, "/home/a/ak", alice_cert(), cert_ctx());
        INFO(dump(r.log));
        REQUIRE(r.match);
        CHECK(r.match->location == "/home/a/ak:1");
        CHECK(r.match->options.force_command == "/bin/true");
        CHECK(cert_logged(r.log, syslog_level::debug1, "/home/a/ak:1: matching CA found: ED25519 " + std::string(ca_fp)));
        CHECK(cert_logged(r.log, syslog_level::verbose,
                     "Accepted certificate ID \"alice@longhaul\" (serial 42) signed by CA ED25519 " + std::string(ca_fp) +
                         " found at /home/a/ak:1"));
    }
    SUBCASE("the CA's key without cert-authority, or another CA: no match")
    {
        CHECK_FALSE(check_authorized_keys(ca, "f", alice_cert(), cert_ctx()).match);
        CHECK_FALSE(check_authorized_keys("cert-authority " + cert_pub_line("ca_rsa.pub"), "f", alice_cert(), cert_ctx()).match);
        // Nor does the certified key's own line authorise its certificate.
        CHECK_FALSE(check_authorized_keys(cert_pub_line("user_ed25519.pub"), "f", alice_cert(), cert_ctx()).match);
    }
    SUBCASE("principals= replaces the user's name")
    {
        auto r = check_authorized_keys("cert-authority,principals=\"x,bob\" " + ca, "f", alice_cert(), cert_ctx("carol"));
        CHECK(r.match);
        r = check_authorized_keys("cert-authority,principals=\"carol\" " + ca, "f", alice_cert(), cert_ctx("carol"));
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate does not contain an authorized principal"));
        r = check_authorized_keys("cert-authority " + ca, "f", alice_cert(), cert_ctx("carol"));
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate invalid: name is not a listed principal"));
    }
    SUBCASE("without principals the certificate needs none here (as OpenSSH)")
    {
        auto r = check_authorized_keys("cert-authority " + cert_pub_line("ca_ecdsa384.pub"), "f",
                                       cert_of("user_ecdsa256-cert.pub"), cert_ctx());
        CHECK(r.match);
    }
    SUBCASE("command= and the certificate's force-command must agree")
    {
        auto r = check_authorized_keys("cert-authority,command=\"/bin/false\" " + ca, "f", alice_cert(), cert_ctx());
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "forced command options do not match"));
        r = check_authorized_keys("cert-authority,command=\"/bin/true\" " + ca, "f", alice_cert(), cert_ctx());
        CHECK(r.match);
    }
    SUBCASE("the line's restrictions and the certificate's both apply")
    {
        auto r = check_authorized_keys("cert-authority,no-pty " + ca, "f", alice_cert(), cert_ctx());
        REQUIRE(r.match);
        CHECK_FALSE(r.match->options.permit_pty);
        CHECK(r.match->options.permit_agent_forwarding);
        r = check_authorized_keys("cert-authority " + cert_pub_line("ca_rsa.pub"), "f", cert_of("user_rsa-cert.pub"), cert_ctx());
        REQUIRE(r.match);
        CHECK_FALSE(r.match->options.permit_agent_forwarding);
        r = check_authorized_keys("cert-authority,from=\"10.0.0.0/8\" " + ca, "f", alice_cert(), cert_ctx());
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "Refused by key options"));
    }
    SUBCASE("source-address and validity")
    {
        auto r = check_authorized_keys("cert-authority " + ca, "/ak", alice_cert(), cert_ctx("alice", "192.0.2.7"));
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::info,
                     "/ak:1: Authentication tried for alice with valid certificate but not from a permitted source "
                     "address (192.0.2.7)."));
        CHECK(cert_logged(r.log, syslog_level::error, "Refused by certificate options"));
        r = check_authorized_keys("cert-authority " + ca, "f", cert_of("user_expired-cert.pub"), cert_ctx());
        CHECK_FALSE(r.match);
        CHECK(cert_logged(r.log, syslog_level::error, "Certificate invalid: expired"));
    }
}

TEST_CASE("CA signature: CASignatureAlgorithms and the wrong CA")
{
    // Signed with ssh-rsa (SHA-1), which OpenSSH's default refuses.
    const certificate sha1 = cert_of("user_sha1-cert.pub");
    CHECK(sha1.signature_algorithm() == "ssh-rsa");
    CHECK_FALSE(sha1.verify_signature({"ssh-ed25519", "rsa-sha2-512", "rsa-sha2-256"}));
    CHECK(sha1.verify_signature({"ssh-rsa"}));
    CHECK(alice_cert().verify_signature({"ssh-ed25519"}));
    // A certificate whose signature does not verify is refused however named.
    bytes tampered = alice_cert().blob();
    tampered[tampered.size() - 5] ^= 1;
    auto t = certificate::from_blob(tampered);
    REQUIRE(t);
    CHECK_FALSE(t->verify_signature({"ssh-ed25519"}));
}

namespace {

// A KRL revoking, under `ca` (empty: any CA), serial `serial` and key ID `id`.
bytes make_krl(const bytes& ca, std::uint64_t serial, std::string_view id)
{
    bytes section;
    wire_writer w(section);
    w.string(ca).string(std::string_view{});
    if (serial != 0) {
        bytes serials;
        wire_writer(serials).u64(serial);
        w.u8(0x20).string(serials); // KRL_SECTION_CERT_SERIAL_LIST
    }
    if (!id.empty()) {
        bytes ids;
        wire_writer(ids).string(id);
        w.u8(0x23).string(ids); // KRL_SECTION_CERT_KEY_ID
    }
    bytes out(krl_magic.begin(), krl_magic.end());
    wire_writer k(out);
    k.u32(krl_format_version).u64(1).u64(1700000000).u64(0).string(std::string_view{}).string(std::string_view{});
    k.u8(1).string(section); // KRL_SECTION_CERTIFICATES
    return out;
}

} // namespace

TEST_CASE("RevokedKeys: a certificate revoked by serial, key ID, its key or its CA")
{
    temp_dir d;
    const std::string path = d.file("revoked");
    const certificate& c = alice_cert();
    const std::string cert_name = "ED25519-CERT SHA256:pk0gxgh4vYXYzzZMoQ1EDWtbEkDCJsmkfidvAlVEapg";
    auto check = [&](const bytes& file) {
        write_file(path, std::string(file.begin(), file.end()));
        return check_revoked_certificate(path, c, fingerprint_hash::sha256);
    };
    const bytes ca = c.signature_key().blob();
    auto r = check(make_krl(ca, 42, ""));
    CHECK(r.refused);
    CHECK(cert_logged(r.log, syslog_level::error, "Authentication key " + cert_name + " revoked by file " + path));
    CHECK(check(make_krl(ca, 0, "alice@longhaul")).refused);
    CHECK(check(make_krl({}, 42, "")).refused); // any CA
    CHECK_FALSE(check(make_krl(ca, 43, "alice")).refused);
    // The same serial under another CA is another certificate.
    CHECK_FALSE(check(make_krl(key_of("ca_rsa.pub").blob(), 42, "alice@longhaul")).refused);

    // Key lists: the certified key, or the CA's key.
    auto list = [&](const std::string& name) {
        write_file(path, cert_pub_line(name));
        return check_revoked_certificate(path, c, fingerprint_hash::sha256);
    };
    CHECK(list("user_ed25519.pub").refused);
    CHECK(list("ca_ed25519.pub").refused);
    CHECK_FALSE(list("ca_rsa.pub").refused);
    // The CA's own check, as sshd makes it after the certificate's.
    write_file(path, cert_pub_line("ca_ed25519.pub"));
    auto ca_check = check_revoked_key(path, c.signature_key(), fingerprint_hash::sha256);
    CHECK(ca_check.refused);
    CHECK(cert_logged(ca_check.log, syslog_level::error,
                 "Authentication key ED25519 " + std::string(ca_fp) + " revoked by file " + path));
    // A file that cannot be read refuses (fails closed).
    auto missing = check_revoked_certificate(d.file("none"), c, fingerprint_hash::sha256);
    CHECK(missing.refused);
    CHECK(cert_logged(missing.log, syslog_level::error,
                 "Error checking authentication key " + cert_name + " in revoked keys file " + d.file("none") +
                     ": No such file or directory"));
}

TEST_CASE("the monitor's own parse of a publickey blob, and PubkeyAcceptedAlgorithms by key type")
{
    auto p = parse_presented_key(alice_cert().blob());
    REQUIRE(p.cert);
    REQUIRE(p.key);
    CHECK(*p.key == alice_cert().key());
    auto plain = parse_presented_key(blob_of("user_ed25519.pub"));
    CHECK_FALSE(plain.cert);
    CHECK(plain.key);
    bytes broken = alice_cert().blob();
    broken.resize(broken.size() - 10);
    auto none = parse_presented_key(broken);
    CHECK_FALSE(none.cert);
    CHECK_FALSE(none.key); // a broken certificate is not read as a plain key

    const std::string plain_only = "ssh-ed25519,rsa-sha2-512";
    const std::string with_certs = "rsa-sha2-512-cert-v01@openssh.com,ssh-ed25519";
    CHECK(key_type_accepted(plain_only, key_type::ed25519, false));
    CHECK_FALSE(key_type_accepted(plain_only, key_type::ed25519, true));
    CHECK(key_type_accepted(with_certs, key_type::rsa, true));
    CHECK_FALSE(key_type_accepted(with_certs, key_type::ed25519, true));
    CHECK_FALSE(key_type_accepted(with_certs, key_type::rsa, false));
}
