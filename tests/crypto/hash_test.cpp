#include "common/crypto/hash.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace longhaul;

// FIPS 180-2 appendix examples, RFC 1321 for MD5.
TEST_CASE("hash: one-shot digests of \"abc\"")
{
    const auto abc = as_bytes("abc");
    CHECK(to_hex(digest(hash_alg::sha1, abc)) == "a9993e364706816aba3e25717850c26c9cd0d89d");
    CHECK(to_hex(digest(hash_alg::sha256, abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(to_hex(digest(hash_alg::sha384, abc)) ==
          "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7");
    CHECK(to_hex(digest(hash_alg::sha512, abc)) ==
          "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
          "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
    CHECK(to_hex(digest(hash_alg::md5, abc)) == "900150983cd24fb0d6963f7d28e17f72");
}

TEST_CASE("hash: empty input and the two-block message")
{
    CHECK(to_hex(digest(hash_alg::sha256, {})) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(to_hex(digest(hash_alg::sha256, as_bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("hash: incremental updates equal one shot, and reset reuses the hasher")
{
    // One million 'a' (FIPS 180-2), fed in uneven pieces.
    const std::string chunk(999, 'a');
    hasher h(hash_alg::sha256);
    std::size_t fed = 0;
    while (fed + chunk.size() <= 1000000) {
        h.update(chunk);
        fed += chunk.size();
    }
    h.update(std::string(1000000 - fed, 'a'));
    CHECK(to_hex(h.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    h.reset();
    h.update("ab").update("c");
    CHECK(to_hex(h.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(h.size() == 32);
    CHECK(digest_size(hash_alg::sha512) == 64);
    CHECK(digest_size(hash_alg::sha1) == 20);
}

TEST_CASE("hash: moved hasher keeps working")
{
    hasher a(hash_alg::sha1);
    a.update("a");
    hasher b(std::move(a));
    b.update("bc");
    CHECK(to_hex(b.finish()) == "a9993e364706816aba3e25717850c26c9cd0d89d");
}
