#include "common/keys/certificate.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "common/keys/revocation.hpp"
#include "common/random.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace longhaul;

namespace {

// tests/data/certs: made by make_fixtures.sh there with OpenSSH 9.2's ssh-keygen.
std::string cert_fixture(const std::string& name)
{
    std::ifstream in(std::filesystem::path(LONGHAUL_TEST_DATA) / "certs" / name, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The blob of a "type base64 comment" line.
bytes line_blob(const std::string& line)
{
    const auto a = line.find(' ');
    const auto b = line.find(' ', a + 1);
    auto blob = base64_decode(line.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1));
    REQUIRE(blob.has_value());
    return *blob;
}

certificate load(const std::string& name)
{
    auto c = certificate::from_blob(line_blob(cert_fixture(name)));
    REQUIRE(c.has_value());
    return *c;
}

public_key load_key(const std::string& name)
{
    auto k = public_key::from_blob(line_blob(cert_fixture(name)));
    REQUIRE(k.has_value());
    return *k;
}

constexpr std::uint64_t y2030 = 1893456000; // 2030-01-01T00:00:00Z

} // namespace

TEST_CASE("certificate: OpenSSH's user certificate, every field")
{
    const auto c = load("user_ed25519-cert.pub");
    CHECK(c.type_name() == "ssh-ed25519-cert-v01@openssh.com");
    CHECK(c.kind() == cert_kind::user);
    CHECK(c.key_id() == "alice@longhaul");
    CHECK(c.serial() == 42);
    CHECK(c.principals() == std::vector<std::string>{"alice", "bob"});
    CHECK(c.fields().valid_after == 1577836800);  // 2020-01-01T00:00:00Z
    CHECK(c.fields().valid_before == 2208988800); // 2040-01-01T00:00:00Z
    CHECK(c.critical_option("force-command") == "/bin/true");
    CHECK(c.critical_option("source-address") == "127.0.0.1/32,::1");
    CHECK_FALSE(c.critical_option("no-such-option").has_value());
    CHECK(c.fields().extensions == default_user_extensions());
    CHECK(c.has_extension("permit-pty"));
    CHECK(c.signature_algorithm() == "ssh-ed25519");
    // The certified key and the CA, as ssh-keygen -L prints their fingerprints.
    CHECK(c.key() == load_key("user_ed25519.pub"));
    CHECK(c.signature_key() == load_key("ca_ed25519.pub"));
    CHECK(cert_fixture("user_ed25519-cert.L").find(c.key().fingerprint_sha256()) != std::string::npos);
    CHECK(cert_fixture("user_ed25519-cert.L").find(c.signature_key().fingerprint_sha256()) != std::string::npos);
    CHECK(c.verify_signature().has_value());
    CHECK(c.verify_signature({"ssh-ed25519"}).has_value());
    CHECK(c.verify_signature({"rsa-sha2-512"}).error() == errc::signature_invalid);
    CHECK_FALSE(unknown_critical_option(c).has_value());
}

TEST_CASE("certificate: RSA, ECDSA and host certificates")
{
    const auto rsa = load("user_rsa-cert.pub");
    CHECK(rsa.type_name() == "ssh-rsa-cert-v01@openssh.com");
    CHECK(rsa.signature_algorithm() == "rsa-sha2-256");
    CHECK(rsa.fields().extensions.empty());
    CHECK(rsa.fields().critical_options.empty());
    CHECK(rsa.fields().valid_after == 0);
    CHECK(rsa.fields().valid_before == UINT64_MAX);
    CHECK(rsa.verify_signature().has_value());

    const auto ecdsa = load("user_ecdsa256-cert.pub");
    CHECK(ecdsa.type_name() == "ecdsa-sha2-nistp256-cert-v01@openssh.com");
    CHECK(ecdsa.signature_algorithm() == "ecdsa-sha2-nistp384");
    CHECK(ecdsa.principals().empty());
    CHECK(ecdsa.verify_signature().has_value());

    const auto host = load("host_ed25519-cert.pub");
    CHECK(host.kind() == cert_kind::host);
    CHECK(host.fields().extensions.empty());
    CHECK(host.principals() == std::vector<std::string>{"host.example", "127.0.0.1"});
    CHECK(host.verify_signature().has_value());
}

TEST_CASE("certificate: a CA signature by SHA-1 RSA only when allowed")
{
    const auto c = load("user_sha1-cert.pub");
    CHECK(c.signature_algorithm() == "ssh-rsa");
    CHECK(c.verify_signature().error() == errc::signature_invalid);
    CHECK(c.verify_signature({"ssh-rsa"}).has_value());
}

TEST_CASE("certificate: a changed byte breaks the CA's signature")
{
    bytes blob = line_blob(cert_fixture("user_ed25519-cert.pub"));
    const auto c = certificate::from_blob(blob);
    REQUIRE(c.has_value());
    // The key ID's first byte ("alice@longhaul" -> "blice@longhaul").
    const std::string id = "alice@longhaul";
    const auto at = std::search(blob.begin(), blob.end(), id.begin(), id.end());
    REQUIRE(at != blob.end());
    *at = 'b';
    const auto forged = certificate::from_blob(blob);
    REQUIRE(forged.has_value());
    CHECK(forged->key_id() == "blice@longhaul");
    CHECK(forged->verify_signature().error() == errc::signature_invalid);
}

TEST_CASE("certificate: check_authority gives OpenSSH's reasons")
{
    const auto user = load("user_ed25519-cert.pub");
    CHECK_FALSE(check_authority(user, false, true, y2030, "alice").has_value());
    CHECK_FALSE(check_authority(user, false, true, y2030, "bob").has_value());
    CHECK(check_authority(user, false, true, y2030, "carol") == "Certificate invalid: name is not a listed principal");
    CHECK(check_authority(user, true, false, y2030, "alice") == "Certificate invalid: not a host certificate");
    CHECK(check_authority(user, false, true, 1577836799, "alice") == "Certificate invalid: not yet valid");
    CHECK_FALSE(check_authority(user, false, true, 1577836800, "alice").has_value());
    CHECK(check_authority(user, false, true, 2208988800, "alice") == "Certificate invalid: expired");
    CHECK(check_authority(load("user_expired-cert.pub"), false, true, y2030, "alice") ==
          "Certificate invalid: expired");

    const auto any = load("user_ecdsa256-cert.pub");
    CHECK(check_authority(any, false, true, y2030, "alice") == "Certificate lacks principal list");
    CHECK_FALSE(check_authority(any, false, false, y2030, "alice").has_value());

    const auto host = load("host_ed25519-cert.pub");
    CHECK_FALSE(check_authority(host, true, false, y2030, "host.example").has_value());
    CHECK(check_authority(host, false, false, y2030, "host.example") == "Certificate invalid: not a user certificate");
    CHECK(check_authority(host, true, false, y2030, "other.example") ==
          "Certificate invalid: name is not a listed principal");
}

TEST_CASE("certificate: signing, and what OpenSSH parses back")
{
    system_random rng;
    auto ca = private_key::generate(key_type::ed25519);
    auto user = private_key::generate(key_type::ecdsa_p256);
    REQUIRE(ca.has_value());
    REQUIRE(user.has_value());
    certificate_fields f;
    f.serial = 7;
    f.key_id = "signed here";
    f.principals = {"alice"};
    f.valid_after = 100;
    f.valid_before = 200;
    f.critical_options = {{"source-address", {}}, {"force-command", {}}};
    wire_writer(f.critical_options[0].data).string("10.0.0.0/8");
    wire_writer(f.critical_options[1].data).string("uptime");
    f.extensions = default_user_extensions();
    auto c = certificate::sign(f, user->public_part(), *ca, rng);
    REQUIRE(c.has_value());
    CHECK(c->fields().nonce.size() == 32);
    CHECK(c->key() == user->public_part());
    CHECK(c->signature_key() == ca->public_part());
    CHECK(c->key_id() == "signed here");
    // Written sorted, as OpenSSH requires.
    REQUIRE(c->fields().critical_options.size() == 2);
    CHECK(c->fields().critical_options[0].name == "force-command");
    CHECK(c->critical_option("source-address") == "10.0.0.0/8");
    CHECK(c->verify_signature().has_value());
    // Parsing the blob gives the same certificate.
    auto again = certificate::from_blob(c->blob());
    REQUIRE(again.has_value());
    CHECK(again->blob() == c->blob());

    // An RSA CA signs with rsa-sha2-512 unless told otherwise.
    auto rsa_ca = private_key::generate(key_type::rsa, 2048);
    REQUIRE(rsa_ca.has_value());
    auto r = certificate::sign(f, user->public_part(), *rsa_ca, rng);
    REQUIRE(r.has_value());
    CHECK(r->signature_algorithm() == "rsa-sha2-512");
    auto r256 = certificate::sign(f, user->public_part(), *rsa_ca, rng, "rsa-sha2-256");
    REQUIRE(r256.has_value());
    CHECK(r256->signature_algorithm() == "rsa-sha2-256");
    CHECK(certificate::sign(f, user->public_part(), *ca, rng, "rsa-sha2-256").error() == errc::key_type_mismatch);

    // A repeated extension is kept, next to the first (ssh-keygen -s -O
    // extension:permit-pty with the default set).
    f.extensions.push_back({"permit-pty", {}});
    auto twice = certificate::sign(f, user->public_part(), *ca, rng);
    REQUIRE(twice.has_value());
    REQUIRE(twice->fields().extensions.size() == 6);
    CHECK(twice->fields().extensions[3].name == "permit-pty");
    CHECK(twice->fields().extensions[4].name == "permit-pty");
}

// ssh-keygen -U: the CA's private half elsewhere. What comes back is
// checked: another key's signature, or another algorithm than asked, is
// refused rather than written into a certificate.
TEST_CASE("certificate: signing through a signer held elsewhere")
{
    system_random rng;
    auto ca = private_key::generate(key_type::rsa, 2048);
    auto other = private_key::generate(key_type::rsa, 2048);
    auto user = private_key::generate(key_type::ed25519);
    REQUIRE(ca.has_value());
    REQUIRE(other.has_value());
    REQUIRE(user.has_value());
    certificate_fields f;
    f.key_id = "via a signer";
    std::string asked;
    const certificate::signer by_ca = [&](std::string_view alg, byte_span data) {
        asked = std::string(alg);
        return ca->sign(alg, data);
    };
    auto c = certificate::sign(f, user->public_part(), ca->public_part(), by_ca, rng, "rsa-sha2-256");
    REQUIRE(c.has_value());
    CHECK(asked == "rsa-sha2-256");
    CHECK(c->signature_algorithm() == "rsa-sha2-256");
    CHECK(c->signature_key() == ca->public_part());
    CHECK(c->verify_signature().has_value());
    c = certificate::sign(f, user->public_part(), ca->public_part(), by_ca, rng);
    REQUIRE(c.has_value());
    CHECK(asked == "rsa-sha2-512");

    const certificate::signer wrong_key = [&](std::string_view alg, byte_span data) { return other->sign(alg, data); };
    CHECK(certificate::sign(f, user->public_part(), ca->public_part(), wrong_key, rng).error() ==
          errc::signature_invalid);
    const certificate::signer wrong_alg = [&](std::string_view, byte_span data) { return ca->sign("rsa-sha2-256", data); };
    CHECK(certificate::sign(f, user->public_part(), ca->public_part(), wrong_alg, rng, "rsa-sha2-512").error() ==
          errc::signature_invalid);
    const certificate::signer refuses = [](std::string_view, byte_span) -> result<bytes> { return errc::unsupported; };
    CHECK(certificate::sign(f, user->public_part(), ca->public_part(), refuses, rng).error() == errc::unsupported);
}

TEST_CASE("certificate: malformed blobs are refused, never read past")
{
    const bytes good = line_blob(cert_fixture("user_ed25519-cert.pub"));
    // Every truncation.
    for (std::size_t n = 0; n < good.size(); ++n)
        CHECK_FALSE(certificate::from_blob(byte_span(good).first(n)).has_value());
    // Trailing bytes.
    bytes longer = good;
    longer.push_back(0);
    CHECK(certificate::from_blob(longer).error() == errc::invalid_format);
    // A plain key is not a certificate.
    CHECK(certificate::from_blob(load_key("user_ed25519.pub").blob()).error() == errc::unsupported);
    // Too large.
    CHECK_FALSE(certificate::from_blob(bytes(max_certificate_blob + 1, 0)).has_value());
}

namespace {

// A certificate blob with chosen fields, signed by `ca` (no checks on what
// the fields say: for the parser's negative tests).
bytes raw_cert(const private_key& ca, const public_key& key, std::uint32_t kind, const bytes& principals,
               const bytes& critical, const bytes& ca_blob)
{
    bytes blob;
    wire_writer w(blob);
    wire_reader kr(key.blob());
    (void)kr.text();
    w.string(certificate_type_name(key.type())).string(bytes(32, 1)).raw(kr.rest());
    w.u64(1).u32(kind).string("id").string(principals).u64(0).u64(UINT64_MAX);
    w.string(critical).string(bytes{}).string(bytes{}).string(ca_blob);
    auto sig = ca.sign("ssh-ed25519", blob);
    REQUIRE(sig.has_value());
    w.string(*sig);
    return blob;
}

} // namespace

TEST_CASE("certificate: fields that no CA may write")
{
    auto ca = private_key::generate(key_type::ed25519);
    auto user = private_key::generate(key_type::ed25519);
    REQUIRE(ca.has_value());
    REQUIRE(user.has_value());
    const bytes ca_blob = ca->public_part().blob();
    const auto& key = user->public_part();
    bytes one_principal;
    wire_writer(one_principal).string("alice");
    // Well formed: parses and verifies (the baseline of the cases below).
    auto ok = certificate::from_blob(raw_cert(*ca, key, 1, one_principal, {}, ca_blob));
    REQUIRE(ok.has_value());
    CHECK(ok->verify_signature().has_value());

    // A type other than user (1) or host (2).
    CHECK(certificate::from_blob(raw_cert(*ca, key, 3, one_principal, {}, ca_blob)).error() == errc::invalid_format);
    CHECK(certificate::from_blob(raw_cert(*ca, key, 0, one_principal, {}, ca_blob)).error() == errc::invalid_format);

    // More principals than OpenSSH allows.
    bytes many;
    wire_writer mw(many);
    for (std::size_t i = 0; i <= max_certificate_principals; ++i)
        mw.string("p");
    CHECK(certificate::from_blob(raw_cert(*ca, key, 1, many, {}, ca_blob)).error() == errc::invalid_format);
    // A principal list with a torn string.
    CHECK(certificate::from_blob(raw_cert(*ca, key, 1, bytes{0, 0, 0, 9, 'a'}, {}, ca_blob)).error() ==
          errc::invalid_format);

    // Options out of order or repeated are read as they come (OpenSSH's
    // sshd accepts them: a repeated force-command is the reader's to refuse).
    bytes repeated;
    wire_writer(repeated).string("source-address").string(bytes{}).string("force-command").string(bytes{});
    wire_writer(repeated).string("force-command").string(bytes{});
    auto rep = certificate::from_blob(raw_cert(*ca, key, 1, one_principal, repeated, ca_blob));
    REQUIRE(rep.has_value());
    CHECK(rep->fields().critical_options.size() == 3);
    CHECK(rep->fields().critical_options[0].name == "source-address");
    // An option torn in half.
    bytes torn;
    wire_writer(torn).string("force-command").u32(5);
    CHECK(certificate::from_blob(raw_cert(*ca, key, 1, one_principal, torn, ca_blob)).error() ==
          errc::invalid_format);

    // An unknown critical option parses; a server must refuse it.
    bytes unknown;
    wire_writer(unknown).string("verify-everything").string(bytes{});
    auto u = certificate::from_blob(raw_cert(*ca, key, 1, one_principal, unknown, ca_blob));
    REQUIRE(u.has_value());
    CHECK(unknown_critical_option(*u) == "verify-everything");

    // A certificate as the CA key.
    const bytes cert_as_ca = ok->blob();
    CHECK(certificate::from_blob(raw_cert(*ca, key, 1, one_principal, {}, cert_as_ca)).error() ==
          errc::invalid_format);
    // A CA blob that is not a key at all.
    CHECK(certificate::from_blob(raw_cert(*ca, key, 1, one_principal, {}, bytes{1, 2, 3})).error() ==
          errc::invalid_format);
}

TEST_CASE("certificate: algorithm names")
{
    CHECK(certificate_key_type("ssh-rsa-cert-v01@openssh.com") == key_type::rsa);
    CHECK_FALSE(certificate_key_type("rsa-sha2-512-cert-v01@openssh.com").has_value());
    CHECK_FALSE(certificate_key_type("ssh-ed25519").has_value());
    CHECK(certificate_signature_algorithm("rsa-sha2-512-cert-v01@openssh.com") == "rsa-sha2-512");
    CHECK(certificate_signature_algorithm("ecdsa-sha2-nistp521-cert-v01@openssh.com") == "ecdsa-sha2-nistp521");
    CHECK_FALSE(certificate_signature_algorithm("ssh-ed25519").has_value());
    CHECK(certificate_algorithm_for("rsa-sha2-256") == "rsa-sha2-256-cert-v01@openssh.com");
    CHECK(certificate_algorithm_for("ssh-ed25519") == "ssh-ed25519-cert-v01@openssh.com");
    CHECK(is_certificate_algorithm("ssh-ed25519-cert-v01@openssh.com"));
    CHECK_FALSE(is_certificate_algorithm("ssh-ed25519"));
    CHECK(certificate_type_name(key_type::ecdsa_p384) == "ecdsa-sha2-nistp384-cert-v01@openssh.com");
}

TEST_CASE("certificate: validity times as ssh-keygen -L prints them")
{
    CHECK(certificate_time(0, true) == "always");
    CHECK(certificate_time(UINT64_MAX, false) == "forever");
    setenv("TZ", "UTC", 1);
    tzset();
    CHECK(certificate_time(1577836800, true) == "2020-01-01T00:00:00");
    CHECK(certificate_time(2208988800, false) == "2040-01-01T00:00:00");
}

TEST_CASE("certificate: revocation by KRL serial and key ID, and by key list")
{
    auto list_of = [](const std::string& name) {
        const std::string text = cert_fixture(name);
        auto l = parse_revocation_list(as_bytes(text));
        REQUIRE(l.has_value());
        return *l;
    };
    const auto alice = load("user_ed25519-cert.pub"); // serial 42, ca_ed25519
    const auto rsa = load("user_rsa-cert.pub");       // key ID "rsa user", ca_rsa
    const auto serial42 = list_of("krl_serial42");
    CHECK(serial42.revoked(alice));
    CHECK_FALSE(serial42.revoked(rsa));
    // Serial 42 of another CA is another certificate.
    CHECK_FALSE(serial42.revoked(load("host_ed25519-cert.pub")));
    const auto rsa_id = list_of("krl_id_rsa_user");
    CHECK(rsa_id.revoked(rsa));
    CHECK_FALSE(rsa_id.revoked(alice));
    // A key list: the certified key, or the CA's key (check_ca).
    const auto ca_listed = list_of("ca_rsa.pub");
    CHECK(ca_listed.revoked(rsa));
    CHECK(ca_listed.revoked(load("user_sha1-cert.pub")));
    CHECK_FALSE(ca_listed.revoked(alice));
    CHECK(list_of("user_ed25519.pub").revoked(alice));
    CHECK(list_of("user_ed25519.pub").revoked(load("user_expired-cert.pub")));
}

TEST_CASE("certificate: -cert.pub lines")
{
    std::string comment;
    const std::string line = cert_fixture("user_ed25519-cert.pub");
    auto c = parse_certificate_line(line, &comment);
    REQUIRE(c.has_value());
    CHECK(c->key_id() == "alice@longhaul");
    CHECK(comment == "user ed25519");
    const std::string fields = line.substr(0, line.find(' ', line.find(' ') + 1));
    CHECK(parse_certificate_line("  " + fields + "\r\n", &comment).has_value());
    CHECK(comment.empty());
    // A plain key, a type that is not the blob's, torn base64, a blob over
    // the ceiling (refused before it is decoded).
    CHECK(parse_certificate_line(cert_fixture("user_ed25519.pub")).error() == errc::unsupported);
    CHECK(parse_certificate_line("ssh-rsa-cert-v01@openssh.com" + line.substr(line.find(' '))).error() ==
          errc::invalid_format);
    CHECK(parse_certificate_line("ssh-ed25519-cert-v01@openssh.com AAAA!").error() == errc::invalid_format);
    CHECK(parse_certificate_line("ssh-ed25519-cert-v01@openssh.com " + std::string(4 * max_certificate_blob, 'A'))
              .error() == errc::invalid_format);
    CHECK(parse_certificate_line("ssh-ed25519-cert-v01@openssh.com").error() == errc::invalid_format);
}
