// Security keys in private key files, certificates and SSHSIG, against
// files made by OpenSSH 9.2p1 (sk_vectors.hpp).
#include "common/keys/base64.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/sshsig.hpp"
#include "common/random.hpp"
#include "common/wire.hpp"
#include "tests/keys/sk_vectors.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

certificate cert_from_base64(std::string_view b64)
{
    auto blob = base64_decode(b64);
    REQUIRE(blob);
    auto cert = certificate::from_blob(*blob);
    REQUIRE(cert);
    return std::move(*cert);
}

} // namespace

TEST_CASE("sk private key files: the public half is readable, signing is refused")
{
    struct {
        std::string_view file, pub, comment;
    } cases[] = {
        {sk_ed25519_private, sk_ed25519_pub, "edk"},
        {sk_ecdsa_private, sk_ecdsa_pub, "eck"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.comment);
        const public_key expected = key_from_base64(c.pub);
        auto pub = private_key_file_public_key(c.file);
        REQUIRE(pub);
        CHECK(*pub == expected);
        CHECK(pub->application() == "ssh:");

        auto loaded = parse_private_key(c.file, std::nullopt);
        CHECK(loaded.error() == errc::security_key_unsupported);
        CHECK(to_string(loaded.error()) == "security keys are not supported yet");
        CHECK(private_key_is_encrypted(c.file).value() == false);

        auto record = parse_openssh_security_key(c.file, std::nullopt);
        REQUIRE(record);
        CHECK(record->key == expected);
        CHECK(record->flags == sk_flag_user_presence);
        CHECK(record->comment == c.comment);
        CHECK_FALSE(record->key_handle.empty());
    }
    auto ed = parse_openssh_security_key(sk_ed25519_private, std::nullopt);
    REQUIRE(ed);
    CHECK(ed->key_handle.size() == 48);
}

TEST_CASE("sk private key files: encrypted")
{
    const std::string_view file = sk_ed25519_private_encrypted;
    CHECK(private_key_is_encrypted(file).value());
    // The header is in the clear.
    auto pub = private_key_file_public_key(file);
    REQUIRE(pub);
    CHECK(*pub == key_from_base64(sk_ed25519_pub));
    // Refused before any passphrase is asked for: none would help.
    CHECK(parse_private_key(file, std::nullopt).error() == errc::security_key_unsupported);
    CHECK(parse_private_key(file, "longhaul-test").error() == errc::security_key_unsupported);

    CHECK(parse_openssh_security_key(file, std::nullopt).error() == errc::passphrase_required);
    CHECK(parse_openssh_security_key(file, "wrong").error() == errc::wrong_passphrase);
    auto record = parse_openssh_security_key(file, "longhaul-test");
    REQUIRE(record);
    CHECK(record->comment == "edk");
    CHECK(record->flags == sk_flag_user_presence);
}

namespace {

// Hands out the bytes it was given, then zeros: the check-ints of a file
// being rewritten, so that the result can be compared byte for byte.
class replay_random final : public random_source {
public:
    explicit replay_random(bytes b) : bytes_(std::move(b)) {}
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = next_ < bytes_.size() ? bytes_[next_++] : 0;
    }

private:
    bytes bytes_;
    std::size_t next_ = 0;
};

// Where the private section of a decoded openssh-key-v1 file starts:
// after the magic, cipher, KDF, KDF options, key count, public key and the
// section's length.
std::size_t section_start(byte_span blob)
{
    wire_reader r(blob);
    (void)r.raw(15);
    (void)r.text();
    (void)r.text();
    (void)r.string();
    (void)r.u32();
    (void)r.string();
    (void)r.u32();
    REQUIRE(r.ok());
    return r.position();
}

// The four check-int bytes of an unencrypted file.
bytes check_int_of(std::string_view file)
{
    auto blob = armor_decode(file, "OPENSSH PRIVATE KEY");
    REQUIRE(blob);
    return to_bytes(blob->span().subspan(section_start(blob->span()), 4));
}

} // namespace

