#include "common/keys/openssh_key_v1.hpp"

#include "common/keys/base64.hpp"
#include "common/wire.hpp"
#include "key_fixtures.hpp"
#include "tests/counting_random.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

const private_key& fixture_key()
{
    static const private_key key = parse_openssh_private_key(fixture("ed25519_plain_key"), std::nullopt).value();
    return key;
}

// A plaintext private section for the fixture key.
bytes section(std::uint32_t check1, std::uint32_t check2, std::string_view comment, std::size_t block = 8,
              bool good_padding = true)
{
    bytes out;
    wire_writer w(out);
    w.u32(check1).u32(check2);
    REQUIRE(fixture_key().serialize(w).has_value());
    w.string(comment);
    for (std::uint8_t pad = 1; out.size() % block != 0; ++pad)
        w.u8(good_padding ? pad : 0);
    return out;
}

struct file_parts {
    std::string cipher = "none";
    std::string kdf = "none";
    bytes kdf_options;
    std::uint32_t nkeys = 1;
    bytes pub = fixture_key().public_part().blob();
    bytes private_section = section(7, 7, "comment");
    bytes trailer;
};

std::string make_file(const file_parts& p)
{
    bytes blob;
    wire_writer(blob)
        .raw(as_bytes(std::string_view("openssh-key-v1\0", 15)))
        .string(p.cipher)
        .string(p.kdf)
        .string(p.kdf_options)
        .u32(p.nkeys)
        .string(p.pub)
        .string(p.private_section)
        .raw(p.trailer);
    return armor_encode(openssh_key_label, blob);
}

errc parse_error(const std::string& text, std::optional<std::string_view> pass = std::nullopt)
{
    return parse_openssh_private_key(text, pass).error();
}

} // namespace

TEST_CASE("openssh_key_v1: a hand-built file parses")
{
    auto k = parse_openssh_private_key(make_file({}), std::nullopt);
    REQUIRE(k.has_value());
    CHECK(k->comment() == "comment");
    CHECK(k->public_part() == fixture_key().public_part());
}

TEST_CASE("openssh_key_v1: structural errors")
{
    file_parts p;
    p.nkeys = 2;
    CHECK(parse_error(make_file(p)) == errc::invalid_format);
    p.nkeys = 0;
    CHECK(parse_error(make_file(p)) == errc::invalid_format);

    p = {};
    p.cipher = "blowfish-cbc";
    CHECK(parse_error(make_file(p)) == errc::unsupported);
    p = {};
    p.kdf = "scrypt";
    p.cipher = "aes256-ctr";
    CHECK(parse_error(make_file(p)) == errc::unsupported);
    // kdf none with a cipher, options with kdf none. (bcrypt without a
    // cipher is what ssh-keygen -Z none writes: key_file_test.)
    p = {};
    p.cipher = "aes256-ctr";
    CHECK(parse_error(make_file(p)) == errc::invalid_format);
    p = {};
    p.kdf_options = {1};
    CHECK(parse_error(make_file(p)) == errc::invalid_format);
    // bcrypt options: zero rounds, empty salt, trailing bytes, over the cap.
    for (auto opts : {std::pair<std::string_view, std::uint32_t>{"salt", 0}, {"", 16}}) {
        p = {};
        p.cipher = "aes256-ctr";
        p.kdf = "bcrypt";
        p.private_section.resize(96);
        wire_writer(p.kdf_options).string(opts.first).u32(opts.second);
        CHECK(parse_error(make_file(p), "pw") == errc::invalid_format);
    }
    p.kdf_options.clear();
    wire_writer(p.kdf_options).string("salt").u32(16).u8(0);
    CHECK(parse_error(make_file(p), "pw") == errc::invalid_format);
    p.kdf_options.clear();
    wire_writer(p.kdf_options).string("salt").u32(0xffffffff);
    CHECK(parse_error(make_file(p), "pw") == errc::too_large);

    // Trailing data after the section; section not a whole number of blocks.
    p = {};
    p.trailer = {0};
    CHECK(parse_error(make_file(p)) == errc::invalid_format);
    p = {};
    p.private_section.push_back(1);
    CHECK(parse_error(make_file(p)) == errc::invalid_format);

    // Check-ints differ (no passphrase involved: a corrupt file).
    p = {};
    p.private_section = section(7, 8, "comment");
    CHECK(parse_error(make_file(p)) == errc::invalid_format);
    // Padding not 1, 2, 3, ...
    p = {};
    p.private_section = section(7, 7, "c", 8, false);
    CHECK(parse_error(make_file(p)) == errc::invalid_format);
    // Comment with a NUL.
    p = {};
    p.private_section = section(7, 7, std::string_view("a\0b", 3));
    CHECK(parse_error(make_file(p)) == errc::invalid_format);
    // The public key in the header must be the private key's.
    p = {};
    p.pub = parse_openssh_private_key(fixture("ecdsa256_plain_key"), std::nullopt)->public_part().blob();
    CHECK(parse_error(make_file(p)) == errc::invalid_format);
    // A header key of unknown type.
    p = {};
    p.pub.clear();
    wire_writer(p.pub).string("ssh-dss").string("x");
    CHECK(parse_error(make_file(p)) == errc::unsupported);
    // Wrong magic.
    auto text = make_file({});
    auto blob = to_bytes(armor_decode(text, openssh_key_label)->span());
    blob[14] = 'x';
    CHECK(parse_error(armor_encode(openssh_key_label, blob)) == errc::invalid_format);
    // Longer padding is accepted, as by OpenSSH, while it counts 1, 2, 3.
    p = {};
    p.private_section = section(7, 7, "c", 32);
    CHECK(parse_openssh_private_key(make_file(p), std::nullopt).has_value());
}

