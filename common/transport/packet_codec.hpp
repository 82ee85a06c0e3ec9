// The binary packet protocol (RFC 4253 §6): framing, padding, sealing and
// opening packets with the direction's packet_cipher, sequence numbers, and
// the per-key counters that drive rekeying.
//
// Each packet gets its packet_position here, in order; the cipher itself is
// stateless per packet. With a crypto_engine lent (issue 13), packets are
// still framed and positioned one by one, in order, but sealed and opened in
// batches on the engine's threads:
//
// - sending: a packet is framed (length, padding, random padding, position)
//   into the output at once and sealed later, with the others queued since,
//   when the output is next read (output()) or the batch is full;
// - receiving: when the input holds several whole packets, their lengths are
//   read one after another (each needs the previous one's: the first block
//   decrypted for CTR without ETM, the K_1 keystream for chacha20-poly1305)
//   and the packets are opened together, then handed out in order. A packet
//   that fails to open is reported when its turn comes, after the packets
//   before it, as it would be serially.
//
// Compression keeps a direction serial (zlib is a stream, and costs more
// than the cipher anyway).
#pragma once

#include "common/buffer.hpp"
#include "common/crypto/compression.hpp"
#include "common/crypto/crypto_engine.hpp"
#include "common/crypto/packet_cipher.hpp"
#include "common/random.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

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

// The most one batch holds: enough to keep 8 threads busy with 32 KiB
// packets, little enough that the first packet is not held back long.
inline constexpr std::size_t max_batch_packets = 64;
inline constexpr std::size_t max_batch_bytes = 2 * 1024 * 1024;

class packet_sender {
public:
    explicit packet_sender(random_source& rng);

    // Installs new keys (after NEWKEYS); packets framed under the old keys
    // are sealed first (a rekey is a barrier). Sequence numbers continue
    // unless reset_sequence() is called (strict kex).
    void set_cipher(std::unique_ptr<packet_cipher> cipher);
    void set_compressor(std::unique_ptr<compressor> c)
    {
        seal_pending();
        compressor_ = std::move(c);
    }
    bool compressing() const noexcept { return compressor_ != nullptr; }
    void reset_sequence() noexcept { seq_ = 0; }
    // Seals through `engine` from now on (nullptr: every packet as it is
    // framed). The engine must outlive its use here.
    void set_crypto_engine(crypto_engine* engine);

    // Zero-copy sending: write up to `max` payload bytes into the returned
    // span, then commit_payload() with the length written. Nothing else may
    // be sent in between.
    mutable_byte_span prepare_payload(std::size_t max);
    void commit_payload(std::size_t len);
    void send(byte_span payload);

    // The queued output, every packet sealed.
    byte_buffer& output()
    {
        seal_pending();
        return out_;
    }
    // Sizes only: the bytes may include packets not sealed yet.
    const byte_buffer& output() const noexcept { return out_; }
    // Drops sent bytes from the front; never a packet not yet sealed.
    void consume_output(std::size_t n) noexcept;
    // Seals every packet framed but not yet sealed.
    void seal_pending();
    std::uint32_t sequence() const noexcept { return seq_; }
    const key_usage& usage() const noexcept { return usage_; }
    const packet_cipher& cipher() const noexcept { return *cipher_; }
    // Where the next packet goes in the key epoch (seq is sequence()).
    packet_position position() const noexcept { return {seq_, pos_.index, pos_.block_offset}; }
    // True once the compressor took a payload: its deflate history exists
    // only here then, and the direction cannot be handed to another process.
    bool compression_used() const noexcept { return compressor_ && compressor_->total_in() > 0; }
    // Continues a key epoch started in another process (transport import):
    // call after set_cipher() with the same keys; the next packet is framed
    // at `pos` (pos.seq is its sequence number) and `usage` counts on.
    void resume(const packet_position& pos, const key_usage& usage) noexcept
    {
        seq_ = pos.seq;
        pos_ = pos;
        usage_ = usage;
    }

private:
    struct pending_packet {
        std::size_t offset; // from the start of out_'s live bytes
        std::size_t size;   // length field through padding
        packet_position pos;
    };

