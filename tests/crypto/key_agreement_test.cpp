#include "common/crypto/key_agreement.hpp"

#include "common/crypto/hash.hpp"

#include <doctest/doctest.h>
#include <openssl/bn.h>

#include <string>

using namespace longhaul;

namespace {

std::unique_ptr<key_agreement> must(result<std::unique_ptr<key_agreement>> r)
{
    REQUIRE(r.has_value());
    return std::move(*r);
}

std::string hex_of(const result<secret_bytes>& r)
{
    REQUIRE(r.has_value());
    return to_hex(r->span());
}

std::string sha256_hex(byte_span b) { return to_hex(digest(hash_alg::sha256, b)); }

// p - 1 + delta for small |delta|, as a magnitude of the same length (p odd
// and far above delta).
bytes p_plus(const dh_group& g, int delta)
{
    bytes v = g.p;
    int carry = delta;
    for (std::size_t i = v.size(); i-- > 0 && carry != 0;) {
        int x = v[i] + carry;
        carry = 0;
        while (x < 0) {
            x += 256;
            --carry;
        }
        while (x > 255) {
            x -= 256;
            ++carry;
        }
        v[i] = static_cast<std::uint8_t>(x);
    }
    return v;
}

} // namespace

// ---------------------------------------------------------------- X25519

