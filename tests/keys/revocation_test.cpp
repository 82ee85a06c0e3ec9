#include "common/keys/revocation.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/revocation_file.hpp"
#include "common/wire.hpp"
#include "key_fixtures.hpp"

#include "tests/keys/sk_vectors.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace longhaul;
using namespace longhaul::test;

namespace {

std::string pub_line(std::string_view name) { return first_line(fixture(name)); }

result<revocation_list> parse_text(std::string_view text) { return parse_revocation_list(as_bytes(text)); }

// A 512-bit RSA key: OpenSSH's sshkey_read refuses it for its length, which
// sshkey_in_file skips.
std::string short_rsa_line()
{
    bytes n(64, 0xc5);
    n.back() = 0x01;
    bytes blob;
    wire_writer(blob).string("ssh-rsa").mpint(bytes{0x01, 0x00, 0x01}).mpint(n);
    return "ssh-rsa " + base64_encode(blob) + " too short";
}

class temp_file {
public:
    explicit temp_file(const std::string& contents)
    {
        char tmpl[] = "/tmp/longhaul-revocation-XXXXXX";
        const int fd = ::mkstemp(tmpl);
        REQUIRE(fd >= 0);
        ::close(fd);
        path_ = tmpl;
        std::ofstream(path_, std::ios::binary) << contents;
    }
    ~temp_file() { std::filesystem::remove(path_); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

} // namespace

TEST_CASE("revocation: a list of public keys")
{
    const std::string text = "# revoked keys\n"
                             "\n"
                             "   \t\n" +
                             pub_line("ed25519_plain_key.pub") + "\n" + "  \t" + pub_line("rsa2048_plain_key.pub") +
                             "\r\n" + "\t# " + pub_line("ecdsa256_plain_key.pub") + "\n" +
                             pub_line("ecdsa384_plain_key.pub"); // no final newline
    auto list = parse_text(text);
    REQUIRE(list.has_value());
    CHECK(list->kind() == revocation_list::format::key_list);
    CHECK(list->contents().keys.size() == 3);
    CHECK(list->revoked(fixture_public_key("ed25519_plain_key.pub")));
    CHECK(list->revoked(fixture_public_key("rsa2048_plain_key.pub")));
    CHECK(list->revoked(fixture_public_key("ecdsa384_plain_key.pub")));
    CHECK_FALSE(list->revoked(fixture_public_key("ecdsa256_plain_key.pub"))); // commented out
    CHECK_FALSE(list->revoked(fixture_public_key("ecdsa521_plain_key.pub")));

    auto empty = parse_text("");
    REQUIRE(empty.has_value());
    CHECK_FALSE(empty->revoked(fixture_public_key("ed25519_plain_key.pub")));
}

TEST_CASE("revocation: a key list line that cannot be read refuses the whole file")
{
    const std::string good = pub_line("ed25519_plain_key.pub") + "\n";
    CHECK(parse_text(good + "garbage\n").error() == errc::invalid_format);
    CHECK(parse_text(good + "ssh-ed25519\n").error() == errc::invalid_format);
    CHECK(parse_text(good + "ssh-ed25519  \n").error() == errc::invalid_format);
    CHECK(parse_text(good + "ssh-foo AAAAB3NzaC1yc2E=\n").error() == errc::invalid_format);
    CHECK(parse_text(good + "ssh-ed25519 !!!!\n").error() == errc::invalid_format);
    CHECK(parse_text(good + "\r\n").error() == errc::invalid_format); // as in OpenSSH: "\r" is not blank
    // The type named and the type of the blob differ.
    const std::string ed_b64 = base64_encode(fixture_public_key("ed25519_plain_key.pub").blob());
    CHECK(parse_text(good + "ssh-rsa " + ed_b64 + "\n").error() == errc::key_type_mismatch);
    // An authorized_keys options field is not part of this format.
    CHECK(parse_text("no-pty " + good).error() == errc::invalid_format);
}

TEST_CASE("revocation: key list lines OpenSSH reads but Longhaul keys cannot match")
{
    const std::string ed = pub_line("ed25519_plain_key.pub") + "\n";
    // Too-short RSA keys are skipped, as OpenSSH skips them.
    auto short_rsa = parse_text(short_rsa_line() + "\n" + ed);
    REQUIRE(short_rsa.has_value());
    CHECK(short_rsa->contents().keys.size() == 1);
    // DSA keys: skipped, the rest still applies.
    auto other = parse_text("ssh-dss AAAAB3NzaC1kc3M= dsa\n"
                            "ssh-dss-cert-v01@openssh.com AAAAHHNzaC1kc3MtY2VydC12MDFAb3BlbnNzaC5jb20=\n" +
                            ed);
    REQUIRE(other.has_value());
    CHECK(other->revoked(fixture_public_key("ed25519_plain_key.pub")));
    // FIDO keys are Longhaul keys now: listed ones are revoked, broken
    // ones refused like any other key's.
    auto sk = parse_text("sk-ssh-ed25519@openssh.com " + std::string(test::sk_ed25519_pub) + " fido\n" + ed);
    REQUIRE(sk.has_value());
    CHECK(sk->revoked(*public_key::from_blob(*base64_decode(test::sk_ed25519_pub))));
    CHECK(parse_text("sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t fido\n" + ed).error() ==
          errc::invalid_format);
    // Short type names are not key types here (OpenSSH 9.2: "invalid format").
    CHECK(parse_text("ED25519 " + base64_encode(fixture_public_key("ed25519_plain_key.pub").blob()) + "\n").error() ==
          errc::invalid_format);
    CHECK(parse_text("RSA " + base64_encode(fixture_public_key("rsa3072_plain_key.pub").blob()) + "\n").error() ==
          errc::invalid_format);
}

TEST_CASE("revocation: a certificate in a key list revokes its public key")
{
    // ecdsa521-cert.pub certifies ecdsa521_plain_key.pub (see make_krl_fixtures.sh).
    auto list = parse_text(fixture("krl/ecdsa521-cert.pub"));
    REQUIRE(list.has_value());
    CHECK(list->revoked(fixture_public_key("ecdsa521_plain_key.pub")));
    CHECK_FALSE(list->revoked(fixture_public_key("ecdsa384_plain_key.pub")));
    // A certificate line whose blob is something else.
    const std::string cert_b64 = pub_line("krl/ecdsa521-cert.pub").substr(pub_line("krl/ecdsa521-cert.pub").find(' ') + 1);
    CHECK(parse_text("ssh-ed25519-cert-v01@openssh.com " + cert_b64).error() == errc::key_type_mismatch);
    CHECK(parse_text("ecdsa-sha2-nistp521-cert-v01@openssh.com AAAAB3NzaC1yc2E=\n").has_value() == false);
}

TEST_CASE("revocation: lines end at a NUL, as C strings do")
{
    const std::string line = pub_line("ed25519_plain_key.pub");
    auto list = parse_text(line + std::string("\0garbage", 8) + "\n" + std::string("\0more garbage\n", 14));
    REQUIRE(list.has_value());
    CHECK(list->revoked(fixture_public_key("ed25519_plain_key.pub")));
}

TEST_CASE("revocation: the KRL magic selects the binary format")
{
    const auto krl_text = fixture("krl/keys.krl");
    auto list = parse_text(krl_text);
    REQUIRE(list.has_value());
    CHECK(list->kind() == revocation_list::format::krl);
    CHECK(list->revoked(fixture_public_key("ecdsa256_plain_key.pub")));
    CHECK_FALSE(list->revoked(fixture_public_key("ecdsa521_plain_key.pub")));
    // A damaged KRL is refused, not read as a key list.
    CHECK(parse_text(krl_text.substr(0, krl_text.size() - 1)).error() == errc::incomplete);
    // Shorter than the magic: a (bad) key list.
    CHECK(parse_text("SSHKRL\n").error() == errc::invalid_format);
}

TEST_CASE("revocation: error reasons in OpenSSH's words")
{
    CHECK(revocation_error_reason(errc::invalid_format) == "invalid format");
    CHECK(revocation_error_reason(errc::incomplete) == "incomplete message");
    CHECK(revocation_error_reason(errc::unsupported) == "feature not supported");
    CHECK(revocation_error_reason(errc::invalid_argument) == "invalid argument");
    CHECK(revocation_error_reason(errc::key_type_mismatch) == "key type does not match");
}

TEST_CASE("revocation: check_revocation_file reads the file and fails closed")
{
    using status = revocation_check::status;
    const auto ed = fixture_public_key("ed25519_plain_key.pub");
    const auto rsa = fixture_public_key("rsa2048_plain_key.pub");

    temp_file list(pub_line("ed25519_plain_key.pub") + "\n");
    CHECK(check_revocation_file(list.path(), ed).result == status::revoked);
    CHECK(check_revocation_file(list.path(), rsa).result == status::not_revoked);

    temp_file krl(fixture("krl/keys.krl"));
    CHECK(check_revocation_file(krl.path(), ed).result == status::revoked);
    CHECK(check_revocation_file(krl.path(), fixture_public_key("rsa3072_plain_key.pub")).result == status::not_revoked);

    auto missing = check_revocation_file("/nonexistent/longhaul/revoked", ed);
    CHECK(missing.result == status::error);
    CHECK(missing.reason == "No such file or directory");

    auto dir = check_revocation_file("/", ed);
    CHECK(dir.result == status::error);
    CHECK(dir.reason == "Is a directory");

    temp_file garbage("not a key\n");
    auto bad = check_revocation_file(garbage.path(), rsa);
    CHECK(bad.result == status::error);
    CHECK(bad.reason == "invalid format");
}
