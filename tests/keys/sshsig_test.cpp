#include "common/keys/sshsig.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/key_file.hpp"
#include "common/wire.hpp"
#include "key_fixtures.hpp"

#include "tests/skip.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::test;

TEST_CASE("sshsig: signatures made by ssh-keygen -Y sign verify")
{
    const auto message = fixture("message.txt");
    for (const char* base : {"ed25519", "ecdsa256", "ecdsa384", "ecdsa521", "rsa2048", "rsa3072"}) {
        CAPTURE(base);
        const std::string name = base;
        auto sig = parse_sshsig(fixture(name + "_plain.sig"));
        REQUIRE(sig.has_value());
        const auto key = parse_private_key(fixture(name + "_plain_key"), std::nullopt).value();
        CHECK(sig->key == key.public_part());
        CHECK(sig->ns == "file");
        CHECK(sig->hash_alg == "sha512");
        CHECK(verify_sshsig(*sig, "file", as_bytes(message)).has_value());
        CHECK(verify_sshsig(*sig, "git", as_bytes(message)).error() == errc::signature_invalid);
        CHECK(verify_sshsig(*sig, "file", as_bytes(message + "x")).error() == errc::signature_invalid);
        // Re-encoding the parsed signature gives the same blob.
        CHECK(armor_encode(sshsig_label, sshsig_to_blob(*sig)) == fixture(name + "_plain.sig"));
    }
}

TEST_CASE("sshsig: sign and verify, and ssh-keygen accepts ours")
{
    const auto message = fixture("message.txt");
    const bool have_keygen = std::system("command -v ssh-keygen >/dev/null 2>&1") == 0;
    if (!have_keygen)
        longhaul::test::record_skip("ssh-keygen not found (openssh-client): its verification of our signatures is not checked");
    for (const char* base : {"ed25519", "ecdsa256", "ecdsa384", "ecdsa521", "rsa2048"}) {
        CAPTURE(base);
        const auto key = parse_private_key(fixture(std::string(base) + "_plain_key"), std::nullopt).value();
        for (const char* hash : {"sha256", "sha512"}) {
            auto text = sign_sshsig(key, "file", as_bytes(message), hash);
            REQUIRE(text.has_value());
            auto sig = parse_sshsig(*text);
            REQUIRE(sig.has_value());
            CHECK(verify_sshsig(*sig, "file", as_bytes(message)).has_value());
            if (!have_keygen)
                continue;
            char path[] = "/tmp/longhaul-sshsig-XXXXXX";
            const int fd = ::mkstemp(path);
            REQUIRE(fd >= 0);
            REQUIRE(::write(fd, text->data(), text->size()) == static_cast<ssize_t>(text->size()));
            ::close(fd);
            const std::string cmd = "ssh-keygen -Y check-novalidate -n file -s " + std::string(path) + " < " +
                                    (key_dir() / "message.txt").string() + " >/dev/null 2>&1";
            CHECK(std::system(cmd.c_str()) == 0);
            ::unlink(path);
        }
    }
}

TEST_CASE("sshsig: malformed envelopes")
{
    const auto text = fixture("ed25519_plain.sig");
    const auto blob = armor_decode(text, sshsig_label).value();
    const bytes b = to_bytes(blob.span());
    for (std::size_t n = 0; n < b.size(); ++n)
        CHECK_FALSE(parse_sshsig_blob(byte_span(b.data(), n)).has_value());
    auto longer = b;
    longer.push_back(0);
    CHECK_FALSE(parse_sshsig_blob(longer).has_value());
    auto bad_magic = b;
    bad_magic[0] = 'X';
    CHECK(parse_sshsig_blob(bad_magic).error() == errc::invalid_format);
    auto bad_version = b;
    bad_version[9] = 2;
    CHECK(parse_sshsig_blob(bad_version).error() == errc::invalid_format);
    CHECK(parse_sshsig("not a signature").error() == errc::invalid_format);

    // Hash algorithm outside sha256/sha512.
    auto sig = parse_sshsig(text).value();
    sig.hash_alg = "sha1";
    CHECK(parse_sshsig_blob(sshsig_to_blob(sig)).error() == errc::unsupported);
    CHECK(verify_sshsig(sig, "file", as_bytes(fixture("message.txt"))).error() == errc::signature_invalid);
}

TEST_CASE("sshsig: RSA SHA-1 signatures are refused")
{
    const auto key = parse_private_key(fixture("rsa2048_plain_key"), std::nullopt).value();
    const auto message = as_bytes("m");
    // Build the envelope by hand with an ssh-rsa signature of the right data.
    bytes signed_data;
    wire_writer(signed_data).raw("SSHSIG").string("file").string("").string("sha512").string(
        digest(hash_alg::sha512, message));
    sshsig sig;
    sig.key = key.public_part();
    sig.ns = "file";
    sig.hash_alg = "sha512";
    sig.signature = key.sign("ssh-rsa", signed_data).value();
    CHECK(key.public_part().verify("ssh-rsa", signed_data, sig.signature).has_value());
    CHECK(verify_sshsig(sig, "file", message).error() == errc::signature_invalid);
    sig.signature = key.sign("rsa-sha2-256", signed_data).value();
    CHECK(verify_sshsig(sig, "file", message).has_value());
}
