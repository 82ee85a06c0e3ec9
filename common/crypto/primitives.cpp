#include "common/crypto/primitives.hpp"

#include "common/wire.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <climits>
#include <cstring>
#include <stdexcept>

namespace longhaul {

namespace {

// EVP lengths are ints; SSH packets are far smaller, but feeding a larger
// span in slices keeps these wrappers correct for any input.
constexpr std::size_t max_update = std::size_t(1) << 30;

bool cipher_update(EVP_CIPHER_CTX* ctx, std::uint8_t* out, const std::uint8_t* in, std::size_t n) noexcept
{
    while (n > 0) {
        const std::size_t step = n < max_update ? n : max_update;
        int outl = 0;
        if (EVP_CipherUpdate(ctx, out, &outl, in, static_cast<int>(step)) != 1 || std::size_t(outl) != step)
            return false;
        in += step;
        out += step;
        n -= step;
    }
    return true;
}

const char* aes_name(std::size_t key_size, bool gcm)
{
    switch (key_size) {
    case 16: return gcm ? "AES-128-GCM" : "AES-128-CTR";
    case 24: return gcm ? "AES-192-GCM" : "AES-192-CTR";
    case 32: return gcm ? "AES-256-GCM" : "AES-256-CTR";
    }
    throw std::invalid_argument("AES key must be 16, 24 or 32 bytes");
}

// Keys the context once; later messages pass only an IV.
void init_cipher(EVP_CIPHER_CTX* ctx, const EVP_CIPHER* cipher, byte_span key, int enc)
{
    if (EVP_CipherInit_ex2(ctx, cipher, key.data(), nullptr, enc, nullptr) != 1)
        detail::throw_openssl_error("EVP_CipherInit_ex2");
}

} // namespace

// ---- chacha20 ----

chacha20::chacha20(byte_span key) : cipher_(detail::fetch_cipher("ChaCha20")), ctx_(detail::new_cipher_ctx())
{
    if (key.size() != key_size)
        throw std::invalid_argument("ChaCha20 key must be 32 bytes");
    init_cipher(ctx_.get(), cipher_.get(), key, 1);
}

bool chacha20::set_iv(const std::uint8_t* iv16) noexcept
{
    return EVP_CipherInit_ex2(ctx_.get(), nullptr, nullptr, iv16, -1, nullptr) == 1;
}

bool chacha20::apply(byte_span in, std::uint8_t* out) noexcept
{
    return cipher_update(ctx_.get(), out, in.data(), in.size());
}

void chacha20::ietf_iv(std::uint8_t* iv16, std::uint32_t counter, byte_span nonce12) noexcept
{
    for (int i = 0; i < 4; ++i)
        iv16[i] = std::uint8_t(counter >> (8 * i));
    const std::size_t n = nonce12.size() < 12 ? nonce12.size() : 12;
    std::memset(iv16 + 4, 0, 12);
    if (n != 0)
        std::memcpy(iv16 + 4, nonce12.data(), n);
}

void chacha20::djb_iv(std::uint8_t* iv16, std::uint64_t counter, std::uint64_t nonce_be) noexcept
{
    for (int i = 0; i < 8; ++i)
        iv16[i] = std::uint8_t(counter >> (8 * i));
    store_u64(iv16 + 8, nonce_be);
}

// ---- poly1305 ----

poly1305::poly1305() : mac_(detail::fetch_mac("POLY1305")), ctx_(detail::new_mac_ctx(mac_.get())) {}

bool poly1305::init(const std::uint8_t* key32) noexcept
{
    return EVP_MAC_init(ctx_.get(), key32, key_size, nullptr) == 1;
}

bool poly1305::update(byte_span data) noexcept
{
    return data.empty() || EVP_MAC_update(ctx_.get(), data.data(), data.size()) == 1;
}

bool poly1305::finish(std::uint8_t* tag16) noexcept
{
    std::size_t n = 0;
    return EVP_MAC_final(ctx_.get(), tag16, &n, tag_size) == 1 && n == tag_size;
}

// ---- aes_ctr ----

aes_ctr::aes_ctr(byte_span key) : cipher_(detail::fetch_cipher(aes_name(key.size(), false))), ctx_(detail::new_cipher_ctx())
{
    init_cipher(ctx_.get(), cipher_.get(), key, 1);
}

bool aes_ctr::set_iv(const std::uint8_t* iv16) noexcept
{
    return EVP_CipherInit_ex2(ctx_.get(), nullptr, nullptr, iv16, -1, nullptr) == 1;
}

bool aes_ctr::apply(byte_span in, std::uint8_t* out) noexcept
{
    return cipher_update(ctx_.get(), out, in.data(), in.size());
}

void aes_ctr::advance_iv(std::uint8_t* out16, const std::uint8_t* iv16, std::uint64_t blocks) noexcept
{
    // Two 64-bit big-endian halves; the carry out of the low half goes into
    // the high half and out of the high half is dropped (mod 2^128).
    const std::uint64_t lo = load_u64(iv16 + 8);
    const std::uint64_t new_lo = lo + blocks;
    const std::uint64_t hi = load_u64(iv16) + (new_lo < lo ? 1 : 0);
    store_u64(out16, hi);
    store_u64(out16 + 8, new_lo);
}

// ---- aes_gcm ----

aes_gcm::aes_gcm(byte_span key) : cipher_(detail::fetch_cipher(aes_name(key.size(), true))), ctx_(detail::new_cipher_ctx())
{
    init_cipher(ctx_.get(), cipher_.get(), key, 1);
}

bool aes_gcm::begin(const std::uint8_t* iv12, byte_span aad, int enc) noexcept
{
    // GCM's key schedule serves both directions, so switching `enc` with a
    // null key costs nothing. The IV length stays at the 12-byte default.
    if (EVP_CipherInit_ex2(ctx_.get(), nullptr, nullptr, iv12, enc, nullptr) != 1)
        return false;
    if (!aad.empty()) {
        int outl = 0;
        if (aad.size() > max_update || EVP_CipherUpdate(ctx_.get(), nullptr, &outl, aad.data(), int(aad.size())) != 1)
            return false;
    }
    return true;
}

bool aes_gcm::seal(const std::uint8_t* iv12, byte_span aad, mutable_byte_span data, std::uint8_t* tag16) noexcept
{
    if (!begin(iv12, aad, 1) || !cipher_update(ctx_.get(), data.data(), data.data(), data.size()))
        return false;
    int outl = 0;
    std::uint8_t none[16];
    if (EVP_CipherFinal_ex(ctx_.get(), none, &outl) != 1)
        return false;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag16, tag_size),
        OSSL_PARAM_construct_end(),
    };
    return EVP_CIPHER_CTX_get_params(ctx_.get(), params) == 1;
}

bool aes_gcm::open(const std::uint8_t* iv12, byte_span aad, mutable_byte_span data, const std::uint8_t* tag16) noexcept
{
    if (!begin(iv12, aad, 0) || !cipher_update(ctx_.get(), data.data(), data.data(), data.size()))
        return false;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, const_cast<std::uint8_t*>(tag16), tag_size),
        OSSL_PARAM_construct_end(),
    };
    if (EVP_CIPHER_CTX_set_params(ctx_.get(), params) != 1)
        return false;
    // OpenSSL compares the tag in constant time (CRYPTO_memcmp) in Final.
    int outl = 0;
    std::uint8_t none[16];
    return EVP_CipherFinal_ex(ctx_.get(), none, &outl) == 1;
}

} // namespace longhaul
