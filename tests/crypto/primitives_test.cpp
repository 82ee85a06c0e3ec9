#include "common/crypto/primitives.hpp"

#include "tests/crypto/byte_patterns.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace longhaul;
using longhaul::test::counting;

namespace {

bytes chacha_stream(chacha20& c, const std::uint8_t* iv, byte_span in)
{
    bytes out(in.size());
    REQUIRE(c.set_iv(iv));
    REQUIRE(c.apply(in, out.data()));
    return out;
}

} // namespace

// RFC 8439 §2.3.2: the block function, as keystream over zeros.
TEST_CASE("chacha20: RFC 8439 2.3.2 block function")
{
    chacha20 c(counting(0x00, 0x1f));
    std::uint8_t iv[16];
    chacha20::ietf_iv(iv, 1, from_hex("000000090000004a00000000"));
    const bytes zeros(64, 0);
    CHECK(to_hex(chacha_stream(c, iv, zeros)) ==
          "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
          "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e");
}

// RFC 8439 §2.4.2: encryption of the sunscreen text from counter 1.
TEST_CASE("chacha20: RFC 8439 2.4.2 encryption")
{
    chacha20 c(counting(0x00, 0x1f));
    std::uint8_t iv[16];
    chacha20::ietf_iv(iv, 1, from_hex("000000000000004a00000000"));
    const std::string text = "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
                             "future, sunscreen would be it.";
    const std::string expected = "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
                                 "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
                                 "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
                                 "5af90bbf74a35be6b40b8eedf2785e42874d";
    CHECK(to_hex(chacha_stream(c, iv, as_bytes(text))) == expected);

    // The same text fed in pieces continues the stream across calls, and
    // re-seeding the IV restarts it.
    bytes out(text.size());
    REQUIRE(c.set_iv(iv));
    const auto in = as_bytes(text);
    REQUIRE(c.apply(in.first(7), out.data()));
    REQUIRE(c.apply(in.subspan(7, 64), out.data() + 7));
    REQUIRE(c.apply(in.subspan(71), out.data() + 71));
    CHECK(to_hex(out) == expected);

    // Decryption is the same XOR.
    bytes back(out.size());
    REQUIRE(c.set_iv(iv));
    REQUIRE(c.apply(out, back.data()));
    CHECK(as_string_view(back) == text);
}

// RFC 8439 §2.6.2: Poly1305 key generation is block 0 of the keystream.
TEST_CASE("chacha20: RFC 8439 2.6.2 Poly1305 key generation")
{
    chacha20 c(counting(0x80, 0x9f));
    std::uint8_t iv[16];
    chacha20::ietf_iv(iv, 0, from_hex("000000000001020304050607"));
    const bytes zeros(32, 0);
    CHECK(to_hex(chacha_stream(c, iv, zeros)) == "8ad5a08b905f81cc815040274ab29471a833b637e3fd0da508dbb8e2fdd1a646");
}

TEST_CASE("chacha20: the DJB layout is the 64-bit counter beside a 64-bit nonce")
{
    std::uint8_t djb[16];
    chacha20::djb_iv(djb, 1, 0x0102030405060708ull);
    CHECK(to_hex({djb, 16}) == "01000000000000000102030405060708");
    std::uint8_t ietf[16];
    chacha20::ietf_iv(ietf, 1, from_hex("000000000102030405060708"));
    CHECK(to_hex({ietf, 16}) == to_hex({djb, 16}));
}

// RFC 8439 §2.5.2.
TEST_CASE("poly1305: RFC 8439 2.5.2")
{
    poly1305 p;
    const bytes key = from_hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
    std::uint8_t tag[16];
    for (int round = 0; round < 2; ++round) { // the context is reusable with a fresh key
        REQUIRE(p.init(key.data()));
        REQUIRE(p.update(as_bytes("Cryptographic Forum ")));
        REQUIRE(p.update(as_bytes("Research Group")));
        REQUIRE(p.finish(tag));
        CHECK(to_hex({tag, 16}) == "a8061dc1305136c6c22b8baf0c0127a9");
    }
}

namespace {

struct gcm_case {
    const char* name;
    const char* key;
    const char* iv;
    const char* plaintext;
    const char* aad;
    const char* ciphertext;
    const char* tag;
};

constexpr const char* p64 = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                            "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
constexpr const char* p60 = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                            "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
constexpr const char* gcm_aad = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
constexpr const char* k128 = "feffe9928665731c6d6a8f9467308308";
constexpr const char* k256 = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308";
constexpr const char* gcm_iv = "cafebabefacedbaddecaf888";

} // namespace