TEST_CASE("sk private key files: written as OpenSSH writes them")
{
    // OpenSSH's files, read and written again with their own check-ints:
    // the same bytes (cipher none, fields, comment, padding).
    for (std::string_view file : {sk_ed25519_private, sk_ecdsa_private}) {
        auto record = parse_openssh_security_key(file, std::nullopt);
        REQUIRE(record);
        replay_random rng(check_int_of(file));
        auto written = write_openssh_security_key(*record, "", openssh_default_kdf_rounds, rng);
        REQUIRE(written);
        CHECK(*written == file);
    }
    // Encrypted: read back with the passphrase only.
    auto record = parse_openssh_security_key(sk_ecdsa_private, std::nullopt);
    REQUIRE(record);
    record->flags = sk_flag_user_presence | sk_flag_user_verification;
    record->comment = "rewritten";
    system_random rng;
    auto text = write_openssh_security_key(*record, "sk passphrase", 4, rng);
    REQUIRE(text);
    CHECK(private_key_is_encrypted(*text).value());
    CHECK(parse_openssh_security_key(*text, std::nullopt).error() == errc::passphrase_required);
    CHECK(parse_openssh_security_key(*text, "wrong").error() == errc::wrong_passphrase);
    auto back = parse_openssh_security_key(*text, "sk passphrase");
    REQUIRE(back);
    CHECK(back->key == record->key);
    CHECK(back->flags == record->flags);
    CHECK(back->key_handle == record->key_handle);
    CHECK(back->comment == "rewritten");
    // Only security keys have such a record.
    openssh_security_key plain;
    auto k = private_key::generate(key_type::ed25519);
    REQUIRE(k);
    plain.key = k->public_part();
    CHECK(write_openssh_security_key(plain, "", 16, rng).error() == errc::invalid_argument);
}

TEST_CASE("sk private key files: plain keys are not security keys")
{
    auto k = private_key::generate(key_type::ed25519);
    REQUIRE(k);
    system_random rng;
    auto text = write_private_key(*k, private_key_format::openssh, "", rng);
    REQUIRE(text);
    CHECK(parse_openssh_security_key(*text, std::nullopt).error() == errc::unsupported);
    CHECK(parse_private_key(*text, std::nullopt));
}

TEST_CASE("sk private key files: a damaged record is refused")
{
    // Each base64 quantum of the body decoded, one byte flipped inside the
    // private section: invalid_format (or another error), never a key.
    auto blob = armor_decode(sk_ed25519_private, "OPENSSH PRIVATE KEY");
    REQUIRE(blob);
    const bytes original = to_bytes(blob->span());
    const std::size_t section = section_start(original);
    for (std::size_t i = section; i < original.size(); ++i) {
        bytes damaged = original;
        damaged[i] ^= 0x01;
        const std::string text = armor_encode("OPENSSH PRIVATE KEY", damaged);
        auto record = parse_openssh_security_key(text, std::nullopt);
        // The key handle and the reserved string's contents are opaque;
        // everything else is checked.
        if (record) {
            CHECK(record->key == key_from_base64(sk_ed25519_pub));
            continue;
        }
        CHECK(parse_private_key(text, std::nullopt).error() == errc::security_key_unsupported);
    }
}

TEST_CASE("sk generation and signing are refused as unsupported")
{
    CHECK(private_key::generate(key_type::sk_ed25519).error() == errc::security_key_unsupported);
    CHECK(private_key::generate(key_type::sk_ecdsa_p256).error() == errc::security_key_unsupported);
}

