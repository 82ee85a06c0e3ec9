// chacha20-poly1305@openssh.com (OpenSSH PROTOCOL.chacha20poly1305).
//
// The 64 bytes of key material split into K_2 (the first 32 bytes: payload
// and Poly1305 key) and K_1 (the last 32: the 4-byte length field only).
// Both instances use DJB's ChaCha20 layout with the sequence number as a
// 64-bit big-endian nonce. Block 0 of K_2's stream yields the one-time
// Poly1305 key, payload encryption starts at block 1, and the tag covers the
// encrypted length and the encrypted payload.
#include "common/crypto/packet_cipher_impl.hpp"

#include "common/crypto/primitives.hpp"
#include "common/wire.hpp"

#include <openssl/crypto.h>

#include <cstring>

namespace longhaul::detail {

namespace {

// Keystream block 0 is produced by encrypting zeros; an immutable table.
constexpr std::uint8_t zero_block[chacha20::block_size] = {};

class chacha20_poly1305_openssh final : public packet_cipher {
public:
    explicit chacha20_poly1305_openssh(byte_span key)
        : key_(key), main_(key.first(32)), header_(key.subspan(32, 32))
    {
    }

    std::size_t length_prefix_size() const noexcept override { return length_size; }
    std::size_t block_size() const noexcept override { return 8; }
    std::size_t tag_size() const noexcept override { return poly1305::tag_size; }
    bool length_excluded_from_padding() const noexcept override { return true; }
    std::uint64_t blocks_used(std::size_t) const noexcept override { return 0; }

    std::uint32_t peek_length(const packet_position& pos, byte_span prefix) override
    {
        if (prefix.size() < length_size)
            return 0;
        if (!length_keystream(pos.seq))
            return 0; // a zero length is rejected by the transport as a bad length
        std::uint8_t len[length_size];
        for (std::size_t i = 0; i < length_size; ++i)
            len[i] = prefix[i] ^ length_ks_[i];
        return load_u32(len);
    }

    void seal(const packet_position& pos, mutable_byte_span packet, mutable_byte_span tag) override
    {
        check_seal_args(packet.size(), length_size, tag.size(), poly1305::tag_size);
        std::uint8_t iv[chacha20::iv_size];
        chacha20::djb_iv(iv, 0, pos.seq);
        std::uint8_t block0[chacha20::block_size];
        // K_2's stream stays positioned at block 1 after block 0 is taken, so
        // one IV set serves both the Poly1305 key and the payload.
        const bool ok = header_.set_iv(iv) && header_.apply(packet.first(length_size), packet.data()) &&
                        main_.set_iv(iv) && main_.apply(zero_block, block0) &&
                        main_.apply(packet.subspan(length_size), packet.data() + length_size) &&
                        mac_.init(block0) && mac_.update(packet) && mac_.finish(tag.data());
        cleanse(block0, sizeof block0);
        if (!ok)
            seal_failed();
    }

    result<void> open(const packet_position& pos, mutable_byte_span packet, byte_span tag) override
    {
        if (auto r = open_body(pos, packet, tag); !r)
            return r;
        // The receiver has just peeked at this packet's length, so the K_1
        // keystream for this sequence number is usually at hand already.
        if (!length_keystream(pos.seq))
            return errc::crypto_error;
        for (std::size_t i = 0; i < length_size; ++i)
            packet[i] ^= length_ks_[i];
        return {};
    }

    result<void> open_body(const packet_position& pos, mutable_byte_span packet, byte_span tag) override
    {
        if (packet.size() < length_size || tag.size() != poly1305::tag_size)
            return errc::invalid_argument;
        std::uint8_t iv[chacha20::iv_size];
        chacha20::djb_iv(iv, 0, pos.seq);
        std::uint8_t block0[chacha20::block_size];
        std::uint8_t expected[poly1305::tag_size];
        // Authenticate before decrypting anything.
        bool ok = main_.set_iv(iv) && main_.apply(zero_block, block0) && mac_.init(block0) && mac_.update(packet) &&
                  mac_.finish(expected);
        cleanse(block0, sizeof block0);
        if (!ok)
            return errc::crypto_error;
        if (CRYPTO_memcmp(expected, tag.data(), sizeof expected) != 0)
            return errc::mac_mismatch;
        if (!main_.apply(packet.subspan(length_size), packet.data() + length_size))
            return errc::crypto_error;
        return {};
    }

    std::unique_ptr<packet_cipher> clone() const override
    {
        return std::make_unique<chacha20_poly1305_openssh>(key_);
    }

private:
    // K_1's first four keystream bytes for `seq`, kept for the next call.
    bool length_keystream(std::uint32_t seq) noexcept
    {
        if (length_ks_valid_ && length_ks_seq_ == seq)
            return true;
        std::uint8_t iv[chacha20::iv_size];
        chacha20::djb_iv(iv, 0, seq);
        length_ks_valid_ = header_.set_iv(iv) && header_.apply(byte_span(zero_block).first(length_size), length_ks_);
        length_ks_seq_ = seq;
        return length_ks_valid_;
    }

    secret_bytes key_; // kept for clone(); the contexts hold their own schedules
    chacha20 main_;    // K_2
    chacha20 header_;  // K_1
    poly1305 mac_;
    std::uint8_t length_ks_[length_size] = {};
    std::uint32_t length_ks_seq_ = 0;
    bool length_ks_valid_ = false;
};

} // namespace

std::unique_ptr<packet_cipher> make_chacha20_poly1305(byte_span key)
{
    if (key.size() != 64)
        throw std::invalid_argument("chacha20-poly1305@openssh.com needs 64 bytes of key");
    return std::make_unique<chacha20_poly1305_openssh>(key);
}

} // namespace longhaul::detail