// The GCM specification's test cases (McGrew & Viega), also in SP 800-38D's
// validation data: 2-4 for AES-128 and 13-16 for AES-256 (96-bit IVs).
TEST_CASE("aes_gcm: GCM specification test cases 2-4 and 13-16")
{
    const gcm_case cases[] = {
        {"2", "00000000000000000000000000000000", "000000000000000000000000", "00000000000000000000000000000000", "",
         "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"},
        {"3", k128, gcm_iv, p64, "",
         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
         "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
         "4d5c2af327cd64a62cf35abd2ba6fab4"},
        {"4", k128, gcm_iv, p60, gcm_aad,
         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
         "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
         "5bc94fbc3221a5db94fae95ae7121a47"},
        {"13", "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", "", "",
         "", "530f8afbc74536b9a963b4f1c4cb738b"},
        {"14", "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
         "00000000000000000000000000000000", "", "cea7403d4d606b6e074ec5d3baf39d18",
         "d0d1c8a799996bf0265b98b5d48ab919"},
        {"15", k256, gcm_iv, p64, "",
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
         "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
         "b094dac5d93471bdec1a502270e3cc6c"},
        {"16", k256, gcm_iv, p60, gcm_aad,
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
         "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
         "76fc6ece0f4e1768cddf8853bb2d551b"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.name);
        aes_gcm gcm(from_hex(c.key));
        const bytes iv = from_hex(c.iv);
        const bytes aad = from_hex(c.aad);
        bytes data = from_hex(c.plaintext);
        std::uint8_t tag[16];
        REQUIRE(gcm.seal(iv.data(), aad, data, tag));
        CHECK(to_hex(data) == c.ciphertext);
        CHECK(to_hex({tag, 16}) == c.tag);

        // The same object opens; a wrong tag or AAD is refused.
        REQUIRE(gcm.open(iv.data(), aad, data, tag));
        CHECK(to_hex(data) == c.plaintext);
        REQUIRE(gcm.seal(iv.data(), aad, data, tag));
        tag[15] ^= 1;
        bytes copy = data;
        CHECK_FALSE(gcm.open(iv.data(), aad, copy, tag));
        tag[15] ^= 1;
        copy = data;
        bytes bad_aad = aad;
        bad_aad.push_back(0);
        CHECK_FALSE(gcm.open(iv.data(), bad_aad, copy, tag));
        copy = data;
        CHECK(gcm.open(iv.data(), aad, copy, tag)); // a failure leaves the object usable
    }
}

// NIST SP 800-38A F.5.1, F.5.3 and F.5.5 (CTR-AES128/192/256.Encrypt).
TEST_CASE("aes_ctr: SP 800-38A F.5.1, F.5.3, F.5.5")
{
    const bytes counter = from_hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    const bytes plaintext = from_hex("6bc1bee22e409f96e93d7e117393172a"
                                     "ae2d8a571e03ac9c9eb76fac45af8e51"
                                     "30c81c46a35ce411e5fbc1191a0a52ef"
                                     "f69f2445df4f9b17ad2b417be66c3710");
    struct {
        const char* name;
        const char* key;
        const char* ciphertext;
    } cases[] = {
        {"F.5.1", "2b7e151628aed2a6abf7158809cf4f3c",
         "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
         "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee"},
        {"F.5.3", "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
         "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94"
         "1e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050"},
        {"F.5.5", "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
         "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
         "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.name);
        aes_ctr ctr(from_hex(c.key));
        bytes out(plaintext.size());
        REQUIRE(ctr.set_iv(counter.data()));
        REQUIRE(ctr.apply(plaintext, out.data()));
        CHECK(to_hex(out) == c.ciphertext);

        // Starting at block 2 directly (addressed keystream) gives the tail.
        std::uint8_t iv2[16];
        aes_ctr::advance_iv(iv2, counter.data(), 2);
        bytes tail(32);
        REQUIRE(ctr.set_iv(iv2));
        REQUIRE(ctr.apply(byte_span(plaintext).subspan(32), tail.data()));
        CHECK(to_hex(tail) == std::string(c.ciphertext).substr(64));
    }
}

TEST_CASE("aes_ctr: advance_iv is a 128-bit big-endian add that matches OpenSSL's counter")
{
    std::uint8_t out[16];
    const bytes low_edge = from_hex("00000000000000fffffffffffffffffe");
    aes_ctr::advance_iv(out, low_edge.data(), 3);
    CHECK(to_hex({out, 16}) == "00000000000001000000000000000001");
    const bytes top = from_hex("ffffffffffffffffffffffffffffffff");
    aes_ctr::advance_iv(out, top.data(), 1);
    CHECK(to_hex({out, 16}) == "00000000000000000000000000000000");
    aes_ctr::advance_iv(out, top.data(), 0);
    CHECK(to_hex({out, 16}) == "ffffffffffffffffffffffffffffffff");

    // Streaming across both carries equals seeking to each block.
    for (const char* start : {"00000000000000fffffffffffffffffd", "fffffffffffffffffffffffffffffffd",
                              "0102030405060708fffffffffffffff0"}) {
        CAPTURE(start);
        const bytes iv = from_hex(start);
        aes_ctr ctr(bytes(16, 0x42));
        const bytes zeros(16 * 8, 0);
        bytes stream(zeros.size());
        REQUIRE(ctr.set_iv(iv.data()));
        REQUIRE(ctr.apply(zeros, stream.data()));
        for (std::uint64_t b = 0; b < 8; ++b) {
            CAPTURE(b);
            std::uint8_t at[16];
            aes_ctr::advance_iv(at, iv.data(), b);
            bytes block(16);
            REQUIRE(ctr.set_iv(at));
            REQUIRE(ctr.apply(byte_span(zeros).first(16), block.data()));
            CHECK(to_hex(block) == to_hex(byte_span(stream).subspan(16 * b, 16)));
        }
    }
}

TEST_CASE("primitives: wrong key sizes are refused at construction")
{
    CHECK_THROWS_AS(chacha20(bytes(16)), std::invalid_argument);
    CHECK_THROWS_AS(aes_ctr(bytes(20)), std::invalid_argument);
    CHECK_THROWS_AS(aes_gcm(bytes(0)), std::invalid_argument);
}
