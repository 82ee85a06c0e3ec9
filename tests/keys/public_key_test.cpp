#include "common/keys/public_key.hpp"

#include "common/keys/private_key.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

bytes rsa_blob(byte_span e, byte_span n)
{
    bytes out;
    wire_writer(out).string("ssh-rsa").mpint(e).mpint(n);
    return out;
}

// An odd number of exactly `bits` bits (not a real modulus; blobs are not
// checked for primality, only for size and form).
bytes fake_modulus(std::size_t bits)
{
    bytes n((bits + 7) / 8, 0xa5);
    const unsigned top = bits % 8 == 0 ? 8 : bits % 8;
    n[0] = static_cast<std::uint8_t>(0xff >> (8 - top));
    n[0] |= static_cast<std::uint8_t>(1u << (top - 1));
    n.back() |= 1;
    return n;
}

const bytes e65537 = from_hex("010001");

bytes sig_blob(std::string_view alg, byte_span sig)
{
    bytes out;
    wire_writer(out).string(alg).string(sig);
    return out;
}

// The raw signature inside an SSH signature blob.
bytes inner(byte_span blob)
{
    wire_reader r(blob);
    r.text();
    return to_bytes(r.string());
}

} // namespace

TEST_CASE("public_key: key type names")
{
    CHECK(key_type_name(key_type::ecdsa_p384) == "ecdsa-sha2-nistp384");
    CHECK(key_type_from_name("ssh-rsa").value() == key_type::rsa);
    CHECK(key_type_from_name("ssh-dss").error() == errc::unsupported);
    CHECK(key_type_for_signature_algorithm("rsa-sha2-512").value() == key_type::rsa);
    CHECK(key_type_for_signature_algorithm("ssh-ed25519").value() == key_type::ed25519);
    CHECK_FALSE(key_type_for_signature_algorithm("ssh-ed448").has_value());
    CHECK(signature_algorithms_for(key_type::rsa).size() == 3);
    CHECK(key_type_short_name(key_type::ecdsa_p521) == "ECDSA");
}

TEST_CASE("public_key: RSA size and exponent limits")
{
    CHECK(public_key::from_blob(rsa_blob(e65537, fake_modulus(1024))).has_value());
    CHECK(public_key::from_blob(rsa_blob(e65537, fake_modulus(1023))).error() == errc::invalid_format);
    CHECK(public_key::from_blob(rsa_blob(e65537, fake_modulus(16384))).has_value());
    CHECK(public_key::from_blob(rsa_blob(e65537, fake_modulus(16385))).error() == errc::invalid_format);
    const auto n = fake_modulus(2048);
    CHECK(public_key::from_blob(rsa_blob(from_hex("03"), n)).has_value());
    CHECK_FALSE(public_key::from_blob(rsa_blob(from_hex("01"), n)).has_value());
    CHECK_FALSE(public_key::from_blob(rsa_blob(from_hex("02"), n)).has_value());
    CHECK_FALSE(public_key::from_blob(rsa_blob(from_hex("010000"), n)).has_value());
    CHECK_FALSE(public_key::from_blob(rsa_blob({}, n)).has_value());
    CHECK_FALSE(public_key::from_blob(rsa_blob(n, n)).has_value());
    auto k = public_key::from_blob(rsa_blob(e65537, n));
    REQUIRE(k.has_value());
    CHECK(k->bits() == 2048);
    CHECK(k->type() == key_type::rsa);
}

TEST_CASE("public_key: blobs are re-encoded canonically")
{
    // e as 00 01 00 01: a redundant zero OpenSSH tolerates.
    bytes blob;
    wire_writer(blob).string("ssh-rsa").string(from_hex("00010001")).mpint(fake_modulus(2048));
    auto k = public_key::from_blob(blob);
    REQUIRE(k.has_value());
    CHECK(k->blob() == rsa_blob(e65537, fake_modulus(2048)));
}

