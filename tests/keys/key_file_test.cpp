#include "common/keys/key_file.hpp"

#include "common/keys/key_lines.hpp"
#include "key_fixtures.hpp"
#include "tests/counting_random.hpp"

#include "tests/skip.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

std::string expected_fp_line(const public_key& key, std::string_view fp, std::string_view comment)
{
    return std::to_string(key.bits()) + " " + std::string(fp) + " " +
           (comment.empty() ? std::string("no comment") : std::string(comment)) + " (" +
           std::string(key_type_short_name(key.type())) + ")";
}

bool have_ssh_keygen() { return std::system("ssh-keygen -? >/dev/null 2>&1; command -v ssh-keygen >/dev/null") == 0; }

// A private temporary directory, removed at the end.
struct temp_dir {
    std::filesystem::path path;
    temp_dir()
    {
        char tmpl[] = "/tmp/longhaul-keys-XXXXXX";
        const char* p = ::mkdtemp(tmpl);
        REQUIRE(p != nullptr);
        path = p;
    }
    ~temp_dir() { std::filesystem::remove_all(path); }
};

std::string run(const std::string& cmd)
{
    std::string out;
    FILE* f = ::popen(cmd.c_str(), "r");
    REQUIRE(f != nullptr);
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        out.append(buf, n);
    ::pclose(f);
    return out;
}

} // namespace

TEST_CASE("key_file: every ssh-keygen fixture parses and matches its .pub and fingerprints")
{
    const auto names = key_fixture_names();
    REQUIRE(names.size() >= 36);
    for (const auto& name : names) {
        CAPTURE(name);
        const auto contents = fixture(name);
        const bool encrypted = fixture_encrypted(name);
        CHECK(private_key_is_encrypted(contents).value() == encrypted);

        auto key = parse_private_key(contents, encrypted ? std::optional(fixture_passphrase) : std::nullopt);
        REQUIRE(key.has_value());

        // The public key equals the .pub file, byte for byte.
        auto pub = parse_public_key_line(fixture(name + ".pub"));
        REQUIRE(pub.has_value());
        CHECK(pub->key == key->public_part());
        CHECK(pub->comment == key->comment());
        CHECK(format_public_key_line(key->public_part(), key->comment()) == first_line(fixture(name + ".pub")));

        // Fingerprints as ssh-keygen -l prints them (SHA256, then -E md5).
        const auto fp = fixture(name + ".fp");
        const auto sha_line = first_line(fp);
        const auto md5_line = first_line(fp.substr(sha_line.size() + 1));
        CHECK(expected_fp_line(key->public_part(), key->public_part().fingerprint_sha256(), key->comment()) == sha_line);
        CHECK(expected_fp_line(key->public_part(), key->public_part().fingerprint_md5(), key->comment()) == md5_line);

        // The public part is readable without the passphrase where the
        // format stores it in the clear.
        auto header_pub = private_key_file_public_key(contents);
        if (encrypted && fixture_is_pem(name)) {
            CHECK(header_pub.error() == errc::passphrase_required);
        } else {
            REQUIRE(header_pub.has_value());
            CHECK(*header_pub == key->public_part());
        }

        // The key signs with every algorithm of its type.
        for (auto alg : signature_algorithms_for(key->type())) {
            auto sig = key->sign(alg, as_bytes(name));
            REQUIRE(sig.has_value());
            CHECK(pub->key.verify(alg, as_bytes(name), *sig).has_value());
        }
    }
}

TEST_CASE("key_file: passphrase errors")
{
    for (const char* name : {"ed25519_enc_key", "ecdsa256_pem_enc_key", "rsa2048_pkcs8_enc_key",
                             "ed25519_aes256-gcm_key", "ed25519_chacha20-poly1305_key", "ed25519_aes256-cbc_key"}) {
        CAPTURE(name);
        const auto contents = fixture(name);
        CHECK(parse_private_key(contents, std::nullopt).error() == errc::passphrase_required);
        CHECK(parse_private_key(contents, "wrong passphrase").error() == errc::wrong_passphrase);
        CHECK(parse_private_key(contents, "").error() == errc::wrong_passphrase);
    }
    // A passphrase given for an unencrypted key is ignored, as in OpenSSH.
    CHECK(parse_private_key(fixture("ed25519_plain_key"), "unused").has_value());
    CHECK(parse_private_key(fixture("rsa2048_pem_plain_key"), "unused").has_value());
}

