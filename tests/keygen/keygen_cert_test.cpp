// ssh-keygen's certificate command line (-V -z -n -O -t), listing (-L's
// text, against OpenSSH 9.2's in tests/data/certs/*.L) and signing (-s),
// with OpenSSH's messages for bad input.
#include "ssh/keygen/keygen_cert.hpp"

#include "ssh/keygen/keygen_cert_spec.hpp"
#include "tests/file_text.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

using namespace longhaul;
using namespace longhaul::keygen;

namespace {

const std::string certs_dir = std::string(LONGHAUL_TEST_DATA) + "/certs/";

// Listing and absolute times are local time: the fixtures were made in UTC.
void use_utc()
{
    ::setenv("TZ", "UTC", 1);
    ::tzset();
}

certificate cert_from_file(const std::string& path)
{
    const std::string text = test::read_whole_file(path);
    auto c = read_certificate(text);
    REQUIRE(c.has_value());
    return std::move(*c);
}

// A scratch directory holding copies of fixtures (private keys 0600, as key
// loading wants them), removed at the end of the test.
class scratch {
public:
    scratch()
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / "longhaul-keygen-cert.XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        dir_ = tmpl;
    }
    ~scratch() { std::filesystem::remove_all(dir_); }
    std::string copy(const std::string& fixture, const std::string& as = {})
    {
        const std::string to = dir_ + "/" + (as.empty() ? fixture : as);
        std::filesystem::copy_file(certs_dir + fixture, to, std::filesystem::copy_options::overwrite_existing);
        ::chmod(to.c_str(), 0600);
        return to;
    }
    std::string path(const std::string& name) const { return dir_ + "/" + name; }

private:
    std::string dir_;
};

keygen_options quiet_options()
{
    keygen_options o;
    o.quiet = true;
    return o;
}

} // namespace

TEST_CASE("convtime reads OpenSSH's time intervals")
{
    CHECK(convtime("90") == 90);
    CHECK(convtime("1h30m") == 5400);
    CHECK(convtime("2w") == 1209600);
    CHECK(convtime("1D") == 86400);
    CHECK(convtime("52w") == 52 * 604800);
    CHECK(convtime("") == -1);
    CHECK(convtime("1x") == -1);
    CHECK(convtime("h") == -1);
    CHECK(convtime("99999w") == -1); // over INT_MAX seconds
    CHECK(convtime("2147483647") == 2147483647);
    CHECK(convtime("2147483648") == -1);
}

TEST_CASE("absolute certificate times: local unless Z or UTC")
{
    use_utc();
    CHECK(parse_absolute_time("20200101") == 1577836800u);
    CHECK(parse_absolute_time("20200101Z") == 1577836800u);
    CHECK(parse_absolute_time("20200101000000UTC") == 1577836800u);
    CHECK(parse_absolute_time("202001011230") == 1577881800u);
    CHECK(parse_absolute_time("20200101123456z") == 1577882096u);
    CHECK_FALSE(parse_absolute_time("2020010").has_value());
    CHECK_FALSE(parse_absolute_time("202001011").has_value());
    CHECK_FALSE(parse_absolute_time("20201301").has_value());
    CHECK_FALSE(parse_absolute_time("2020x101").has_value());
    CHECK_FALSE(parse_absolute_time("Z").has_value());

    // Local time: UTC+2 all year, so the same text is two hours earlier.
    ::setenv("TZ", "TEST-2", 1);
    ::tzset();
    CHECK(parse_absolute_time("20200101") == 1577836800u - 7200);
    CHECK(parse_absolute_time("20200101Z") == 1577836800u);
    use_utc();
}

