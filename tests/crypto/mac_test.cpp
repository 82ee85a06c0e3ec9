#include "common/crypto/mac.hpp"

#include "tests/crypto/byte_patterns.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace longhaul;
using longhaul::test::counting;

namespace {

bytes repeat(std::uint8_t b, std::size_t n) { return bytes(n, b); }

struct hmac_case {
    bytes key;
    bytes data;
    const char* sha256;
    const char* sha512;
};

} // namespace

// RFC 4231 test cases 1-4, 6 and 7 (case 5 tests truncation, which SSH does not use).
TEST_CASE("hmac: RFC 4231 HMAC-SHA-256 and HMAC-SHA-512")
{
    const std::string big_key_text = "Test Using Larger Than Block-Size Key - Hash Key First";
    const std::string big_data_text =
        "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be "
        "hashed before being used by the HMAC algorithm.";
    const hmac_case cases[] = {
        {repeat(0x0b, 20), to_bytes(as_bytes("Hi There")),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
         "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
         "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"},
        {to_bytes(as_bytes("Jefe")), to_bytes(as_bytes("what do ya want for nothing?")),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
         "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
         "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"},
        {repeat(0xaa, 20), repeat(0xdd, 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
         "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39"
         "bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"},
        {counting(0x01, 0x19), repeat(0xcd, 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
         "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3db"
         "a91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd"},
        {repeat(0xaa, 131), to_bytes(as_bytes(big_key_text)),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
         "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f352"
         "6b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"},
        {repeat(0xaa, 131), to_bytes(as_bytes(big_data_text)),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
         "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944"
         "b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"},
    };
    int n = 0;
    for (const auto& c : cases) {
        CAPTURE(++n);
        CHECK(to_hex(hmac_digest(hash_alg::sha256, c.key, c.data)) == c.sha256);
        CHECK(to_hex(hmac_digest(hash_alg::sha512, c.key, c.data)) == c.sha512);
    }
}

// RFC 2202 HMAC-SHA-1 test cases 1-4, 6 and 7.
TEST_CASE("hmac: RFC 2202 HMAC-SHA-1")
{
    struct {
        bytes key;
        bytes data;
        const char* mac;
    } cases[] = {
        {repeat(0x0b, 20), to_bytes(as_bytes("Hi There")), "b617318655057264e28bc0b6fb378c8ef146be00"},
        {to_bytes(as_bytes("Jefe")), to_bytes(as_bytes("what do ya want for nothing?")),
         "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"},
        {repeat(0xaa, 20), repeat(0xdd, 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"},
        {counting(0x01, 0x19), repeat(0xcd, 50), "4c9007f4026250c6bc8414f9bf50c86c2d7235da"},
        {repeat(0xaa, 80), to_bytes(as_bytes("Test Using Larger Than Block-Size Key - Hash Key First")),
         "aa4ae5e15272d00e95705637ce8a3b55ed402112"},
        {repeat(0xaa, 80),
         to_bytes(as_bytes("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data")),
         "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"},
    };
    int n = 0;
    for (const auto& c : cases) {
        CAPTURE(++n);
        CHECK(to_hex(hmac_digest(hash_alg::sha1, c.key, c.data)) == c.mac);
    }
}

TEST_CASE("hmac: one object serves many messages, split anywhere")
{
    const bytes key = repeat(0x0b, 20);
    hmac h(hash_alg::sha256, key);
    CHECK(h.size() == 32);
    const auto data = as_bytes("Hi There");
    for (std::size_t split = 0; split <= data.size(); ++split) {
        CAPTURE(split);
        bytes out(h.size());
        REQUIRE(h.begin());
        REQUIRE(h.update(data.first(split)));
        REQUIRE(h.update(data.subspan(split)));
        REQUIRE(h.finish(out.data()));
        CHECK(to_hex(out) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    }
}

TEST_CASE("hmac: empty key and empty message")
{
    // Independent of RFC vectors: an empty key equals an all-zero block key.
    CHECK(hmac_digest(hash_alg::sha256, {}, as_bytes("x")) == hmac_digest(hash_alg::sha256, bytes(64, 0), as_bytes("x")));
    CHECK(hmac_digest(hash_alg::sha512, as_bytes("k"), {}).size() == 64);
}
