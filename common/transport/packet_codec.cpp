#include "common/transport/packet_codec.hpp"

#include "common/wire.hpp"

#include <cstring>

namespace longhaul {

namespace {

// Minimum padding is 4 bytes (RFC 4253 §6); anything up to a block more.
std::size_t padding_for(std::size_t covered, std::size_t block) noexcept
{
    std::size_t pad = block - covered % block;
    if (pad < 4)
        pad += block;
    return pad;
}

} // namespace

packet_sender::packet_sender(random_source& rng) : rng_(rng), cipher_(make_null_packet_cipher()) {}

void packet_sender::set_cipher(std::unique_ptr<packet_cipher> cipher)
{
    cipher_ = std::move(cipher);
    pos_.index = 0;
    pos_.block_offset = 0;
    usage_ = {};
}

mutable_byte_span packet_sender::prepare_payload(std::size_t max)
{
    if (max > max_payload_size)
        max = max_payload_size;
    if (compressor_) {
        plain_.resize(max);
        return plain_;
    }
    // Header, payload, up to two blocks of padding, tag: all sealed in place.
    auto room = out_.prepare(5 + max + 2 * cipher_->block_size() + cipher_->tag_size());
    return room.subspan(5, max);
}

void packet_sender::commit_payload(std::size_t len)
{
    if (compressor_) {
        compressed_.clear();
        // A compressor failure on our own data is a bug, not peer input; an
        // empty compressed payload would fail loudly at the peer.
        (void)compressor_->compress(byte_span(plain_).first(len), compressed_);
        auto room = out_.prepare(5 + compressed_.size() + 2 * cipher_->block_size() + cipher_->tag_size());
        std::memcpy(room.data() + 5, compressed_.data(), compressed_.size());
        len = compressed_.size();
    }
    frame_and_seal(len);
}

void packet_sender::send(byte_span payload)
{
    auto dst = prepare_payload(payload.size());
    std::memcpy(dst.data(), payload.data(), payload.size());
    commit_payload(payload.size());
}

void packet_sender::frame_and_seal(std::size_t payload_len)
{
    const std::size_t block = cipher_->block_size();
    const std::size_t covered = 1 + payload_len + (cipher_->length_excluded_from_padding() ? 0 : 4);
    const std::size_t pad = padding_for(covered, block);
    const std::size_t packet_length = 1 + payload_len + pad;
    const std::size_t total = 4 + packet_length + cipher_->tag_size();

    // prepare() of at least this much was done by prepare_payload/commit_payload.
    std::uint8_t* p = out_.prepare(total).data();
    store_u32(p, static_cast<std::uint32_t>(packet_length));
    p[4] = static_cast<std::uint8_t>(pad);
    rng_.fill({p + 5 + payload_len, pad});

    pos_.seq = seq_;
    cipher_->seal(pos_, {p, 4 + packet_length}, {p + 4 + packet_length, cipher_->tag_size()});
    out_.commit(total);

    ++seq_;
    ++pos_.index;
    pos_.block_offset += cipher_->blocks_used(4 + packet_length);
    ++usage_.packets;
    usage_.bytes += total;
}

packet_receiver::packet_receiver() : cipher_(make_null_packet_cipher()) {}

void packet_receiver::set_cipher(std::unique_ptr<packet_cipher> cipher)
{
    cipher_ = std::move(cipher);
    pos_.index = 0;
    pos_.block_offset = 0;
    usage_ = {};
}

void packet_receiver::release(byte_buffer& in) noexcept
{
    in.consume(consume_);
    consume_ = 0;
}

result<std::optional<received_packet>> packet_receiver::next(byte_buffer& in)
{
    release(in);
    auto data = in.data();
    pos_.seq = seq_;
    if (!length_) {
        const std::size_t prefix = cipher_->length_prefix_size();
        if (data.size() < prefix)
            return std::optional<received_packet>{};
        const std::uint32_t len = cipher_->peek_length(pos_, data.first(prefix));
        const std::size_t block = cipher_->block_size();
        const std::size_t covered = cipher_->length_excluded_from_padding() ? len : std::size_t(len) + 4;
        if (len < 5 || len > max_packet_length || covered % block != 0) {
            bad_length_ = len;
            return errc::bad_packet_length;
        }
        length_ = len;
    }
    const std::size_t packet_size = 4 + std::size_t(*length_);
    const std::size_t total = packet_size + cipher_->tag_size();
    if (data.size() < total)
        return std::optional<received_packet>{};

    auto packet = data.first(packet_size);
    if (auto r = cipher_->open(pos_, packet, data.subspan(packet_size, cipher_->tag_size())); !r)
        return r.error();
    const std::uint32_t packet_length = *length_;
    const std::uint8_t pad = packet[4];
    // At least 4 bytes of padding and at least one byte (the message number) of payload.
    if (pad < 4 || std::size_t(pad) + 2 > packet_length)
        return errc::bad_padding;

    byte_span payload = packet.subspan(5, packet_length - 1 - pad);
    received_packet out{payload, seq_};
    length_.reset();
    consume_ = total;
    ++seq_;
    ++pos_.index;
    pos_.block_offset += cipher_->blocks_used(packet_size);
    ++usage_.packets;
    usage_.bytes += total;

    if (decompressor_) {
        inflated_.clear();
        if (auto r = decompressor_->decompress(payload, inflated_, max_payload_size); !r)
            return r.error();
        if (inflated_.empty())
            return errc::compression_error;
        out.payload = inflated_;
    }
    return std::optional<received_packet>(out);
}

} // namespace longhaul
