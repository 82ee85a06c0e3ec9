// The binary packet protocol (RFC 4253 §6): framing, padding, sealing and
// opening packets with the direction's packet_cipher, sequence numbers, and
// the per-key counters that drive rekeying.
//
// Each packet gets its packet_position here, in order; the cipher itself is
// stateless per packet. That is the seam where a crypto worker pool can later
// seal and open packets on other threads.
#pragma once

#include "common/buffer.hpp"
#include "common/crypto/compression.hpp"
#include "common/crypto/packet_cipher.hpp"
#include "common/random.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <memory>
#include <optional>

namespace longhaul {

// OpenSSH's PACKET_MAX_SIZE: the largest packet_length accepted.
inline constexpr std::uint32_t max_packet_length = 256 * 1024;
// The largest payload this side sends or accepts after decompression.
inline constexpr std::size_t max_payload_size = max_packet_length - 1024;

// What has passed under the current keys, for rekey decisions.
struct key_usage {
    std::uint64_t packets = 0;
    std::uint64_t bytes = 0; // packet bytes on the wire, tags included
};

class packet_sender {
public:
    explicit packet_sender(random_source& rng);

    // Installs new keys (after NEWKEYS). Sequence numbers continue unless
    // reset_sequence() is called (strict kex).
    void set_cipher(std::unique_ptr<packet_cipher> cipher);
    void set_compressor(std::unique_ptr<compressor> c) { compressor_ = std::move(c); }
    bool compressing() const noexcept { return compressor_ != nullptr; }
    void reset_sequence() noexcept { seq_ = 0; }

    // Zero-copy sending: write up to `max` payload bytes into the returned
    // span, then commit_payload() with the length written. Nothing else may
    // be sent in between.
    mutable_byte_span prepare_payload(std::size_t max);
    void commit_payload(std::size_t len);
    void send(byte_span payload);

    byte_buffer& output() noexcept { return out_; }
    const byte_buffer& output() const noexcept { return out_; }
    std::uint32_t sequence() const noexcept { return seq_; }
    const key_usage& usage() const noexcept { return usage_; }
    const packet_cipher& cipher() const noexcept { return *cipher_; }

private:
    void frame_and_seal(std::size_t payload_len);

    random_source& rng_;
    std::unique_ptr<packet_cipher> cipher_;
    std::unique_ptr<compressor> compressor_;
    byte_buffer out_;
    bytes plain_;      // payload staging when compressing
    bytes compressed_;
    std::uint32_t seq_ = 0;
    packet_position pos_{};
    key_usage usage_{};
};

struct received_packet {
    byte_span payload; // valid until the next next()/release() call
    std::uint32_t seq = 0;
};

class packet_receiver {
public:
    packet_receiver();

    void set_cipher(std::unique_ptr<packet_cipher> cipher);
    void set_decompressor(std::unique_ptr<decompressor> d) { decompressor_ = std::move(d); }
    bool decompressing() const noexcept { return decompressor_ != nullptr; }
    void reset_sequence() noexcept { seq_ = 0; }

    // Takes the next complete packet from the front of `in`, decrypting in
    // place. nullopt: more bytes are needed. Errors: bad_packet_length,
    // mac_mismatch, bad_padding, compression_error/too_large.
    result<std::optional<received_packet>> next(byte_buffer& in);
    // Drops the bytes of the packet last returned by next().
    void release(byte_buffer& in) noexcept;

    std::uint32_t sequence() const noexcept { return seq_; }
    const key_usage& usage() const noexcept { return usage_; }
    // The peer's packet_length that was rejected (for the error message).
    std::uint32_t last_bad_length() const noexcept { return bad_length_; }

private:
    std::unique_ptr<packet_cipher> cipher_;
    std::unique_ptr<decompressor> decompressor_;
    bytes inflated_;
    std::uint32_t seq_ = 0;
    packet_position pos_{};
    key_usage usage_{};
    std::optional<std::uint32_t> length_; // packet_length of the packet being assembled
    std::size_t consume_ = 0;             // bytes of the last returned packet
    std::uint32_t bad_length_ = 0;
};

} // namespace longhaul
