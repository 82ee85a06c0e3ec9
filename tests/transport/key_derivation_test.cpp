// RFC 4253 §7.2 key derivation, checked against the definition computed
// independently here with the hasher: K1 = HASH(K || H || X || session_id),
// Kn = HASH(K || H || K1 || ... || Kn-1), truncated to the size needed.
#include "common/transport/key_exchange.hpp"

#include "common/crypto/hash.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

bytes reference(hash_alg h, byte_span k, byte_span hh, byte_span sid, char letter, std::size_t size)
{
    bytes out;
    {
        hasher d(h);
        const std::uint8_t x = static_cast<std::uint8_t>(letter);
        d.update(k).update(hh).update(byte_span(&x, 1)).update(sid);
        out = d.finish();
    }
    while (out.size() < size) {
        hasher d(h);
        d.update(k).update(hh).update(out);
        auto more = d.finish();
        out.insert(out.end(), more.begin(), more.end());
    }
    out.resize(size);
    return out;
}

} // namespace

TEST_CASE("key derivation: every letter and size matches the RFC 4253 definition")
{
    bytes k_mpint;
    wire_writer(k_mpint).mpint(from_hex("ff00112233445566778899aabbccddeeff0011223344556677"));
    const bytes h = digest(hash_alg::sha256, as_bytes("exchange hash"));
    const bytes sid = digest(hash_alg::sha256, as_bytes("first exchange hash"));
    for (auto alg : {hash_alg::sha256, hash_alg::sha384, hash_alg::sha512}) {
        for (char letter = 'A'; letter <= 'F'; ++letter) {
            // 12 (GCM IV), 16, 32, 64 (chacha20-poly1305 key: two hash blocks for SHA-256), 100.
            for (std::size_t size : {12u, 16u, 32u, 64u, 100u}) {
                auto got = derive_key(alg, k_mpint, h, sid, letter, size);
                CHECK(to_hex(got.span()) == to_hex(reference(alg, k_mpint, h, sid, letter, size)));
            }
        }
    }
}

TEST_CASE("key derivation: letters, the session id and K all change the output")
{
    bytes k1, k2;
    wire_writer(k1).mpint(from_hex("01"));
    wire_writer(k2).mpint(from_hex("02"));
    const bytes h(32, 7), sid1(32, 1), sid2(32, 2);
    auto a = derive_key(hash_alg::sha256, k1, h, sid1, 'A', 32);
    CHECK_FALSE(equal_constant_time(a, derive_key(hash_alg::sha256, k1, h, sid1, 'B', 32)));
    CHECK_FALSE(equal_constant_time(a, derive_key(hash_alg::sha256, k1, h, sid2, 'A', 32)));
    CHECK_FALSE(equal_constant_time(a, derive_key(hash_alg::sha256, k2, h, sid1, 'A', 32)));
}