TEST_CASE("sk certificates: names")
{
    CHECK(certificate_type_name(key_type::sk_ed25519) == "sk-ssh-ed25519-cert-v01@openssh.com");
    CHECK(certificate_type_name(key_type::sk_ecdsa_p256) == "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com");
    CHECK(certificate_key_type("sk-ssh-ed25519-cert-v01@openssh.com") == key_type::sk_ed25519);
    CHECK(certificate_key_type("sk-ecdsa-sha2-nistp256-cert-v01@openssh.com") == key_type::sk_ecdsa_p256);
    CHECK(certificate_signature_algorithm("sk-ssh-ed25519-cert-v01@openssh.com") == "sk-ssh-ed25519@openssh.com");
    CHECK(certificate_algorithm_for("sk-ecdsa-sha2-nistp256@openssh.com") ==
          "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com");
    CHECK(is_certificate_algorithm("sk-ecdsa-sha2-nistp256-cert-v01@openssh.com"));
}

TEST_CASE("sk certificates: parse OpenSSH's")
{
    const certificate vr = cert_from_base64(sk_ed25519_vr_cert);
    CHECK(vr.type_name() == "sk-ssh-ed25519-cert-v01@openssh.com");
    CHECK(vr.key() == key_from_base64(sk_ed25519_pub));
    CHECK(vr.key().application() == "ssh:");
    CHECK(vr.key_id() == "vrcert");
    CHECK(vr.principals() == std::vector<std::string>{"root"});
    REQUIRE(vr.fields().critical_options.size() == 1);
    CHECK(vr.fields().critical_options[0].name == "verify-required");
    CHECK(vr.signature_algorithm() == "ssh-ed25519");
    CHECK(vr.verify_signature());
    CHECK(base64_encode(vr.blob()) == sk_ed25519_vr_cert);

    const certificate ec = cert_from_base64(sk_ecdsa_cert);
    CHECK(ec.type_name() == "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com");
    CHECK(ec.key() == key_from_base64(sk_ecdsa_pub));
    CHECK(ec.key().fingerprint_sha256() == sk_ecdsa_fp);
    CHECK(ec.principals() == std::vector<std::string>{"alice"});
    CHECK(ec.verify_signature());

    // Every truncation fails to parse.
    for (std::size_t n = 0; n < ec.blob().size(); ++n)
        CHECK_FALSE(certificate::from_blob(byte_span(ec.blob()).first(n)));
}

TEST_CASE("sk certificates: an sk key as CA")
{
    const certificate c = cert_from_base64(sk_ca_signed_cert);
    CHECK(c.key().type() == key_type::ed25519);
    CHECK(c.key().fingerprint_sha256() == sk_ca_signed_cert_key_fp);
    CHECK(c.signature_key() == key_from_base64(sk_ed25519_pub));
    CHECK(c.signature_algorithm() == "sk-ssh-ed25519@openssh.com");
    CHECK(c.verify_signature());
    CHECK(c.verify_signature(certificate::any_signature_algorithm()));
    CHECK_FALSE(c.verify_signature({"ssh-ed25519"}));
    // The signature's last byte (its counter) flipped.
    bytes damaged = c.blob();
    damaged.back() ^= 0x01;
    auto bad = certificate::from_blob(damaged);
    REQUIRE(bad);
    CHECK_FALSE(bad->verify_signature());
}

TEST_CASE("sk SSHSIG: OpenSSH's signatures verify")
{
    for (auto armored : {sk_ed25519_sshsig, sk_ecdsa_sshsig, sk_ed25519_nt_sshsig}) {
        auto sig = parse_sshsig(armored);
        REQUIRE(sig);
        CHECK(is_security_key(sig->key.type()));
        // ssh-keygen -Y verify in 9.2 accepts a signature without the
        // user-presence flag (sk_ed25519_nt_sshsig) too.
        CHECK(verify_sshsig(*sig, "file", as_bytes(sk_signed_message)));
        CHECK_FALSE(verify_sshsig(*sig, "git", as_bytes(sk_signed_message)));
        CHECK_FALSE(verify_sshsig(*sig, "file", as_bytes("hello sk")));
    }
    CHECK(parse_sshsig(sk_ed25519_sshsig)->key == key_from_base64(sk_ed25519_pub));
    CHECK(parse_sshsig(sk_ecdsa_sshsig)->key == key_from_base64(sk_ecdsa_pub));
}