TEST_CASE("key_file: header and rounds limit")
{
    auto h = parse_openssh_key_header(fixture("ed25519_enc_key"));
    REQUIRE(h.has_value());
    CHECK(h->cipher == "aes256-ctr");
    CHECK(h->kdf == "bcrypt");
    CHECK(h->kdf_rounds == 16);
    CHECK(h->encrypted());
    auto r24 = parse_openssh_key_header(fixture("ed25519_rounds24_key"));
    REQUIRE(r24.has_value());
    CHECK(r24->kdf_rounds == 24);
    CHECK(parse_private_key(fixture("ed25519_rounds24_key"), fixture_passphrase, key_parse_options{16}).error() ==
          errc::too_large);
    auto plain = parse_openssh_key_header(fixture("ed25519_plain_key"));
    REQUIRE(plain.has_value());
    CHECK(plain->cipher == "none");
    CHECK(plain->kdf == "none");
    CHECK_FALSE(plain->encrypted());
}

TEST_CASE("key_file: write and parse every type, every format")
{
    counting_random rng{0, 37, 11}; // deterministic salts and check-ints
    std::vector<private_key> keys;
    for (auto t : {key_type::ed25519, key_type::ecdsa_p256, key_type::ecdsa_p384, key_type::ecdsa_p521}) {
        auto k = private_key::generate(t);
        REQUIRE(k.has_value());
        keys.push_back(std::move(*k));
    }
    // Reusing the fixture RSA keys saves generating them.
    for (const char* name : {"rsa2048_plain_key", "rsa3072_plain_key"})
        keys.push_back(parse_private_key(fixture(name), std::nullopt).value());

    for (auto& key : keys) {
        CAPTURE(key.public_part().type_name());
        key.set_comment("user@host with spaces");
        for (std::string_view pass : {"", "pass phrase"}) {
            auto text = write_private_key(key, private_key_format::openssh, pass, rng, 2);
            REQUIRE(text.has_value());
            CHECK(text->starts_with("-----BEGIN OPENSSH PRIVATE KEY-----\n"));
            CHECK(private_key_is_encrypted(*text).value() == !pass.empty());
            auto back = parse_private_key(*text, pass.empty() ? std::nullopt : std::optional(pass));
            REQUIRE(back.has_value());
            CHECK(back->public_part() == key.public_part());
            CHECK(back->comment() == key.comment());

            for (auto format : {private_key_format::pem, private_key_format::pkcs8}) {
                if (key.type() == key_type::ed25519 && format == private_key_format::pem) {
                    CHECK(write_private_key(key, format, pass, rng).error() == errc::unsupported);
                    continue;
                }
                auto pem = write_private_key(key, format, pass, rng);
                REQUIRE(pem.has_value());
                CHECK(private_key_is_encrypted(*pem).value() == !pass.empty());
                auto pem_back = parse_private_key(*pem, pass.empty() ? std::nullopt : std::optional(pass));
                REQUIRE(pem_back.has_value());
                CHECK(pem_back->public_part() == key.public_part());
            }
        }
    }
}

TEST_CASE("key_file: every key file cipher round-trips")
{
    counting_random rng{0, 37, 11}; // deterministic salts and check-ints
    auto key = private_key::generate(key_type::ed25519).value();
    key.set_comment("c");
    for (auto cipher : {"3des-cbc", "aes128-ctr", "aes192-ctr", "aes256-ctr", "aes128-cbc", "aes192-cbc",
                        "aes256-cbc", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com",
                        "chacha20-poly1305@openssh.com"}) {
        CAPTURE(cipher);
        auto text = write_openssh_private_key(key, "pw", 1, rng, cipher);
        REQUIRE(text.has_value());
        auto h = parse_openssh_key_header(*text);
        REQUIRE(h.has_value());
        CHECK(h->cipher == cipher);
        auto back = parse_private_key(*text, "pw");
        REQUIRE(back.has_value());
        CHECK(back->public_part() == key.public_part());
        CHECK(parse_private_key(*text, "px").error() == errc::wrong_passphrase);
    }
    CHECK(write_openssh_private_key(key, "pw", 1, rng, "blowfish-cbc").error() == errc::invalid_argument);
    CHECK_FALSE(openssh_key_cipher_known("blowfish-cbc"));
    CHECK_FALSE(openssh_key_cipher_known("rijndael-cbc@lysator.liu.se"));
    CHECK(openssh_key_cipher_known("none"));
    // ssh-keygen -Z none -N pw: bcrypt named, nothing encrypted; OpenSSH
    // then wants a passphrase, and any will do.
    auto none = write_openssh_private_key(key, "pw", 1, rng, "none");
    REQUIRE(none.has_value());
    auto h = parse_openssh_key_header(*none);
    REQUIRE(h.has_value());
    CHECK(h->cipher == "none");
    CHECK(h->kdf == "bcrypt");
    CHECK(parse_private_key(*none, std::nullopt).error() == errc::passphrase_required);
    CHECK(parse_private_key(*none, "").error() == errc::wrong_passphrase);
    REQUIRE(parse_private_key(*none, "anything").has_value());
    CHECK(parse_private_key(*none, "anything")->public_part() == key.public_part());
    CHECK(write_openssh_private_key(key, "pw", 0, rng).error() == errc::invalid_argument);
}