TEST_CASE("-V validity intervals")
{
    use_utc();
    const std::time_t now = 1700000000;
    auto v = parse_cert_validity("+52w", now);
    CHECK(v.from == static_cast<std::uint64_t>(((now - 59) / 60) * 60));
    CHECK(v.to == static_cast<std::uint64_t>(now + 52 * 604800));

    v = parse_cert_validity("-1d:+1h", now);
    CHECK(v.from == static_cast<std::uint64_t>(now - 86400));
    CHECK(v.to == static_cast<std::uint64_t>(now + 3600));

    v = parse_cert_validity("always:forever", now);
    CHECK(v.from == 0);
    CHECK(v.to == UINT64_MAX);

    v = parse_cert_validity("20200101:20400101000000", now);
    CHECK(v.from == 1577836800u);
    CHECK(v.to == 2208988800u);
    v = parse_cert_validity("20200101Z:forever", now);
    CHECK(v.from == 1577836800u);
    CHECK(v.to == UINT64_MAX);
    v = parse_cert_validity("0x10:0x20", now);
    CHECK(v.from == 16);
    CHECK(v.to == 32);
    v = parse_cert_validity("always:+1d", now);
    CHECK(v.from == 0);

    CHECK_THROWS_WITH_AS(parse_cert_validity("20200101", now), "Invalid certificate life specification 20200101",
                         keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("-1d", now), "Invalid certificate life specification -1d", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity(":", now), "Invalid certificate life specification :", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("always:", now), "Invalid certificate life specification always:",
                         keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("+1x", now), "Invalid relative certificate life +1x", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("bad:forever", now), "Invalid from time \"bad\"", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("always:bad", now), "Invalid to time \"bad\"", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("forever:always", now), "Invalid from time \"forever\"", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("20300101:20200101", now), "Empty certificate validity interval",
                         keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("-2x:forever", now), "Invalid relative certificate time -2x",
                         keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("-1000w:forever", 1000), "Certificate time -1000w cannot be represented",
                         keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_validity("0x:forever", now), "Invalid certificate time: not a number",
                         keygen_exit);
    CHECK_THROWS_AS(parse_cert_validity(std::string(1000, '+'), now), keygen_exit);
}

TEST_CASE("validity as ssh-keygen prints it")
{
    use_utc();
    CHECK(format_cert_validity(0, UINT64_MAX) == "forever");
    CHECK(format_cert_validity(1577836800, UINT64_MAX) == "after 2020-01-01T00:00:00");
    CHECK(format_cert_validity(0, 1577836800) == "before 2020-01-01T00:00:00");
    CHECK(format_cert_validity(1577836800, 2208988800) == "from 2020-01-01T00:00:00 to 2040-01-01T00:00:00");
}

TEST_CASE("-z serials")
{
    auto s = parse_cert_serial("42");
    CHECK(s.first == 42);
    CHECK_FALSE(s.auto_increment);
    s = parse_cert_serial("+5");
    CHECK(s.first == 5);
    CHECK(s.auto_increment);
    CHECK(parse_cert_serial("18446744073709551615").first == UINT64_MAX);
    CHECK_THROWS_WITH_AS(parse_cert_serial("abc"), "Invalid serial number \"abc\"", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_serial("-1"), "Invalid serial number \"-1\"", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_serial("+"), "Invalid serial number \"\"", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_serial("12x"), "Invalid serial number \"12x\"", keygen_exit);
    CHECK_THROWS_WITH_AS(parse_cert_serial("18446744073709551616"),
                         "Invalid serial number \"18446744073709551616\"", keygen_exit);
}

TEST_CASE("-n principals")
{
    CHECK(split_principals(std::nullopt).empty());
    CHECK(split_principals(std::string("alice")) == std::vector<std::string>{"alice"});
    CHECK(split_principals(std::string("alice,bob")) == std::vector<std::string>{"alice", "bob"});
    CHECK_THROWS_WITH_AS(split_principals(std::string("a,,b")), "Empty principal name", keygen_exit);
    CHECK_THROWS_WITH_AS(split_principals(std::string("")), "Empty principal name", keygen_exit);
    std::string many = "p";
    for (int i = 0; i < 256; ++i)
        many += ",p";
    CHECK_THROWS_WITH_AS(split_principals(many), "Too many certificate principals specified", keygen_exit);
}