TEST_CASE("public_key: malformed blobs")
{
    auto ed = private_key::generate(key_type::ed25519);
    auto ec = private_key::generate(key_type::ecdsa_p256);
    REQUIRE(ed.has_value());
    REQUIRE(ec.has_value());
    for (const auto* key : {&ed->public_part(), &ec->public_part()}) {
        const bytes& blob = key->blob();
        REQUIRE(public_key::from_blob(blob).has_value());
        // Every truncation and any trailing byte is rejected.
        for (std::size_t n = 0; n < blob.size(); ++n)
            CHECK_FALSE(public_key::from_blob(byte_span(blob.data(), n)).has_value());
        auto longer = blob;
        longer.push_back(0);
        CHECK(public_key::from_blob(longer).error() == errc::invalid_format);
    }

    bytes unknown;
    wire_writer(unknown).string("ssh-dss").mpint(e65537);
    CHECK(public_key::from_blob(unknown).error() == errc::unsupported);

    bytes short_ed;
    wire_writer(short_ed).string("ssh-ed25519").string(bytes(31, 1));
    CHECK(public_key::from_blob(short_ed).error() == errc::invalid_format);
}

TEST_CASE("public_key: ECDSA curve identifier and point checks")
{
    auto ec = private_key::generate(key_type::ecdsa_p256);
    REQUIRE(ec.has_value());
    wire_reader r(ec->public_part().blob());
    r.text();
    r.text();
    const bytes q = to_bytes(r.string());
    REQUIRE(q.size() == 65);

    auto blob = [](std::string_view type, std::string_view curve, byte_span point) {
        bytes out;
        wire_writer(out).string(type).string(curve).string(point);
        return out;
    };
    CHECK(public_key::from_blob(blob("ecdsa-sha2-nistp256", "nistp256", q)).has_value());
    // The curve named must be the type's.
    CHECK(public_key::from_blob(blob("ecdsa-sha2-nistp256", "nistp384", q)).error() == errc::invalid_format);
    CHECK(public_key::from_blob(blob("ecdsa-sha2-nistp384", "nistp256", q)).error() == errc::invalid_format);
    // Off the curve.
    auto off = q;
    off.back() ^= 1;
    CHECK(public_key::from_blob(blob("ecdsa-sha2-nistp256", "nistp256", off)).error() == errc::invalid_format);
    // Compressed form and the point at infinity.
    bytes compressed(q.begin(), q.begin() + 33);
    compressed[0] = static_cast<std::uint8_t>(0x02 | (q.back() & 1));
    CHECK(public_key::from_blob(blob("ecdsa-sha2-nistp256", "nistp256", compressed)).error() == errc::invalid_format);
    CHECK(public_key::from_blob(blob("ecdsa-sha2-nistp256", "nistp256", from_hex("00"))).error() ==
          errc::invalid_format);
    // Coordinates outside the field: x = p.
    bytes big = q;
    const auto p256 = from_hex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
    std::copy(p256.begin(), p256.end(), big.begin() + 1);
    CHECK(public_key::from_blob(blob("ecdsa-sha2-nistp256", "nistp256", big)).error() == errc::invalid_format);
}

