#include "common/keys/bcrypt_pbkdf.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/blowfish.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace longhaul {

namespace {

constexpr char magic_text[] = "OxychromaticBlowfishSwatDynamite";
static_assert(sizeof(magic_text) - 1 == bcrypt_hash_size);

// A SHA-512 digest in a buffer that is wiped when it goes out of scope.
struct sha512_block {
    std::array<std::uint8_t, 64> v{};
    ~sha512_block() { cleanse(v.data(), v.size()); }
};

} // namespace

void bcrypt_hash(const std::uint8_t sha2_password[64], const std::uint8_t sha2_salt[64],
                 std::uint8_t out[bcrypt_hash_size]) noexcept
{
    const byte_span pass(sha2_password, 64);
    const byte_span salt(sha2_salt, 64);

    blowfish state;
    state.expand_state(salt, pass);
    for (int i = 0; i < 64; ++i) {
        state.expand0_state(salt);
        state.expand0_state(pass);
    }

    constexpr std::size_t words = bcrypt_hash_size / 4;
    std::uint32_t cdata[words];
    std::size_t pos = 0;
    for (auto& w : cdata)
        w = blowfish_stream_word(as_bytes(std::string_view(magic_text, bcrypt_hash_size)), pos);
    for (int i = 0; i < 64; ++i)
        for (std::size_t j = 0; j < words; j += 2)
            state.encrypt(cdata[j], cdata[j + 1]);

    // The reference emits the words little-endian (unlike the big-endian
    // input): kept as is, since the output must match it bit for bit.
    for (std::size_t i = 0; i < words; ++i) {
        out[4 * i + 0] = std::uint8_t(cdata[i]);
        out[4 * i + 1] = std::uint8_t(cdata[i] >> 8);
        out[4 * i + 2] = std::uint8_t(cdata[i] >> 16);
        out[4 * i + 3] = std::uint8_t(cdata[i] >> 24);
    }
    cleanse(cdata, sizeof(cdata));
}

result<void> bcrypt_pbkdf(byte_span password, byte_span salt, std::uint32_t rounds, mutable_byte_span out)
{
    if (rounds < 1 || password.empty() || salt.empty() || salt.size() > (std::size_t(1) << 20) || out.empty() ||
        out.size() > bcrypt_pbkdf_max_output)
        return errc::invalid_argument;

    const std::size_t stride = (out.size() + bcrypt_hash_size - 1) / bcrypt_hash_size;
    const std::size_t per_block = (out.size() + stride - 1) / stride;

    sha512_block sha2_pass;
    hasher(hash_alg::sha512).update(password).finish_into(sha2_pass.v);

    hasher salt_hash(hash_alg::sha512);
    sha512_block sha2_salt;
    std::array<std::uint8_t, bcrypt_hash_size> block{}, acc{};
    std::size_t left = out.size();

    for (std::uint32_t count = 1; left > 0; ++count) {
        std::uint8_t counter[4];
        store_u32(counter, count);
        salt_hash.reset();
        salt_hash.update(salt).update(byte_span(counter, 4)).finish_into(sha2_salt.v);

        bcrypt_hash(sha2_pass.v.data(), sha2_salt.v.data(), block.data());
        acc = block;
        for (std::uint32_t r = 1; r < rounds; ++r) {
            salt_hash.reset();
            salt_hash.update(block).finish_into(sha2_salt.v);
            bcrypt_hash(sha2_pass.v.data(), sha2_salt.v.data(), block.data());
            for (std::size_t i = 0; i < acc.size(); ++i)
                acc[i] ^= block[i];
        }

        // Interleave: byte i of this block goes to i * stride + (count - 1).
        const std::size_t take = std::min(per_block, left);
        std::size_t i = 0;
        for (; i < take; ++i) {
            const std::size_t dest = i * stride + (count - 1);
            if (dest >= out.size())
                break;
            out[dest] = acc[i];
        }
        left -= i;
    }
    cleanse(block.data(), block.size());
    cleanse(acc.data(), acc.size());
    return {};
}

} // namespace longhaul
