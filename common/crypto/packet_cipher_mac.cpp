// A cipher and a separate MAC: AES-CTR (RFC 4344) or no cipher, with
// HMAC-SHA1/SHA2 (RFC 4253 §6.4, RFC 6668), UMAC-64/128 (RFC 4418, OpenSSH
// PROTOCOL) or no MAC, in either order:
//
// - classic (RFC 4253): MAC over the plaintext packet; the whole packet,
//   length included, is encrypted, so the length is only known after
//   decrypting the first cipher block;
// - encrypt-then-MAC (OpenSSH PROTOCOL "-etm@openssh.com"): the length stays
//   in clear, the rest is encrypted, and the MAC covers length || ciphertext
//   and is checked before anything is decrypted.
//
// The sequence number enters each MAC its own way: HMAC hashes it as a
// uint32 before the packet; UMAC takes it as its nonce (8 bytes, big-endian)
// and hashes the packet alone.
//
// CTR keystream is addressed rather than streamed: a packet whose first byte
// sits `block_offset` cipher blocks into the key epoch uses counter
// IV + block_offset, so packets can be sealed or opened in any order.
#include "common/crypto/packet_cipher_impl.hpp"

#include "common/crypto/mac.hpp"
#include "common/crypto/primitives.hpp"
#include "common/crypto/umac.hpp"
#include "common/wire.hpp"

#include <openssl/crypto.h>

#include <optional>
#include <variant>

namespace longhaul::detail {

namespace {

constexpr std::size_t aes_block = 16;
constexpr std::size_t max_mac_size = 64; // SHA-512

hash_alg mac_hash(std::string_view name)
{
    if (name.starts_with("hmac-sha2-512"))
        return hash_alg::sha512;
    if (name.starts_with("hmac-sha2-256"))
        return hash_alg::sha256;
    return hash_alg::sha1;
}

class cipher_mac final : public packet_cipher {
public:
    cipher_mac(const cipher_info& cipher, const mac_info& mac, const direction_keys& keys)
        : cipher_info_(cipher), mac_info_(mac), keys_(keys)
    {
        if (cipher.name != "none")
            ctr_.emplace(keys_.enc_key);
        if (mac.name.starts_with("umac-"))
            mac_.emplace<umac>(keys_.mac_key, mac.mac_size);
        else if (mac.name != "none")
            mac_.emplace<hmac>(mac_hash(mac.name), keys_.mac_key);
    }

    std::size_t length_prefix_size() const noexcept override
    {
        return mac_info_.etm || !ctr_ ? length_size : aes_block;
    }
    std::size_t block_size() const noexcept override { return ctr_ ? aes_block : 8; }
    std::size_t tag_size() const noexcept override { return mac_info_.mac_size; }
    bool length_excluded_from_padding() const noexcept override { return mac_info_.etm; }

    std::uint64_t blocks_used(std::size_t packet_size) const noexcept override
    {
        if (!ctr_)
            return 0;
        const std::size_t encrypted = encrypted_offset() <= packet_size ? packet_size - encrypted_offset() : 0;
        // Rounded up: a packet that is not block-aligned (which the transport
        // rejects anyway) still never shares keystream with the next one.
        return (encrypted + aes_block - 1) / aes_block;
    }

    std::uint32_t peek_length(const packet_position& pos, byte_span prefix) override
    {
        const std::size_t need = length_prefix_size();
        if (prefix.size() < need)
            return 0;
        if (need == length_size)
            return load_u32(prefix.data());
        // Decrypt a copy of the first block; the packet itself stays as received.
        std::uint8_t first[aes_block];
        if (!position_ctr(pos.block_offset) || !ctr_->apply(prefix.first(aes_block), first))
            return 0; // a zero length is rejected by the transport as a bad length
        const std::uint32_t length = load_u32(first);
        cleanse(first, sizeof first);
        return length;
    }

    void seal(const packet_position& pos, mutable_byte_span packet, mutable_byte_span tag) override
    {
        check_seal_args(packet.size(), length_size, tag.size(), tag_size());
        bool ok = true;
        if (mac_info_.etm) {
            ok = crypt(pos.block_offset, packet) && compute_mac(pos.seq, packet, tag.data());
        } else {
            ok = compute_mac(pos.seq, packet, tag.data()) && crypt(pos.block_offset, packet);
        }
        if (!ok)
            seal_failed();
    }

    result<void> open(const packet_position& pos, mutable_byte_span packet, byte_span tag) override
    {
        if (packet.size() < length_size || tag.size() != tag_size())
            return errc::invalid_argument;
        if (mac_info_.etm) {
            if (auto r = verify_mac(pos.seq, packet, tag); !r)
                return r;
            if (!crypt(pos.block_offset, packet))
                return errc::crypto_error;
            return {};
        }
        if (!crypt(pos.block_offset, packet))
            return errc::crypto_error;
        return verify_mac(pos.seq, packet, tag);
    }

    std::unique_ptr<packet_cipher> clone() const override
    {
        return std::make_unique<cipher_mac>(cipher_info_, mac_info_, keys_);
    }

private:
    std::size_t encrypted_offset() const noexcept { return mac_info_.etm ? length_size : 0; }

    bool position_ctr(std::uint64_t block_offset) noexcept
    {
        std::uint8_t counter[aes_block];
        aes_ctr::advance_iv(counter, keys_.iv.data(), block_offset);
        return ctr_->set_iv(counter);
    }

    // Encrypts or decrypts (the same XOR) the part of the packet the mode covers.
    bool crypt(std::uint64_t block_offset, mutable_byte_span packet) noexcept
    {
        if (!ctr_)
            return true;
        const auto body = packet.subspan(encrypted_offset());
        return position_ctr(block_offset) && ctr_->apply(body, body.data());
    }

    bool compute_mac(std::uint32_t seq, byte_span packet, std::uint8_t* out) noexcept
    {
        if (auto* h = std::get_if<hmac>(&mac_)) {
            std::uint8_t seq_be[4];
            store_u32(seq_be, seq);
            return h->begin() && h->update(seq_be) && h->update(packet) && h->finish(out);
        }
        if (auto* u = std::get_if<umac>(&mac_)) {
            u->begin();
            u->update(packet);
            return u->finish(std::uint64_t(seq), out);
        }
        return true; // no MAC
    }

    result<void> verify_mac(std::uint32_t seq, byte_span packet, byte_span tag) noexcept
    {
        if (std::holds_alternative<std::monostate>(mac_))
            return {};
        std::uint8_t expected[max_mac_size];
        if (!compute_mac(seq, packet, expected))
            return errc::crypto_error;
        if (CRYPTO_memcmp(expected, tag.data(), tag.size()) != 0)
            return errc::mac_mismatch;
        return {};
    }

    const cipher_info& cipher_info_; // entries of the immutable algorithm tables
    const mac_info& mac_info_;
    direction_keys keys_; // kept for clone() and the CTR IV
    std::optional<aes_ctr> ctr_;
    std::variant<std::monostate, hmac, umac> mac_; // none, or the MAC the name picked
};

} // namespace

std::unique_ptr<packet_cipher> make_cipher_mac(const cipher_info& cipher, const mac_info& mac,
                                               const direction_keys& keys)
{
    return std::make_unique<cipher_mac>(cipher, mac, keys);
}

} // namespace longhaul::detail