    void frame_and_seal(std::size_t payload_len);
    void make_clones();

    random_source& rng_;
    std::unique_ptr<packet_cipher> cipher_;
    std::unique_ptr<compressor> compressor_;
    byte_buffer out_;
    bytes plain_;      // payload staging when compressing
    bytes compressed_;
    std::uint32_t seq_ = 0;
    packet_position pos_{};
    key_usage usage_{};

    crypto_engine* engine_ = nullptr;
    std::vector<std::unique_ptr<packet_cipher>> clones_; // engine slots 1..
    std::vector<pending_packet> pending_;
    std::size_t pending_bytes_ = 0; // wire bytes of pending_, tags included
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
    // Opens through `engine` from now on (nullptr: serially). The engine
    // must outlive its use here.
    void set_crypto_engine(crypto_engine* engine);
    // Whether packets may be opened ahead of the one asked for. The caller
    // must forbid it whenever a NEWKEYS could be in the input (a key
    // exchange is in progress): packets after it are under keys not yet
    // installed. Packets already opened ahead are still handed out.
    void set_lookahead(bool allowed) noexcept { lookahead_ = allowed; }

    // Takes the next complete packet from the front of `in`, decrypting in
    // place. nullopt: more bytes are needed. Errors: bad_packet_length,
    // mac_mismatch, bad_padding, compression_error/too_large.
    result<std::optional<received_packet>> next(byte_buffer& in);
    // Drops the bytes of the packet last returned by next().
    void release(byte_buffer& in) noexcept;

    std::uint32_t sequence() const noexcept { return seq_; }
    const key_usage& usage() const noexcept { return usage_; }
    // Where the next packet is expected in the key epoch (seq is sequence()).
    packet_position position() const noexcept { return {seq_, pos_.index, pos_.block_offset}; }
    // True once the decompressor inflated a payload (see packet_sender's).
    bool compression_used() const noexcept { return decompressor_ && decompressor_->total_in() > 0; }
    // Bytes at the front of the input that belong to the packet last handed
    // out and are dropped by the next release(): not input any more.
    std::size_t delivered_bytes() const noexcept { return consume_; }
    // Continues a key epoch started in another process (see packet_sender's).
    // A peeked length is forgotten: peek_length() left the bytes as they were.
    void resume(const packet_position& pos, const key_usage& usage) noexcept
    {
        seq_ = pos.seq;
        pos_ = pos;
        usage_ = usage;
        length_.reset();
    }
    // The peer's packet_length that was rejected (for the error message).
    std::uint32_t last_bad_length() const noexcept { return bad_length_; }
    // Packets opened ahead and not yet handed out.
    std::size_t opened_ahead() const noexcept { return batch_.size() - batch_next_; }

private:
    struct batch_packet {
        std::size_t offset; // from the front of the input when opened
        std::uint32_t packet_length;
        packet_position pos;
        errc status;
    };

    bool valid_length(std::uint32_t len) const noexcept;
    bool open_ahead(byte_buffer& in);
    result<std::optional<received_packet>> deliver(byte_buffer& in, std::uint32_t packet_length);
    void make_clones();

    std::unique_ptr<packet_cipher> cipher_;
    std::unique_ptr<decompressor> decompressor_;
    bytes inflated_;
    std::uint32_t seq_ = 0;
    packet_position pos_{};
    key_usage usage_{};
    std::optional<std::uint32_t> length_; // packet_length of the packet being assembled
    std::size_t consume_ = 0;             // bytes of the last returned packet
    std::uint32_t bad_length_ = 0;

    crypto_engine* engine_ = nullptr;
    bool lookahead_ = false;
    std::vector<std::unique_ptr<packet_cipher>> clones_; // engine slots 1..
    std::vector<batch_packet> batch_; // opened ahead, handed out from batch_next_
    std::size_t batch_next_ = 0;
};

} // namespace longhaul
