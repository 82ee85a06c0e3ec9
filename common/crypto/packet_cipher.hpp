// Packet protection: the cipher + MAC (or AEAD) that seals and opens SSH
// binary packets (RFC 4253 §6, OpenSSH PROTOCOL.chacha20poly1305,
// PROTOCOL "AES-GCM" and "encrypt-then-MAC" sections).
//
// Sealing or opening one packet is a function of (keys, packet_position,
// bytes): the implementation keeps no stream state between packets. The
// transport core assigns each packet its position, so a later crypto worker
// pool can seal and open packets out of order on several threads, each with its
// own clone() of the protection.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace longhaul {

struct cipher_info {
    std::string_view name;
    std::size_t key_size;   // bytes of encryption key derived from the exchange
    std::size_t iv_size;    // bytes of IV derived from the exchange
    std::size_t block_size; // padding alignment (8 for chacha20-poly1305)
    std::size_t tag_size;   // AEAD tag bytes (0 when a separate MAC is used)
    bool aead;              // no separate MAC is negotiated
};

struct mac_info {
    std::string_view name;
    std::size_t key_size;
    std::size_t mac_size;
    bool etm; // encrypt-then-MAC: length in clear, MAC over ciphertext
};

// nullptr when the name is not supported. "none" is included in both.
const cipher_info* find_cipher(std::string_view name) noexcept;
const mac_info* find_mac(std::string_view name) noexcept;
// Every supported name (without "none"), in OpenSSH 9.x default preference order.
const std::vector<std::string_view>& supported_ciphers();
const std::vector<std::string_view>& supported_macs();

// Where one packet sits in its direction's key epoch (since NEWKEYS).
struct packet_position {
    std::uint32_t seq = 0;       // SSH sequence number (input to MACs, chacha20 nonce)
    std::uint64_t index = 0;     // packets sealed/opened under this key (AES-GCM invocation counter)
    std::uint64_t block_offset = 0; // 16-byte blocks of keystream used before this packet (CTR)
};

// Keys for one direction, as derived in RFC 4253 §7.2.
struct direction_keys {
    secret_bytes iv;
    secret_bytes enc_key;
    secret_bytes mac_key;
};

class packet_cipher {
public:
    virtual ~packet_cipher() = default;

    // Bytes needed at the start of a packet to learn its length: 4 when the
    // length travels in clear or separately encrypted, a cipher block otherwise.
    virtual std::size_t length_prefix_size() const noexcept = 0;
    // The whole packet (length field included for non-ETM, excluded for
    // ETM/AEAD) is padded to a multiple of this.
    virtual std::size_t block_size() const noexcept = 0;
    // Bytes of MAC or AEAD tag after each packet.
    virtual std::size_t tag_size() const noexcept = 0;
    // True when the 4-byte length is not part of the padded, encrypted body
    // (ETM MACs, AES-GCM, chacha20-poly1305).
    virtual bool length_excluded_from_padding() const noexcept = 0;
    // Keystream blocks a packet of `packet_size` bytes (length field included)
    // consumes; the core adds this to packet_position::block_offset.
    virtual std::uint64_t blocks_used(std::size_t packet_size) const noexcept = 0;

    // Reads packet_length from the first length_prefix_size() bytes of a
    // received packet, without modifying them.
    virtual std::uint32_t peek_length(const packet_position& pos, byte_span prefix) = 0;

    // `packet` is a plaintext packet: uint32 packet_length, byte
    // padding_length, payload, padding. It is encrypted in place and the
    // MAC/tag written to `tag` (tag_size() bytes).
    virtual void seal(const packet_position& pos, mutable_byte_span packet, mutable_byte_span tag) = 0;

    // Verifies `tag` and decrypts `packet` in place (the length field ends up
    // in plaintext too). errc::mac_mismatch when authentication fails; the
    // packet bytes are then unspecified.
    virtual result<void> open(const packet_position& pos, mutable_byte_span packet, byte_span tag) = 0;

    // As open(), for a receiver that has the length from peek_length(): the
    // length field may be left as received. Ciphers that encrypt it apart
    // (chacha20-poly1305) save its decryption, which on an engine thread
    // whose instance did not do the peek costs a key set-up per packet.
    virtual result<void> open_body(const packet_position& pos, mutable_byte_span packet, byte_span tag)
    {
        return open(pos, packet, tag);
    }

    // An independent instance with the same keys, for another thread.
    virtual std::unique_ptr<packet_cipher> clone() const = 0;
};

enum class cipher_direction { seal, open };

// Builds the protection for a negotiated cipher and MAC (mac is ignored for
// AEAD ciphers). Key sizes must match cipher_info / mac_info.
result<std::unique_ptr<packet_cipher>> make_packet_cipher(std::string_view cipher, std::string_view mac,
                                                          const direction_keys& keys, cipher_direction dir);

// The protection in force before the first NEWKEYS: no encryption, no MAC,
// 8-byte block alignment.
std::unique_ptr<packet_cipher> make_null_packet_cipher();

} // namespace longhaul