TEST_CASE("key_file: files written here are read by ssh-keygen")
{
    if (!have_ssh_keygen())
        LONGHAUL_SKIP("ssh-keygen not found (openssh-client)");
    system_random rng;
    temp_dir dir;
    std::vector<private_key> keys;
    for (auto t : {key_type::ed25519, key_type::ecdsa_p256, key_type::ecdsa_p384, key_type::ecdsa_p521})
        keys.push_back(private_key::generate(t).value());
    keys.push_back(parse_private_key(fixture("rsa2048_plain_key"), std::nullopt).value());

    int n = 0;
    for (auto& key : keys) {
        key.set_comment("written by longhaul");
        const auto expected = format_public_key(key.public_part());
        struct variant {
            private_key_format format;
            std::string_view pass;
        };
        for (auto v : {variant{private_key_format::openssh, "pass phrase"}, variant{private_key_format::openssh, ""},
                       variant{private_key_format::pem, "pass phrase"}, variant{private_key_format::pkcs8, "pass phrase"},
                       variant{private_key_format::pkcs8, ""}}) {
            if (key.type() == key_type::ed25519 && v.format != private_key_format::openssh)
                continue;
            CAPTURE(key.public_part().type_name());
            CAPTURE(static_cast<int>(v.format));
            auto text = write_private_key(key, v.format, v.pass, rng, openssh_default_kdf_rounds);
            REQUIRE(text.has_value());
            const auto path = dir.path / ("key" + std::to_string(n++));
            REQUIRE(write_private_key_file(path, *text).has_value());
            CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::all) ==
                  (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
            const auto out = run("ssh-keygen -y -P '" + std::string(v.pass) + "' -f " + path.string() + " 2>&1");
            // ssh-keygen -y prints the comment of openssh-key-v1 files.
            CHECK(out.starts_with(expected));
        }
    }
}

TEST_CASE("key_file: load_private_key_file")
{
    auto k = load_private_key_file(key_dir() / "ecdsa384_enc_key", std::string(fixture_passphrase));
    REQUIRE(k.has_value());
    CHECK(k->type() == key_type::ecdsa_p384);
    CHECK(load_private_key_file(key_dir() / "does-not-exist", std::nullopt).error() == errc::io_error);
    CHECK(load_private_key_file(key_dir(), std::nullopt).error() == errc::io_error);
    CHECK(load_private_key_file(key_dir() / "ed25519_plain_key.pub", std::nullopt).error() == errc::invalid_format);
    auto pub = load_public_key_file(key_dir() / "ed25519_plain_key.pub");
    REQUIRE(pub.has_value());
    CHECK(pub->key == load_private_key_file(key_dir() / "ed25519_plain_key", std::nullopt)->public_part());
}

TEST_CASE("key_file: unknown formats")
{
    CHECK(parse_private_key("", std::nullopt).error() == errc::invalid_format);
    CHECK(parse_private_key("hello", std::nullopt).error() == errc::invalid_format);
    CHECK(parse_private_key(fixture("ed25519_plain_key.pub"), std::nullopt).error() == errc::invalid_format);
    CHECK(parse_private_key("-----BEGIN DSA PRIVATE KEY-----\nAAAA\n-----END DSA PRIVATE KEY-----\n", std::nullopt)
              .error() == errc::unsupported);
    CHECK(private_key_is_encrypted("nothing").error() == errc::invalid_format);
    CHECK(parse_private_key(std::string(max_key_file_size + 1, ' '), std::nullopt).error() == errc::too_large);
}