TEST_CASE("public_key: verify rejects mismatches")
{
    const auto msg = as_bytes("message");
    auto rsa = private_key::generate(key_type::rsa, 2048);
    auto ed = private_key::generate(key_type::ed25519);
    auto ed2 = private_key::generate(key_type::ed25519);
    auto ec = private_key::generate(key_type::ecdsa_p384);
    REQUIRE(rsa.has_value());
    REQUIRE(ed.has_value());
    REQUIRE(ed2.has_value());
    REQUIRE(ec.has_value());
    const auto& rsa_pub = rsa->public_part();

    auto sha1 = rsa->sign("ssh-rsa", msg).value();
    auto sha256 = rsa->sign("rsa-sha2-256", msg).value();
    CHECK(rsa_pub.verify("ssh-rsa", msg, sha1).has_value());
    CHECK(rsa_pub.verify("rsa-sha2-256", msg, sha256).has_value());
    // An ssh-rsa signature offered where rsa-sha2-256 was negotiated, and
    // the reverse.
    CHECK(rsa_pub.verify("rsa-sha2-256", msg, sha1).error() == errc::signature_invalid);
    CHECK(rsa_pub.verify("ssh-rsa", msg, sha256).error() == errc::signature_invalid);
    // A SHA-1 signature relabelled as rsa-sha2-256.
    CHECK(rsa_pub.verify("rsa-sha2-256", msg, sig_blob("rsa-sha2-256", inner(sha1))).error() ==
          errc::signature_invalid);
    CHECK(rsa_pub.verify("rsa-sha2-512", msg, sig_blob("rsa-sha2-512", inner(sha256))).error() ==
          errc::signature_invalid);

    // Algorithm of another key type.
    auto ed_sig = ed->sign("ssh-ed25519", msg).value();
    CHECK(ed->public_part().verify("ssh-ed25519", msg, ed_sig).has_value());
    CHECK(rsa_pub.verify("ssh-ed25519", msg, ed_sig).error() == errc::signature_invalid);
    CHECK(ed->public_part().verify("ecdsa-sha2-nistp256", msg, ed_sig).error() == errc::signature_invalid);
    CHECK(ed->public_part().verify("unknown-alg", msg, ed_sig).error() == errc::signature_invalid);
    // Wrong key of the right type.
    CHECK(ed2->public_part().verify("ssh-ed25519", msg, ed_sig).error() == errc::signature_invalid);
    // Truncated at every byte, and with a trailing byte.
    for (const auto* sig : {&ed_sig, &sha256}) {
        for (std::size_t n = 0; n < sig->size(); ++n) {
            const auto alg = sig == &ed_sig ? "ssh-ed25519" : "rsa-sha2-256";
            const auto& key = sig == &ed_sig ? ed->public_part() : rsa_pub;
            CHECK(key.verify(alg, msg, byte_span(sig->data(), n)).error() == errc::signature_invalid);
        }
    }
    auto trailing = ed_sig;
    trailing.push_back(0);
    CHECK(ed->public_part().verify("ssh-ed25519", msg, trailing).error() == errc::signature_invalid);
    // Ed25519 signatures are exactly 64 bytes.
    auto ed_raw = inner(ed_sig);
    ed_raw.push_back(0);
    CHECK(ed->public_part().verify("ssh-ed25519", msg, sig_blob("ssh-ed25519", ed_raw)).error() ==
          errc::signature_invalid);

    // ECDSA: trailing bytes inside the signature, zero r.
    auto ec_sig = ec->sign("ecdsa-sha2-nistp384", msg).value();
    CHECK(ec->public_part().verify("ecdsa-sha2-nistp384", msg, ec_sig).has_value());
    auto ec_inner = inner(ec_sig);
    ec_inner.push_back(0);
    CHECK(ec->public_part().verify("ecdsa-sha2-nistp384", msg, sig_blob("ecdsa-sha2-nistp384", ec_inner)).error() ==
          errc::signature_invalid);
    bytes zero_r;
    wire_writer(zero_r).mpint({}).mpint(from_hex("01"));
    CHECK(ec->public_part().verify("ecdsa-sha2-nistp384", msg, sig_blob("ecdsa-sha2-nistp384", zero_r)).error() ==
          errc::signature_invalid);

    // The empty key verifies nothing.
    CHECK(public_key().verify("ssh-ed25519", msg, ed_sig).error() == errc::signature_invalid);
}

TEST_CASE("public_key: RSA signatures shorter than the modulus are left-padded")
{
    auto rsa = private_key::generate(key_type::rsa, 1024);
    REQUIRE(rsa.has_value());
    // About one signature in 256 starts with a zero byte: look for one.
    for (int i = 0; i < 5000; ++i) {
        const std::string msg = "message " + std::to_string(i);
        auto sig = inner(rsa->sign("rsa-sha2-256", as_bytes(msg)).value());
        REQUIRE(sig.size() == 128);
        if (sig[0] != 0)
            continue;
        const bytes stripped(sig.begin() + 1, sig.end());
        CHECK(rsa->public_part().verify("rsa-sha2-256", as_bytes(msg), sig_blob("rsa-sha2-256", stripped)).has_value());
        // Longer than the modulus is not accepted.
        bytes longer = sig;
        longer.insert(longer.begin(), 0);
        CHECK(rsa->public_part().verify("rsa-sha2-256", as_bytes(msg), sig_blob("rsa-sha2-256", longer)).error() ==
              errc::signature_invalid);
        return;
    }
    FAIL("no signature with a leading zero byte found");
}

TEST_CASE("public_key: fingerprints")
{
    // The form only; exact values are checked against ssh-keygen's output
    // in key_file_test.
    auto k = private_key::generate(key_type::ed25519);
    REQUIRE(k.has_value());
    const auto fp = k->public_part().fingerprint_sha256();
    CHECK(fp.starts_with("SHA256:"));
    CHECK(fp.size() == 7 + 43); // 32 bytes, unpadded base64
    const auto md5 = k->public_part().fingerprint_md5();
    CHECK(md5.starts_with("MD5:"));
    CHECK(md5.size() == 4 + 16 * 3 - 1);
}