TEST_CASE("openssh_key_v1: every truncation of a key file fails cleanly")
{
    const auto text = fixture("ed25519_plain_key");
    for (std::size_t n = 0; n < text.size(); ++n) {
        // Cutting only the final newline leaves a valid file.
        if (n == text.size() - 1)
            continue;
        CHECK_FALSE(parse_openssh_private_key(text.substr(0, n), std::nullopt).has_value());
    }
    const auto blob = to_bytes(armor_decode(text, openssh_key_label)->span());
    for (std::size_t n = 0; n < blob.size(); ++n) {
        const auto cut = armor_encode(openssh_key_label, byte_span(blob.data(), n));
        CHECK_FALSE(parse_openssh_private_key(cut, std::nullopt).has_value());
    }
}

TEST_CASE("openssh_key_v1: every bit flip fails or leaves the same key")
{
    const auto& original = fixture_key();
    const auto blob = to_bytes(armor_decode(fixture("ed25519_plain_key"), openssh_key_label)->span());
    int accepted = 0;
    for (std::size_t i = 0; i < blob.size(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            auto flipped = blob;
            flipped[i] ^= static_cast<std::uint8_t>(1u << bit);
            auto k = parse_openssh_private_key(armor_encode(openssh_key_label, flipped), std::nullopt);
            if (k) {
                // Only the comment is not covered by any check.
                CHECK(k->public_part() == original.public_part());
                CHECK(k->comment() != original.comment());
                ++accepted;
            }
        }
    }
    CHECK(accepted <= static_cast<int>(8 * original.comment().size()));
}

TEST_CASE("openssh_key_v1: bit flips in an encrypted section")
{
    counting_random rng{0, 13, 5};
    auto key = fixture_key();
    key.set_comment("k");
    // One bcrypt round keeps this fast; the file is otherwise standard.
    const auto text = write_openssh_private_key(key, "pw", 1, rng).value();
    const auto blob = to_bytes(armor_decode(text, openssh_key_label)->span());
    // Find where the encrypted section starts.
    wire_reader r(blob);
    r.raw(15);
    r.text();
    r.text();
    r.string();
    r.u32();
    r.string();
    const std::size_t section_start = r.position() + 4;
    REQUIRE(r.string().size() == blob.size() - section_start);
    for (std::size_t i = section_start; i < blob.size(); i += 3) {
        auto flipped = blob;
        flipped[i] ^= 0x10;
        auto k = parse_openssh_private_key(armor_encode(openssh_key_label, flipped), "pw");
        if (k)
            CHECK(k->public_part() == key.public_part());
        else
            CHECK((k.error() == errc::wrong_passphrase || k.error() == errc::invalid_format));
    }
}

TEST_CASE("openssh_key_v1: authenticated ciphers detect tampering")
{
    counting_random rng{0, 13, 5};
    auto key = fixture_key();
    for (auto cipher : {"aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com"}) {
        CAPTURE(cipher);
        const auto text = write_openssh_private_key(key, "pw", 1, rng, cipher).value();
        auto blob = to_bytes(armor_decode(text, openssh_key_label)->span());
        blob[blob.size() - 20] ^= 1; // inside the ciphertext
        CHECK(parse_openssh_private_key(armor_encode(openssh_key_label, blob), "pw").error() ==
              errc::wrong_passphrase);
        blob[blob.size() - 20] ^= 1;
        blob.back() ^= 1; // the tag
        CHECK(parse_openssh_private_key(armor_encode(openssh_key_label, blob), "pw").error() ==
              errc::wrong_passphrase);
    }
}

TEST_CASE("openssh_key_v1: the written format is what ssh-keygen writes")
{
    counting_random rng{0, 13, 5};
    auto key = fixture_key();
    key.set_comment("longhaul ed25519 plain");
    const auto ours = write_openssh_private_key(key, "", 16, rng).value();
    // ssh-keygen's file differs only in its random check-int.
    const auto theirs = fixture("ed25519_plain_key");
    REQUIRE(ours.size() == theirs.size());
    auto a = to_bytes(armor_decode(ours, openssh_key_label)->span());
    auto b = to_bytes(armor_decode(theirs, openssh_key_label)->span());
    REQUIRE(a.size() == b.size());
    std::size_t differing = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        differing += a[i] != b[i];
    CHECK(differing <= 8);
    // 70-column lines, like ssh-keygen.
    CHECK(ours.find('\n', 36) == 36 + 70);
}

TEST_CASE("openssh_key_v1: a substitute KDF can only make decryption fail")
{
    key_parse_options options;
    options.kdf = [](byte_span, byte_span, std::uint32_t, mutable_byte_span out) -> result<void> {
        for (auto& b : out)
            b = 0x42;
        return {};
    };
    const auto text = fixture("ed25519_enc_key");
    CHECK(parse_openssh_private_key(text, fixture_passphrase, options).error() == errc::wrong_passphrase);
    options.kdf = [](byte_span, byte_span, std::uint32_t, mutable_byte_span) -> result<void> {
        return errc::invalid_argument;
    };
    CHECK(parse_openssh_private_key(text, fixture_passphrase, options).error() == errc::invalid_argument);
    // Unencrypted files never call it.
    CHECK(parse_openssh_private_key(fixture("ed25519_plain_key"), std::nullopt, options).has_value());
}
