#include "common/keys/key_cipher.hpp"

#include "common/keys/evp_util.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <array>
#include <cstring>

namespace longhaul::detail {

namespace {

constexpr std::array<key_cipher, 11> ciphers = {{
    {"none", 0, 0, 8, 0},
    {"3des-cbc", 24, 8, 8, 0},
    {"aes128-ctr", 16, 16, 16, 0},
    {"aes192-ctr", 24, 16, 16, 0},
    {"aes256-ctr", 32, 16, 16, 0},
    {"aes128-cbc", 16, 16, 16, 0},
    {"aes192-cbc", 24, 16, 16, 0},
    {"aes256-cbc", 32, 16, 16, 0},
    {"aes128-gcm@openssh.com", 16, 12, 16, 16},
    {"aes256-gcm@openssh.com", 32, 12, 16, 16},
    // Two 256-bit ChaCha20 keys (only the first is used without AAD), no IV:
    // the "sequence number" of a key file is zero.
    {"chacha20-poly1305@openssh.com", 64, 0, 8, 16},
}};

const EVP_CIPHER* evp_cipher_for(std::string_view name) noexcept
{
    if (name == "3des-cbc") return EVP_des_ede3_cbc();
    if (name == "aes128-ctr") return EVP_aes_128_ctr();
    if (name == "aes192-ctr") return EVP_aes_192_ctr();
    if (name == "aes256-ctr") return EVP_aes_256_ctr();
    if (name == "aes128-cbc") return EVP_aes_128_cbc();
    if (name == "aes192-cbc") return EVP_aes_192_cbc();
    if (name == "aes256-cbc") return EVP_aes_256_cbc();
    if (name == "aes128-gcm@openssh.com") return EVP_aes_128_gcm();
    if (name == "aes256-gcm@openssh.com") return EVP_aes_256_gcm();
    return nullptr;
}

bool is_gcm(const key_cipher& c) noexcept { return c.name.find("-gcm@") != std::string_view::npos; }
bool is_chacha(const key_cipher& c) noexcept { return c.name == "chacha20-poly1305@openssh.com"; }

// One pass of an EVP cipher over data in place, without padding.
result<void> evp_crypt(const key_cipher& c, byte_span key, byte_span iv, mutable_byte_span data, bool encrypt,
                       mutable_byte_span tag_out, byte_span tag_in)
{
    const EVP_CIPHER* cipher = evp_cipher_for(c.name);
    cipher_ctx_ptr ctx(EVP_CIPHER_CTX_new());
    if (cipher == nullptr || !ctx || key.size() != c.key_len || iv.size() != c.iv_len)
        return errc::invalid_argument;
    int len = 0;
    bool ok = EVP_CipherInit_ex(ctx.get(), cipher, nullptr, nullptr, nullptr, encrypt ? 1 : 0) == 1;
    if (ok && is_gcm(c))
        ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(c.iv_len), nullptr) == 1;
    ok = ok && EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, key.data(), iv.data(), -1) == 1 &&
         EVP_CIPHER_CTX_set_padding(ctx.get(), 0) == 1;
    if (ok && is_gcm(c) && !encrypt)
        ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(c.tag_len),
                                 const_cast<std::uint8_t*>(tag_in.data())) == 1;
    ok = ok && (data.empty() || EVP_CipherUpdate(ctx.get(), data.data(), &len, data.data(),
                                                 static_cast<int>(data.size())) == 1);
    if (!ok) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    std::uint8_t tail[32];
    if (EVP_CipherFinal_ex(ctx.get(), tail, &len) != 1) {
        clear_openssl_errors();
        return is_gcm(c) ? errc::mac_mismatch : errc::crypto_error;
    }
    if (is_gcm(c) && encrypt &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(c.tag_len), tag_out.data()) != 1) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    return {};
}

// ChaCha20 with OpenSSH's 64-bit block counter and 64-bit nonce layout:
// OpenSSL's 16-byte IV is the little-endian counter followed by the nonce,
// and the nonce here (the sequence number) is zero.
result<void> chacha20(byte_span key, std::uint32_t counter, mutable_byte_span data)
{
    std::uint8_t iv[16] = {};
    iv[0] = std::uint8_t(counter);
    iv[1] = std::uint8_t(counter >> 8);
    iv[2] = std::uint8_t(counter >> 16);
    iv[3] = std::uint8_t(counter >> 24);
    cipher_ctx_ptr ctx(EVP_CIPHER_CTX_new());
    int len = 0;
    if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_chacha20(), nullptr, key.data(), iv) != 1 ||
        (!data.empty() &&
         EVP_EncryptUpdate(ctx.get(), data.data(), &len, data.data(), static_cast<int>(data.size())) != 1)) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    return {};
}

result<void> poly1305(byte_span key, byte_span data, mutable_byte_span tag)
{
    std::size_t out_len = 0;
    if (EVP_Q_mac(nullptr, "POLY1305", nullptr, nullptr, nullptr, key.data(), key.size(), data.data(), data.size(),
                  tag.data(), tag.size(), &out_len) == nullptr ||
        out_len != 16) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    return {};
}

// The Poly1305 key is the first 32 bytes of keystream block 0; the payload
// is encrypted from block 1 on.
result<void> chacha_poly(byte_span key, mutable_byte_span data, bool encrypt, mutable_byte_span tag_out,
                         byte_span tag_in)
{
    if (key.size() != 64)
        return errc::invalid_argument;
    const byte_span main_key = key.first(32);
    secret_bytes poly_key(32);
    if (auto r = chacha20(main_key, 0, poly_key.span()); !r)
        return r;
    if (!encrypt) {
        std::uint8_t expected[16];
        if (auto r = poly1305(poly_key, data, expected); !r)
            return r;
        if (!equal_constant_time(byte_span(expected, 16), tag_in))
            return errc::mac_mismatch;
    }
    if (auto r = chacha20(main_key, 1, data); !r)
        return r;
    if (encrypt)
        return poly1305(poly_key, data, tag_out);
    return {};
}

} // namespace

const key_cipher* find_key_cipher(std::string_view name) noexcept
{
    for (const auto& c : ciphers)
        if (c.name == name)
            return &c;
    return nullptr;
}

result<void> key_cipher_encrypt(const key_cipher& c, byte_span key, byte_span iv, mutable_byte_span data,
                                mutable_byte_span tag)
{
    if (data.size() % c.block_size != 0 || tag.size() != c.tag_len)
        return errc::invalid_argument;
    if (c.name == "none")
        return {};
    if (is_chacha(c))
        return chacha_poly(key, data, true, tag, {});
    return evp_crypt(c, key, iv, data, true, tag, {});
}

result<void> key_cipher_decrypt(const key_cipher& c, byte_span key, byte_span iv, mutable_byte_span data,
                                byte_span tag)
{
    if (data.size() % c.block_size != 0 || tag.size() != c.tag_len)
        return errc::invalid_argument;
    if (c.name == "none")
        return {};
    if (is_chacha(c))
        return chacha_poly(key, data, false, {}, tag);
    return evp_crypt(c, key, iv, data, false, {}, tag);
}

} // namespace longhaul::detail