TEST_CASE("-O certificate options")
{
    SUBCASE("defaults: user certificates get OpenSSH's extensions, host ones none")
    {
        CHECK(cert_option_set(false).extensions() == default_user_extensions());
        CHECK(cert_option_set(false).critical_options().empty());
        CHECK(cert_option_set(true).extensions().empty());
    }
    SUBCASE("flags, case-insensitive, in order")
    {
        cert_option_set s(false);
        s.add("no-pty");
        s.add("NO-AGENT-FORWARDING");
        auto ext = s.extensions();
        REQUIRE(ext.size() == 3);
        CHECK(ext[0].name == "permit-X11-forwarding");
        CHECK(ext[1].name == "permit-port-forwarding");
        CHECK(ext[2].name == "permit-user-rc");
        s.add("clear");
        s.add("permit-pty");
        ext = s.extensions();
        REQUIRE(ext.size() == 1);
        CHECK(ext[0].name == "permit-pty");
        cert_option_set host(true);
        host.add("permit-x11-forwarding");
        REQUIRE(host.extensions().size() == 1);
        CHECK(host.extensions()[0].name == "permit-X11-forwarding");
    }
    SUBCASE("critical options carry their value as a string")
    {
        cert_option_set s(false);
        s.add("source-address=127.0.0.1/32,::1");
        s.add("force-command=/bin/echo hi");
        s.add("verify-required");
        s.add("critical:custom@example.com=v");
        s.add("extension:flag@example.com");
        const auto crit = s.critical_options();
        REQUIRE(crit.size() == 4);
        CHECK(crit[0].name == "custom@example.com");
        CHECK(crit[0].data == bytes{0, 0, 0, 1, 'v'});
        CHECK(crit[1].name == "force-command");
        CHECK(crit[1].data.size() == 4 + 12);
        CHECK(crit[2].name == "source-address");
        CHECK(crit[3].name == "verify-required");
        CHECK(crit[3].data.empty());
        const auto ext = s.extensions();
        REQUIRE(ext.size() == 6);
        CHECK(ext[0].name == "flag@example.com");
        CHECK(ext[0].data.empty());
    }
    SUBCASE("bad options are refused with OpenSSH's words")
    {
        cert_option_set s(false);
        CHECK_THROWS_WITH_AS(s.add("bogus"), "Unsupported certificate option \"bogus\"", keygen_exit);
        CHECK_THROWS_WITH_AS(s.add("force-command="), "Empty force-command option", keygen_exit);
        CHECK_THROWS_WITH_AS(s.add("source-address="), "Empty source-address option", keygen_exit);
        CHECK_THROWS_WITH_AS(s.add("source-address=10.0.0.1/8"),
                             "Inconsistent mask length for network \"10.0.0.1/8\"\r\nInvalid source-address list",
                             keygen_exit);
        CHECK_THROWS_WITH_AS(s.add("source-address=foo"),
                             "addr_match_cidr_list: list entry \"foo\" contains invalid characters\r\n"
                             "Invalid network entry \"foo\"\r\nInvalid source-address list",
                             keygen_exit);
        s.add("force-command=a");
        CHECK_THROWS_WITH_AS(s.add("force-command=b"), "force-command already specified", keygen_exit);
        // A name given twice is kept twice, as OpenSSH's ssh-keygen does.
        s.add("extension:permit-pty");
        const auto ext = s.extensions();
        CHECK(std::count_if(ext.begin(), ext.end(), [](const auto& o) { return o.name == "permit-pty"; }) == 2);
    }
    CHECK(cidr_list_errors("10.0.0.0/8,::1,192.168.1.1").empty());
    CHECK(cidr_list_errors("10.0.0.0/8,,::1") ==
          std::vector<std::string>{"addr_match_cidr_list: empty entry in list \"10.0.0.0/8\""});
}