TEST_CASE("x25519: RFC 7748 section 6.1 known answer")
{
    const bytes alice_priv = from_hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    const bytes bob_priv = from_hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
    auto alice = must(make_x25519_agreement_from_private(alice_priv));
    auto bob = must(make_x25519_agreement_from_private(bob_priv));
    CHECK(to_hex(alice->public_value()) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
    CHECK(to_hex(bob->public_value()) == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
    const char* shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";
    CHECK(hex_of(alice->derive(bob->public_value())) == shared);
    CHECK(hex_of(bob->derive(alice->public_value())) == shared);
}

TEST_CASE("x25519: fresh keys agree, secret is the raw 32 bytes")
{
    auto a = must(make_x25519_agreement());
    auto b = must(make_x25519_agreement());
    CHECK(a->public_value().size() == 32);
    CHECK(to_hex(a->public_value()) != to_hex(b->public_value()));
    auto ka = a->derive(b->public_value());
    auto kb = b->derive(a->public_value());
    REQUIRE(ka.has_value());
    CHECK(ka->size() == 32);
    CHECK(hex_of(ka) == hex_of(kb));
}

TEST_CASE("x25519: low-order and malformed peer values are refused")
{
    auto a = must(make_x25519_agreement());
    // Points of small order (and non-canonical encodings of them) give an
    // all-zero shared secret.
    const char* low_order[] = {
        "0000000000000000000000000000000000000000000000000000000000000000", // 0
        "0100000000000000000000000000000000000000000000000000000000000000", // 1
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800", // order 8
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157", // order 8
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p - 1
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p + 1
    };
    for (const char* h : low_order) {
        CAPTURE(h);
        CHECK(a->derive(from_hex(h)).error() == errc::invalid_argument);
    }
    bytes good(a->public_value().begin(), a->public_value().end());
    CHECK(a->derive(byte_span(good).first(31)).error() == errc::invalid_argument);
    good.push_back(0);
    CHECK(a->derive(good).error() == errc::invalid_argument);
    CHECK(a->derive({}).error() == errc::invalid_argument);
    CHECK(make_x25519_agreement_from_private(bytes(31, 1)).error() == errc::invalid_argument);
}

// ---------------------------------------------------------------- ECDH

namespace {

struct ecdh_kat {
    ecdh_curve curve;
    const char* i;   // initiator private key
    const char* gi;  // initiator public point, uncompressed
    const char* r;   // responder private key
    const char* gr;  // responder public point, uncompressed
    const char* gir; // shared X coordinate
};

// RFC 5903 §8.1, §8.2 and §8.3.
const ecdh_kat rfc5903[] = {
    {ecdh_curve::p256, "C88F01F510D9AC3F70A292DAA2316DE544E9AAB8AFE84049C62A9C57862D1433",
     "04DAD0B65394221CF9B051E1FECA5787D098DFE637FC90B9EF945D0C3772581180"
     "5271A0461CDB8252D61F1C456FA3E59AB1F45B33ACCF5F58389E0577B8990BB3",
     "C6EF9C5D78AE012A011164ACB397CE2088685D8F06BF9BE0B283AB46476BEE53",
     "04D12DFB5289C8D4F81208B70270398C342296970A0BCCB74C736FC7554494BF63"
     "56FBF3CA366CC23E8157854C13C58D6AAC23F046ADA30F8353E74F33039872AB",
     "D6840F6B42F6EDAFD13116E0E12565202FEF8E9ECE7DCE03812464D04B9442DE"},
    {ecdh_curve::p384,
     "099F3C7034D4A2C699884D73A375A67F7624EF7C6B3C0F160647B67414DCE655E35B538041E649EE3FAEF896783AB194",
     "04667842D7D180AC2CDE6F74F37551F55755C7645C20EF73E31634FE72B4C55EE6DE3AC808ACB4BDB4C88732AEE95F41AA"
     "9482ED1FC0EEB9CAFC4984625CCFC23F65032149E0E144ADA024181535A0F38EEB9FCFF3C2C947DAE69B4C634573A81C",
     "41CB0779B4BDB85D47846725FBEC3C9430FAB46CC8DC5060855CC9BDA0AA2942E0308312916B8ED2960E4BD55A7448FC",
     "04E558DBEF53EECDE3D3FCCFC1AEA08A89A987475D12FD950D83CFA41732BC509D0D1AC43A0336DEF96FDA41D0774A3571"
     "DCFBEC7AACF3196472169E838430367F66EEBE3C6E70C416DD5F0C68759DD1FFF83FA40142209DFF5EAAD96DB9E6386C",
     "11187331C279962D93D604243FD592CB9D0A926F422E47187521287E7156C5C4D603135569B9E9D09CF5D4A270F59746"},
    {ecdh_curve::p521,
     "0037ADE9319A89F4DABDB3EF411AACCCA5123C61ACAB57B5393DCE47608172A095AA85A30FE1C2952C6771D937BA9777F5957B2639BAB07246"
     "2F68C27A57382D4A52",
     "040015417E84DBF28C0AD3C278713349DC7DF153C897A1891BD98BAB4357C9ECBEE1E3BF42E00B8E380AEAE57C2D107564941885942AF5A7F4"
     "601723C4195D176CED3E017CAE20B6641D2EEB695786D8C946146239D099E18E1D5A514C739D7CB4A10AD8A788015AC405D7799DC75E7B7D5B"
     "6CF2261A6A7F1507438BF01BEB6CA3926F9582",
     "0145BA99A847AF43793FDD0E872E7CDFA16BE30FDC780F97BCCC3F078380201E9C677D600B343757A3BDBF2A3163E4C2F869CCA7458AA4A4EF"
     "FC311F5CB151685EB9",
     "0400D0B3975AC4B799F5BEA16D5E13E9AF971D5E9B984C9F39728B5E5739735A219B97C356436ADC6E95BB0352F6BE64A6C2912D4EF2D0433C"
     "ED2B6171640012D9460F015C68226383956E3BD066E797B623C27CE0EAC2F551A10C2C724D9852077B87220B6536C5C408A1D2AEBB8E86D678"
     "AE49CB57091F4732296579AB44FCD17F0FC56A",
     "01144C7D79AE6956BC8EDB8E7C787C4521CB086FA64407F97894E5E6B2D79B04D1427E73CA4BAA240A34786859810C06B3C715A3A8CC3151F2"
     "BEE417996D19F3DDEA"},
};

struct cavs_kat {
    ecdh_curve curve;
    const char* d_iut;  // our private key
    const char* q_cavs; // peer point, uncompressed
    const char* z;      // shared X coordinate
};

// NIST CAVS 14.1 ECC CDH primitive test vectors, COUNT = 0 of each curve.
const cavs_kat cavs[] = {
    {ecdh_curve::p256, "7d7dc5f71eb29ddaf80d6214632eeae03d9058af1fb6d22ed80badb62bc1a534",
     "04700c48f77f56584c5cc632ca65640db91b6bacce3a4df6b42ce7cc838833d287"
     "db71e509e3fd9b060ddb20ba5c51dcc5948d46fbf640dfe0441782cab85fa4ac",
     "46fc62106420ff012e54a434fbdd2d25ccc5852060561e68040dd7778997bd7b"},
    {ecdh_curve::p384,
     "3cc3122a68f0d95027ad38c067916ba0eb8c38894d22e1b15618b6818a661774ad463b205da88cf699ab4d43c9cf98a1",
     "04a7c76b970c3b5fe8b05d2838ae04ab47697b9eaf52e764592efda27fe7513272734466b400091adbf2d68c58e0c50066"
     "ac68f19f2e1cb879aed43a9969b91a0839c4c38a49749b661efedf243451915ed0905a32b060992b468c64766fc8437a",
     "5f9d29dc5e31a163060356213669c8ce132e22f57c9a04f40ba7fcead493b457e5621e766c40a2e3d4d6a04b25e533f1"},
    {ecdh_curve::p521,
     "017eecc07ab4b329068fba65e56a1f8890aa935e57134ae0ffcce802735151f4eac6564f6ee9974c5e6887a1fefee5743ae2241bfeb95d5ce3"
     "1ddcb6f9edb4d6fc47",
     "0400685a48e86c79f0f0875f7bc18d25eb5fc8c0b07e5da4f4370f3a9490340854334b1e1b87fa395464c60626124a4e70d0f785601d37c098"
     "70ebf176666877a2046d01ba52c56fc8776d9e8f5db4f0cc27636d0b741bbe05400697942e80b739884a83bde99e0f6716939e632bc8986fa1"
     "8dccd443a348b6c3e522497955a4f3c302f676",
     "005fc70477c3e63bc3954bd0df3ea0d1f41ee21746ed95fc5e1fdf90930d5e136672d72cc770742d1711c3c3a4c334a0ad9759436a4d3c5bf6"
     "e74b9578fac148c831"},
};

std::string lower(std::string s)
{
    for (auto& c : s)
        if (c >= 'A' && c <= 'F')
            c = static_cast<char>(c - 'A' + 'a');
    return s;
}

} // namespace

TEST_CASE("ecdh: RFC 5903 known answers on P-256, P-384 and P-521")
{
    for (const auto& v : rfc5903) {
        CAPTURE(static_cast<int>(v.curve));
        auto i = must(make_ecdh_agreement_from_private(v.curve, from_hex(v.i)));
        auto r = must(make_ecdh_agreement_from_private(v.curve, from_hex(v.r)));
        CHECK(to_hex(i->public_value()) == lower(v.gi));
        CHECK(to_hex(r->public_value()) == lower(v.gr));
        CHECK(hex_of(i->derive(from_hex(v.gr))) == lower(v.gir));
        CHECK(hex_of(r->derive(from_hex(v.gi))) == lower(v.gir));
    }
}

TEST_CASE("ecdh: NIST CAVS known answers, the secret keeps its leading zero byte")
{
    for (const auto& v : cavs) {
        CAPTURE(static_cast<int>(v.curve));
        auto ours = must(make_ecdh_agreement_from_private(v.curve, from_hex(v.d_iut)));
        auto k = ours->derive(from_hex(v.q_cavs));
        CHECK(hex_of(k) == v.z);
        CHECK(k->size() == ecdh_field_bytes(v.curve));
    }
}

TEST_CASE("ecdh: fresh keys agree on every curve")
{
    for (auto curve : {ecdh_curve::p256, ecdh_curve::p384, ecdh_curve::p521}) {
        CAPTURE(static_cast<int>(curve));
        auto a = must(make_ecdh_agreement(curve));
        auto b = must(make_ecdh_agreement(curve));
        const std::size_t n = ecdh_field_bytes(curve);
        REQUIRE(a->public_value().size() == 1 + 2 * n);
        CHECK(a->public_value()[0] == 0x04);
        auto ka = a->derive(b->public_value());
        REQUIRE(ka.has_value());
        CHECK(ka->size() == n);
        CHECK(hex_of(ka) == hex_of(b->derive(a->public_value())));
    }
}

TEST_CASE("ecdh: invalid peer points are refused")
{
    for (const auto& v : rfc5903) {
        CAPTURE(static_cast<int>(v.curve));
        auto ours = must(make_ecdh_agreement(v.curve));
        const bytes good = from_hex(v.gr);
        const std::size_t n = ecdh_field_bytes(v.curve);

        bytes off_curve = good;
        off_curve.back() ^= 1;
        CHECK(ours->derive(off_curve).error() == errc::invalid_argument);

        CHECK(ours->derive(byte_span(good).first(good.size() - 1)).error() == errc::invalid_argument);
        bytes longer = good;
        longer.push_back(0);
        CHECK(ours->derive(longer).error() == errc::invalid_argument);
        CHECK(ours->derive({}).error() == errc::invalid_argument);

        // The point at infinity (SEC1 encodes it as one zero byte), and the
        // all-zero coordinates, which are not on these curves.
        const std::uint8_t infinity[] = {0};
        CHECK(ours->derive(infinity).error() == errc::invalid_argument);
        bytes zeros(good.size(), 0);
        zeros[0] = 0x04;
        CHECK(ours->derive(zeros).error() == errc::invalid_argument);
        // Coordinates past the field prime.
        bytes ones(good.size(), 0xff);
        ones[0] = 0x04;
        CHECK(ours->derive(ones).error() == errc::invalid_argument);

        // Compressed (0x02/0x03 || X) and hybrid (0x06/0x07) forms are not
        // accepted: RFC 5656 needs uncompressed points only and OpenSSH sends
        // nothing else.
        bytes compressed(good.begin(), good.begin() + 1 + static_cast<std::ptrdiff_t>(n));
        compressed[0] = static_cast<std::uint8_t>(0x02 | (good.back() & 1));
        CHECK(ours->derive(compressed).error() == errc::invalid_argument);
        bytes hybrid = good;
        hybrid[0] = static_cast<std::uint8_t>(0x06 | (good.back() & 1));
        CHECK(ours->derive(hybrid).error() == errc::invalid_argument);

        // The agreement is still usable after refusals.
        CHECK(ours->derive(good).has_value());
    }
    // The invalid public key case of NIST CAVS 14.1 P-384 (X changed).
    auto p384 = must(make_ecdh_agreement(ecdh_curve::p384));
    CHECK(p384->derive(from_hex("04fb952e2d9ac0c20c6cc48fb225c2ad154f53c8750b003fd3b4ed8ed1dc0defac61bcdde02a2bcfee7067d"
                                "75d342ed2b0f1828205baece82d1b267d0d7ff2f9c9e15b69a72df47058a97f3891005d1fb38858f5603de8"
                                "40e591dfa4f6e7d489e1"))
              .error() == errc::invalid_argument);
    // A point of another curve.
    auto p256 = must(make_ecdh_agreement(ecdh_curve::p256));
    auto other = must(make_ecdh_agreement(ecdh_curve::p384));
    CHECK(p256->derive(other->public_value()).error() == errc::invalid_argument);
}

TEST_CASE("ecdh: private scalars out of range are refused")
{
    CHECK(make_ecdh_agreement_from_private(ecdh_curve::p256, {}).error() == errc::invalid_argument);
    CHECK(make_ecdh_agreement_from_private(ecdh_curve::p256, bytes(32, 0)).error() == errc::invalid_argument);
    CHECK(make_ecdh_agreement_from_private(ecdh_curve::p256, bytes(33, 1)).error() == errc::invalid_argument);
    // n, the order of P-256.
    CHECK(make_ecdh_agreement_from_private(
              ecdh_curve::p256, from_hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"))
              .error() == errc::invalid_argument);
    // 1 is a valid (if foolish) scalar: the public point is the generator.
    const std::uint8_t one[] = {1};
    auto g = must(make_ecdh_agreement_from_private(ecdh_curve::p256, one));
    CHECK(to_hex(g->public_value()) ==
          "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
          "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5");
}

// ---------------------------------------------------------------- MODP

TEST_CASE("dh: the RFC 3526 constants match OpenSSL's copies")
{
    struct {
        const dh_group& group;
        BIGNUM* (*openssl)(BIGNUM*);
        std::size_t bits;
    } cases[] = {
        {modp_group14(), BN_get_rfc3526_prime_2048, 2048},
        {modp_group16(), BN_get_rfc3526_prime_4096, 4096},
        {modp_group18(), BN_get_rfc3526_prime_8192, 8192},
    };
    for (const auto& c : cases) {
        BIGNUM* p = c.openssl(nullptr);
        REQUIRE(p != nullptr);
        bytes expect(static_cast<std::size_t>(BN_num_bytes(p)));
        BN_bn2bin(p, expect.data());
        BN_free(p);
        CHECK(to_hex(c.group.p) == to_hex(expect));
        CHECK(dh_group_bits(c.group) == c.bits);
        CHECK(to_hex(c.group.g) == "02");
    }
}

TEST_CASE("dh: fixed exponents give the known answer on every group")
{
    // Independent values: y = 2^x mod p and K computed with Python's pow()
    // for two 512-bit exponents; compared by SHA-256 to keep the table short.
    const bytes xa = from_hex("3d9399418cecb2a2b36d65f6aeb03270387767c939b00d0d69f9fbd2da7aaf58"
                              "fdbf62149f3ac53c3f6d5bd56fb139e34e86aace842273c3dd8d1fa4b1511e0a");
    const bytes xb = from_hex("f148676b600878f731cb28b493017506416ffa6b6f06e15ab307d2ea86aa78f4"
                              "454533a3bc0bc549833ff4ab05294b34c54d904496b4e700d0044c6eea18edb5");
    struct {
        const dh_group& group;
        const char* ya;
        const char* yb;
        const char* k;
    } cases[] = {
        {modp_group14(), "64c4fcd8a48deb3a0389c539cbfaa8889422252634ceb7e4a376a9f9d3b688fe",
         "f80f0fc8727a8dc327b87a40272927729ea5b4e7fafbcd58bb15355e40dccae1",
         "00e84471c06840cf9534b3bb5aa0052b5885f0d6ce52c5ac8cd21204a5f90ac4"},
        {modp_group16(), "1dfb61e90b495046297f8b0970ec8a998c54063b17027da19e7c93dc641a2a51",
         "84a78ed741922f87920b5566079c1fce63649c61e9c02b462721e9098b40c954",
         "d71aeb3b57faff7b41586fc6f84b92e08ff020efc46803be903dd46d6b7cda6c"},
        {modp_group18(), "5e9052886e0c5516209240a55710a5430b542957dc3824151dbb36a727668176",
         "47b74e1a89ca467430c694949d755daa134eee0d60feb9b4339429bcbefa3ed4",
         "17f51f88d567385d3743bfb2fbb9d44f05c16e4d3058802230ad592fd9a71373"},
    };
    for (const auto& c : cases) {
        CAPTURE(dh_group_bits(c.group));
        auto a = must(make_dh_agreement_from_private(c.group, xa));
        auto b = must(make_dh_agreement_from_private(c.group, xb));
        CHECK(sha256_hex(a->public_value()) == c.ya);
        CHECK(sha256_hex(b->public_value()) == c.yb);
        auto ka = a->derive(b->public_value());
        auto kb = b->derive(a->public_value());
        REQUIRE(ka.has_value());
        REQUIRE(kb.has_value());
        CHECK(sha256_hex(ka->span()) == c.k);
        CHECK(sha256_hex(kb->span()) == c.k);
    }
}

TEST_CASE("dh: fresh keys agree on every group")
{
    for (const dh_group* group : {&modp_group14(), &modp_group16(), &modp_group18()}) {
        const std::size_t bits = dh_group_bits(*group);
        CAPTURE(bits);
        // chacha20-poly1305 (64-byte key) is the largest need OpenSSH has.
        auto private_bits = dh_private_exponent_bits(64, bits);
        REQUIRE(private_bits.has_value());
        CHECK(*private_bits == 1024);
        auto a = must(make_dh_agreement(*group, *private_bits));
        auto b = must(make_dh_agreement(*group, *private_bits));
        CHECK(magnitude_bits(a->public_value()) <= bits);
        CHECK(a->public_value()[0] != 0);
        auto ka = a->derive(b->public_value());
        auto kb = b->derive(a->public_value());
        REQUIRE(ka.has_value());
        CHECK(hex_of(ka) == hex_of(kb));
        // Stripped magnitude: no leading zero byte.
        CHECK(ka->span()[0] != 0);
    }
    // The smallest exponent OpenSSH uses, on the largest group.
    auto a = must(make_dh_agreement(modp_group18(), 512));
    auto b = must(make_dh_agreement(modp_group18(), 512));
    CHECK(hex_of(a->derive(b->public_value())) == hex_of(b->derive(a->public_value())));
}

TEST_CASE("dh: degenerate peer values are refused")
{
    const dh_group& g = modp_group14();
    auto a = must(make_dh_agreement(g, 512));
    const std::uint8_t zero[] = {0}, one[] = {1}, two[] = {2}, three[] = {3};
    CHECK(a->derive({}).error() == errc::invalid_argument);   // 0
    CHECK(a->derive(zero).error() == errc::invalid_argument); // 0 with a zero byte
    CHECK(a->derive(one).error() == errc::invalid_argument);
    CHECK(a->derive(two).error() == errc::invalid_argument);   // one bit set
    CHECK(a->derive(three).error() == errc::invalid_argument); // two bits set
    CHECK(a->derive(p_plus(g, -1)).error() == errc::invalid_argument);
    CHECK(a->derive(g.p).error() == errc::invalid_argument);
    CHECK(a->derive(p_plus(g, 1)).error() == errc::invalid_argument);
    bytes bigger = g.p;
    bigger.insert(bigger.begin(), 1);
    CHECK(a->derive(bigger).error() == errc::invalid_argument);
    bytes power_of_two(g.p.size(), 0);
    power_of_two[0] = 0x40;
    CHECK(a->derive(power_of_two).error() == errc::invalid_argument);

    // p - 2 is the largest acceptable value; 15 the smallest with four bits.
    CHECK(a->derive(p_plus(g, -2)).has_value());
    const std::uint8_t fifteen[] = {15};
    CHECK(a->derive(fifteen).has_value());
    // Leading zero bytes are harmless.
    auto b = must(make_dh_agreement(g, 512));
    bytes padded(b->public_value().begin(), b->public_value().end());
    padded.insert(padded.begin(), 3, 0);
    CHECK(hex_of(a->derive(padded)) == hex_of(a->derive(b->public_value())));
}

TEST_CASE("dh: unusable groups and exponent sizes are refused")
{
    const dh_group& g = modp_group14();
    CHECK(make_dh_agreement(g, 256).error() == errc::invalid_argument);
    CHECK(make_dh_agreement(g, 2048).error() == errc::invalid_argument);
    CHECK(make_dh_agreement(g, 0).error() == errc::invalid_argument);
    CHECK(make_dh_agreement(g, 2047).has_value());

    dh_group even = g;
    even.p.back() ^= 1;
    CHECK(make_dh_agreement(even, 512).error() == errc::invalid_argument);
    CHECK(make_dh_agreement(dh_group{g.p, bytes{1}}, 512).error() == errc::invalid_argument);
    CHECK(make_dh_agreement(dh_group{g.p, bytes{}}, 512).error() == errc::invalid_argument);
    CHECK(make_dh_agreement(dh_group{g.p, p_plus(g, -1)}, 512).error() == errc::invalid_argument);
    CHECK(make_dh_agreement(dh_group{g.p, g.p}, 512).error() == errc::invalid_argument);
    CHECK(make_dh_agreement(dh_group{bytes(g.p.begin(), g.p.begin() + 64), bytes{2}}, 256).error() ==
          errc::invalid_argument);
    CHECK(make_dh_agreement(dh_group{}, 512).error() == errc::invalid_argument);

    // Exponent 2 would give g^x = 4, which has one bit set.
    const std::uint8_t two[] = {2};
    CHECK(make_dh_agreement_from_private(g, two).error() == errc::invalid_argument);
    const std::uint8_t one[] = {1};
    CHECK(make_dh_agreement_from_private(g, one).error() == errc::invalid_argument);
    CHECK(make_dh_agreement_from_private(g, g.p).error() == errc::invalid_argument);
}

TEST_CASE("dh: OpenSSH's private exponent sizes")
{
    CHECK(*dh_private_exponent_bits(64, 2048) == 1024); // chacha20-poly1305, hmac-sha2-512
    CHECK(*dh_private_exponent_bits(32, 2048) == 512);  // aes256-gcm, hmac-sha2-256
    CHECK(*dh_private_exponent_bits(16, 8192) == 512);  // aes128-ctr: the 256-bit floor
    CHECK(*dh_private_exponent_bits(0, 2048) == 512);
    CHECK(*dh_private_exponent_bits(64, 8192) == 1024);
    CHECK(*dh_private_exponent_bits(128, 2048) == 2047); // 2 * need == bits(p): capped
    CHECK(dh_private_exponent_bits(129, 2048).error() == errc::invalid_argument);
    CHECK(dh_private_exponent_bits(32, 0).error() == errc::invalid_argument);
}

TEST_CASE("dh: magnitude_bits")
{
    CHECK(magnitude_bits({}) == 0);
    const std::uint8_t z[] = {0, 0}, one[] = {0, 1}, big[] = {0x80, 0}, odd[] = {0, 0x7f, 0xff};
    CHECK(magnitude_bits(z) == 0);
    CHECK(magnitude_bits(one) == 1);
    CHECK(magnitude_bits(big) == 16);
    CHECK(magnitude_bits(odd) == 15);
}
