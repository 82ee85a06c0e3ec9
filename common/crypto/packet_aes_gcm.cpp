// aes128-gcm@openssh.com and aes256-gcm@openssh.com (RFC 5647 as OpenSSH's
// PROTOCOL file amends it: the algorithm is named by the cipher alone and no
// MAC is negotiated).
//
// The packet length travels in clear as the additional authenticated data;
// padding length, payload and padding are encrypted. The 12-byte nonce is a
// 4-byte fixed field followed by a 64-bit big-endian invocation counter, both
// from the derived IV; the counter advances by one per packet, so packet
// `index` of the key epoch uses initial_counter + index (mod 2^64).
#include "common/crypto/packet_cipher_impl.hpp"

#include "common/crypto/primitives.hpp"
#include "common/wire.hpp"

#include <cstring>

namespace longhaul::detail {

namespace {

class aes_gcm_openssh final : public packet_cipher {
public:
    aes_gcm_openssh(byte_span key, byte_span iv) : key_(key), iv_(iv), gcm_(key)
    {
        std::memcpy(fixed_, iv.data(), sizeof fixed_);
        initial_counter_ = load_u64(iv.data() + 4);
    }

    std::size_t length_prefix_size() const noexcept override { return length_size; }
    std::size_t block_size() const noexcept override { return 16; }
    std::size_t tag_size() const noexcept override { return aes_gcm::tag_size; }
    bool length_excluded_from_padding() const noexcept override { return true; }
    std::uint64_t blocks_used(std::size_t) const noexcept override { return 0; }

    std::uint32_t peek_length(const packet_position&, byte_span prefix) override
    {
        return prefix.size() < length_size ? 0 : load_u32(prefix.data());
    }

    void seal(const packet_position& pos, mutable_byte_span packet, mutable_byte_span tag) override
    {
        check_seal_args(packet.size(), length_size, tag.size(), aes_gcm::tag_size);
        std::uint8_t nonce[aes_gcm::iv_size];
        make_nonce(nonce, pos.index);
        if (!gcm_.seal(nonce, packet.first(length_size), packet.subspan(length_size), tag.data()))
            seal_failed();
    }

    result<void> open(const packet_position& pos, mutable_byte_span packet, byte_span tag) override
    {
        if (packet.size() < length_size || tag.size() != aes_gcm::tag_size)
            return errc::invalid_argument;
        std::uint8_t nonce[aes_gcm::iv_size];
        make_nonce(nonce, pos.index);
        if (!gcm_.open(nonce, packet.first(length_size), packet.subspan(length_size), tag.data()))
            return errc::mac_mismatch;
        return {};
    }

    std::unique_ptr<packet_cipher> clone() const override { return std::make_unique<aes_gcm_openssh>(key_, iv_); }

private:
    void make_nonce(std::uint8_t* nonce, std::uint64_t index) const noexcept
    {
        std::memcpy(nonce, fixed_, sizeof fixed_);
        store_u64(nonce + 4, initial_counter_ + index); // unsigned: wraps mod 2^64
    }

    secret_bytes key_;
    secret_bytes iv_;
    aes_gcm gcm_;
    std::uint8_t fixed_[4];
    std::uint64_t initial_counter_ = 0;
};

} // namespace

std::unique_ptr<packet_cipher> make_aes_gcm(byte_span key, byte_span iv)
{
    if (iv.size() != aes_gcm::iv_size)
        throw std::invalid_argument("AES-GCM needs a 12-byte IV");
    return std::make_unique<aes_gcm_openssh>(key, iv);
}

} // namespace longhaul::detail