TEST_CASE("-t picks the CA's signature algorithm")
{
    CHECK(choose_cert_signature(key_type::rsa, std::nullopt).algorithm == "rsa-sha2-512");
    CHECK(choose_cert_signature(key_type::ed25519, std::nullopt).algorithm == "ssh-ed25519");
    CHECK(choose_cert_signature(key_type::ecdsa_p384, std::nullopt).algorithm == "ecdsa-sha2-nistp384");
    auto c = choose_cert_signature(key_type::rsa, std::string("rsa-sha2-256"));
    CHECK(c.algorithm == "rsa-sha2-256");
    CHECK_FALSE(c.failure.has_value());
    CHECK(choose_cert_signature(key_type::rsa, std::string("ssh-rsa")).algorithm == "ssh-rsa");
    CHECK(choose_cert_signature(key_type::rsa, std::string("rsa")).failure == "invalid argument");
    CHECK(choose_cert_signature(key_type::ed25519, std::string("ed25519")).failure ==
          "signature algorithm not supported");
    CHECK(choose_cert_signature(key_type::ecdsa_p384, std::string("ecdsa-sha2-nistp256")).failure ==
          "signature algorithm not supported");
    CHECK_THROWS_WITH_AS(choose_cert_signature(key_type::rsa, std::string("ssh-ed25519")),
                         "CA key type ssh-rsa doesn't match specified ssh-ed25519", keygen_exit);
    CHECK_THROWS_WITH_AS(choose_cert_signature(key_type::ed25519, std::string("rsa-sha2-256")),
                         "CA key type ssh-ed25519 doesn't match specified rsa-sha2-256", keygen_exit);
}

TEST_CASE("-L text matches OpenSSH's listing of each fixture")
{
    use_utc();
    for (const char* name : {"user_ed25519", "user_rsa", "user_ecdsa256", "host_ed25519", "user_expired", "user_sha1"}) {
        CAPTURE(name);
        const auto cert = cert_from_file(certs_dir + name + "-cert.pub");
        const std::string want = test::read_whole_file(certs_dir + name + "-cert.L");
        CHECK(std::string(name) + "-cert.pub:\n" + describe_certificate(cert, fingerprint_hash::sha256) == want);
    }
}

TEST_CASE("read_certificate refuses a certificate whose CA signature is bad")
{
    std::string text = test::read_whole_file(certs_dir + "host_ed25519-cert.pub");
    const auto space = text.find(' ', text.find(' ') + 1);
    REQUIRE(space != std::string::npos);
    text[space - 3] = text[space - 3] == 'A' ? 'B' : 'A'; // in the signature's last bytes
    auto c = read_certificate(text);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error() == errc::signature_invalid);
    const std::string plain = test::read_whole_file(certs_dir + "user_ed25519.pub");
    CHECK(read_certificate(plain).error() == errc::unsupported);
}

TEST_CASE("certificate file names")
{
    CHECK(certificate_path("user.pub") == "user-cert.pub");
    CHECK(certificate_path("dir.d/key") == "dir.d/key-cert.pub");
    CHECK(certificate_path("key.pubx") == "key.pubx-cert.pub");
}

