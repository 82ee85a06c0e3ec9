// UMAC from RFC 4418: key derivation (§3.2), the pad (§3.3), the tag
// (§4), and UHASH's iteration and L1 chunking (§5.1, §5.2) over the layers
// in umac_hash.cpp.
#include "common/crypto/umac.hpp"

#include "common/wire.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace longhaul {

namespace {

constexpr std::size_t umac_block = 16; // AES's block, and the longest nonce

namespace uh = detail::uhash;

// One AES block under the context's key (ECB, no padding).
bool umac_encrypt_block(EVP_CIPHER_CTX* ctx, const std::uint8_t* in, std::uint8_t* out) noexcept
{
    int n = 0;
    return EVP_EncryptUpdate(ctx, out, &n, in, int(umac_block)) == 1 && n == int(umac_block);
}

detail::cipher_ctx_ptr umac_keyed_aes(const EVP_CIPHER* aes, const std::uint8_t* key)
{
    auto ctx = detail::new_cipher_ctx();
    if (EVP_EncryptInit_ex2(ctx.get(), aes, key, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1)
        detail::throw_openssl_error("EVP_EncryptInit_ex2(AES-128-ECB)");
    return ctx;
}

// KDF(K, index, numbytes) (RFC 4418 §3.2): AES_K(index || i) for the
// 64-bit big-endian counter i = 1, 2, ..., truncated to `out.size()`.
void umac_kdf(EVP_CIPHER_CTX* kdf, std::uint64_t index, mutable_byte_span out)
{
    std::uint8_t in[umac_block];
    std::uint8_t block[umac_block];
    store_u64(in, index);
    for (std::size_t done = 0, i = 1; done < out.size(); done += umac_block, ++i) {
        store_u64(in + 8, i);
        if (!umac_encrypt_block(kdf, in, block))
            detail::throw_openssl_error("UMAC key derivation");
        std::memcpy(out.data() + done, block, std::min(umac_block, out.size() - done));
    }
    cleanse(block, sizeof block);
}

} // namespace

umac::umac(byte_span key, std::size_t tag_size)
    : aes_(detail::fetch_cipher("AES-128-ECB")), tag_size_(tag_size), streams_(tag_size / 4)
{
    if (key.size() != key_size)
        throw std::invalid_argument("UMAC key must be 16 bytes");
    if (tag_size != 8 && tag_size != 16)
        throw std::invalid_argument("UMAC tag must be 8 or 16 bytes");

    // The subkeys (RFC 4418 §3.3 and §5.1): index 0 keys the pad, 1 to 4 the
    // hash layers. Each iteration's NH key starts 16 bytes after the last.
    auto kdf = umac_keyed_aes(aes_.get(), key.data());
    struct derived {
        std::uint8_t pdf[umac_block];
        std::uint8_t nh[uh::nh_key_words * 4];
        std::uint8_t poly[uh::max_streams * 24];
        std::uint8_t l3[uh::max_streams * 64];
        std::uint8_t l3_mask[uh::max_streams * 4];
    };
    wiped<derived> d;
    const std::size_t nh_bytes = uh::chunk_bytes + 16 * (streams_ - 1);
    umac_kdf(kdf.get(), 0, d.pdf);
    umac_kdf(kdf.get(), 1, mutable_byte_span(d.nh).first(nh_bytes));
    umac_kdf(kdf.get(), 2, mutable_byte_span(d.poly).first(24 * streams_));
    umac_kdf(kdf.get(), 3, mutable_byte_span(d.l3).first(64 * streams_));
    umac_kdf(kdf.get(), 4, mutable_byte_span(d.l3_mask).first(4 * streams_));

    // NH adds key words to message words as numbers: read them once here.
    for (std::size_t i = 0; i < nh_bytes / 4; ++i)
        s_.nh_key[i] = load_u32(d.nh + 4 * i);
    for (std::size_t i = 0; i < streams_; ++i) {
        s_.poly[i] = uh::make_poly_key(d.poly + 24 * i);
        s_.l3[i] = uh::make_l3_key(d.l3 + 64 * i, d.l3_mask + 4 * i);
    }
    pdf_ctx_ = umac_keyed_aes(aes_.get(), d.pdf);
    begin();
}

umac::~umac() { cleanse(&s_, sizeof s_); }

void umac::begin() noexcept
{
    buffered_ = 0;
    chunks_hashed_ = 0;
    for (std::size_t i = 0; i < streams_; ++i)
        s_.l2[i].reset();
}

void umac::update(byte_span data) noexcept
{
    // A chunk goes through L1 only once a byte after it has arrived: the
    // last chunk is padded and counted differently, and a message of one
    // chunk skips L2 altogether. Whole chunks are hashed where they lie.
    if (buffered_ > 0) {
        const std::size_t take = std::min(uh::chunk_bytes - buffered_, data.size());
        std::memcpy(s_.buffer + buffered_, data.data(), take);
        buffered_ += take;
        data = data.subspan(take);
        if (data.empty())
            return;
        hash_chunk(s_.buffer);
        buffered_ = 0;
    }
    while (data.size() > uh::chunk_bytes) {
        hash_chunk(data.data());
        data = data.subspan(uh::chunk_bytes);
    }
    if (!data.empty())
        std::memcpy(s_.buffer, data.data(), data.size());
    buffered_ = data.size();
}

// L1 (RFC 4418 §5.2) for a chunk that is not the message's last: NH plus
// the chunk's bit length, straight into L2.
void umac::hash_chunk(const std::uint8_t* chunk) noexcept
{
    std::uint64_t a[uh::max_streams];
    uh::nh(s_.nh_key, chunk, uh::chunk_bytes, streams_, a);
    for (std::size_t i = 0; i < streams_; ++i)
        s_.l2[i].absorb(s_.poly[i], a[i] + 8 * uh::chunk_bytes);
    ++chunks_hashed_;
}

bool umac::finish(byte_span nonce, std::uint8_t* out) noexcept
{
    // The last chunk (empty for an empty message) is zero-padded to a
    // positive multiple of 32 bytes; its length term is its unpadded length.
    const std::size_t padded = std::max<std::size_t>(32, (buffered_ + 31) / 32 * 32);
    std::memset(s_.buffer + buffered_, 0, padded - buffered_);
    std::uint64_t a[uh::max_streams];
    uh::nh(s_.nh_key, s_.buffer, padded, streams_, a);

    std::uint8_t tag[4 * uh::max_streams];
    // (streams_ is at most max_streams; the bound says so to the compiler.)
    for (std::size_t i = 0; i < streams_ && i < uh::max_streams; ++i) {
        const std::uint64_t l1 = a[i] + 8 * std::uint64_t(buffered_);
        uh::u128 b{0, l1}; // a message of at most one chunk skips L2
        if (chunks_hashed_ > 0) {
            s_.l2[i].absorb(s_.poly[i], l1);
            b = s_.l2[i].finish(s_.poly[i]);
        }
        store_u32(tag + 4 * i, uh::l3(s_.l3[i], b));
    }
    cleanse(a, sizeof a);
    begin();

    std::uint8_t mask[16];
    const bool ok = pad(nonce, mask);
    if (ok)
        for (std::size_t i = 0; i < tag_size_; ++i)
            out[i] = tag[i] ^ mask[i];
    cleanse(tag, sizeof tag);
    cleanse(mask, sizeof mask);
    return ok;
}

bool umac::finish(std::uint64_t nonce, std::uint8_t* out) noexcept
{
    std::uint8_t n[8];
    store_u64(n, nonce);
    return finish(n, out);
}

// PDF (RFC 4418 §3.3): AES under the derived key of the nonce padded with
// zeros. An 8-byte tag is one half of the block, chosen by the nonce's low
// bit (cleared in the block), so nonces 2j and 2j+1 share one AES call: the
// block is kept for the next message. The nonce is public (SSH's sequence
// number), so the cache's hit or miss reveals nothing secret.
bool umac::pad(byte_span nonce, std::uint8_t* out) noexcept
{
    if (nonce.empty() || nonce.size() > max_nonce_size)
        return false;
    std::uint8_t input[umac_block] = {};
    std::memcpy(input, nonce.data(), nonce.size());
    std::size_t half = 0;
    if (tag_size_ == 8) {
        half = input[nonce.size() - 1] & 1;
        input[nonce.size() - 1] &= 0xFE;
    }
    if (!pad_cached_ || std::memcmp(input, s_.pad_input, umac_block) != 0) {
        pad_cached_ = false;
        if (!umac_encrypt_block(pdf_ctx_.get(), input, s_.pad_block))
            return false;
        std::memcpy(s_.pad_input, input, umac_block);
        pad_cached_ = true;
    }
    std::memcpy(out, s_.pad_block + half * tag_size_, tag_size_);
    return true;
}

bytes umac_digest(byte_span key, std::size_t tag_size, byte_span nonce, byte_span data)
{
    umac u(key, tag_size);
    bytes out(u.size());
    u.update(data);
    if (nonce.empty() || nonce.size() > umac::max_nonce_size)
        throw std::invalid_argument("UMAC nonce must be 1 to 16 bytes");
    if (!u.finish(nonce, out.data()))
        detail::throw_openssl_error("UMAC");
    return out;
}

} // namespace longhaul