TEST_CASE("-s signs: what it writes reads back with every field")
{
    use_utc();
    scratch dir;
    const std::string ca = dir.copy("ca_ed25519");
    const std::string key = dir.copy("user_ed25519.pub");
    const std::string rsa_key = dir.copy("user_rsa.pub");

    cert_sign_request r;
    r.ca_path = ca;
    r.key_id = "alice@longhaul";
    r.principals = "alice,bob";
    r.validity = parse_cert_validity("20200101:20400101", std::time(nullptr));
    r.serial = parse_cert_serial("+42");
    r.options = {"force-command=/bin/true", "source-address=127.0.0.1/32,::1"};
    r.files = {key, rsa_key};
    CHECK(keygen_sign(quiet_options(), r) == 0);

    const std::string line = test::read_whole_file(dir.path("user_ed25519-cert.pub"));
    CHECK(line.substr(line.size() - 14) == " user ed25519\n");
    const auto cert = cert_from_file(dir.path("user_ed25519-cert.pub"));
    // The same fields as OpenSSH's certificate made with the same arguments
    // (apart from the nonce and signature).
    const auto theirs = cert_from_file(certs_dir + "user_ed25519-cert.pub");
    CHECK(describe_certificate(cert, fingerprint_hash::sha256) ==
          describe_certificate(theirs, fingerprint_hash::sha256));
    CHECK(cert.serial() == 42);
    CHECK(cert.verify_signature().has_value());
    const auto second = cert_from_file(dir.path("user_rsa-cert.pub"));
    CHECK(second.serial() == 43); // "+42" counts up
    CHECK(second.key().type() == key_type::rsa);

    SUBCASE("host certificate from an RSA CA with rsa-sha2-256")
    {
        const std::string rsa_ca = dir.copy("ca_rsa");
        const std::string host = dir.copy("host_ed25519.pub");
        cert_sign_request h;
        h.ca_path = rsa_ca;
        h.key_id = "host cert";
        h.host = true;
        h.principals = "host.example,127.0.0.1";
        h.validity = parse_cert_validity("20200101:20400101", std::time(nullptr));
        h.serial.first = 1000;
        h.files = {host};
        auto o = quiet_options();
        o.key_type = "rsa-sha2-256";
        CHECK(keygen_sign(o, h) == 0);
        const auto hc = cert_from_file(dir.path("host_ed25519-cert.pub"));
        CHECK(hc.kind() == cert_kind::host);
        CHECK(hc.signature_algorithm() == "rsa-sha2-256");
        CHECK(hc.fields().extensions.empty());
        CHECK(hc.principals() == std::vector<std::string>{"host.example", "127.0.0.1"});
        CHECK(hc.verify_signature().has_value());
    }
}

TEST_CASE("-s refuses bad requests with OpenSSH's messages")
{
    scratch dir;
    const std::string ca = dir.copy("ca_ed25519");
    const std::string key = dir.copy("user_ed25519.pub");
    cert_sign_request r;
    r.ca_path = ca;
    r.files = {key};
    CHECK_THROWS_WITH_AS(keygen_sign(quiet_options(), r), "Must specify key id (-I) when certifying", keygen_exit);

    r.key_id = "x";
    r.options = {"no-such-option"};
    CHECK_THROWS_WITH_AS(keygen_sign(quiet_options(), r), "Unsupported certificate option \"no-such-option\"",
                         keygen_exit);
    r.options.clear();

    r.ca_path = dir.path("missing_ca");
    CHECK_THROWS_WITH_AS(keygen_sign(quiet_options(), r),
                         ("Load key \"" + dir.path("missing_ca") + "\": No such file or directory").c_str(),
                         keygen_exit);
    r.ca_path = ca;

    r.files = {dir.path("missing.pub")};
    CHECK_THROWS_WITH_AS(keygen_sign(quiet_options(), r),
                         ("load pubkey \"" + dir.path("missing.pub") + "\": No such file or directory").c_str(),
                         keygen_exit);

    const std::string cert = dir.copy("user_ed25519-cert.pub", "certified-cert.pub");
    r.files = {cert};
    CHECK_THROWS_WITH_AS(keygen_sign(quiet_options(), r),
                         ("do_ca_sign: key \"" + cert + "\" type ED25519-CERT cannot be certified").c_str(),
                         keygen_exit);

    r.files = {key};
    auto o = quiet_options();
    o.key_type = "rsa-sha2-512";
    CHECK_THROWS_WITH_AS(keygen_sign(o, r), "CA key type ssh-ed25519 doesn't match specified rsa-sha2-512",
                         keygen_exit);
    CHECK_FALSE(std::filesystem::exists(dir.path("user_ed25519-cert.pub")));
}
