#include "common/transport/packet_codec.hpp"

#include "common/wire.hpp"

#include <algorithm>
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

// The cipher instance of an engine slot: the direction's own for slot 0
// (the caller's thread), a clone for each helper.
packet_cipher& slot_cipher(packet_cipher& own, std::vector<std::unique_ptr<packet_cipher>>& clones,
                           unsigned slot) noexcept
{
    return slot == 0 ? own : *clones[slot - 1];
}

} // namespace

// ---------------------------------------------------------------- sending

packet_sender::packet_sender(random_source& rng) : rng_(rng), cipher_(make_null_packet_cipher()) {}

void packet_sender::set_cipher(std::unique_ptr<packet_cipher> cipher)
{
    seal_pending(); // packets framed under the old keys are sealed with them
    cipher_ = std::move(cipher);
    pos_.index = 0;
    pos_.block_offset = 0;
    usage_ = {};
    make_clones();
}

void packet_sender::set_crypto_engine(crypto_engine* engine)
{
    seal_pending();
    engine_ = engine;
    // Reserved once, so that queueing a packet never allocates.
    pending_.reserve(engine_ ? max_batch_packets : 0);
    make_clones();
}

void packet_sender::make_clones()
{
    // Once per key exchange, not per packet.
    clones_.clear();
    if (engine_ == nullptr)
        return;
    for (unsigned slot = 1; slot < engine_->threads(); ++slot)
        clones_.push_back(cipher_->clone());
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
    const std::size_t offset = out_.size();
    std::uint8_t* p = out_.prepare(total).data();
    store_u32(p, static_cast<std::uint32_t>(packet_length));
    p[4] = static_cast<std::uint8_t>(pad);
    rng_.fill({p + 5 + payload_len, pad});

    pos_.seq = seq_;
    if (engine_ != nullptr && !compressor_ && engine_->batching(crypto_direction::seal)) {
        pending_.push_back({offset, 4 + packet_length, pos_});
        pending_bytes_ += total;
    } else {
        // Packets still pending from a batching spell go first, so that
        // the unsealed ones are always the tail (consume_output()).
        if (!pending_.empty())
            seal_pending();
        cipher_->seal(pos_, {p, 4 + packet_length}, {p + 4 + packet_length, cipher_->tag_size()});
    }
    out_.commit(total);

    ++seq_;
    ++pos_.index;
    pos_.block_offset += cipher_->blocks_used(4 + packet_length);
    ++usage_.packets;
    usage_.bytes += total;

    if (pending_.size() >= max_batch_packets || pending_bytes_ >= max_batch_bytes)
        seal_pending();
}

void packet_sender::consume_output(std::size_t n) noexcept
{
    n = std::min(n, out_.size() - pending_bytes_);
    out_.consume(n);
    // Pending packets are found by their distance from the front.
    for (auto& pk : pending_)
        pk.offset -= n;
}

void packet_sender::seal_pending()
{
    if (pending_.empty())
        return;
    std::uint8_t* const base = out_.data().data();
    const std::size_t tag = cipher_->tag_size();
    auto seal_one = [&](unsigned slot, std::size_t i) {
        const pending_packet& pk = pending_[i];
        std::uint8_t* p = base + pk.offset;
        slot_cipher(*cipher_, clones_, slot).seal(pk.pos, {p, pk.size}, {p + pk.size, tag});
    };
    if (pending_.size() >= 2 && pending_bytes_ >= engine_->min_batch_bytes()) {
        engine_->run(crypto_direction::seal, pending_.size(), pending_bytes_, seal_one);
    } else {
        // Too little to be worth a helper: as without an engine.
        for (std::size_t i = 0; i < pending_.size(); ++i)
            seal_one(0, i);
    }
    pending_.clear();
    pending_bytes_ = 0;
}

// ---------------------------------------------------------------- receiving

packet_receiver::packet_receiver() : cipher_(make_null_packet_cipher()) {}

void packet_receiver::set_cipher(std::unique_ptr<packet_cipher> cipher)
{
    cipher_ = std::move(cipher);
    pos_.index = 0;
    pos_.block_offset = 0;
    usage_ = {};
    make_clones();
}

void packet_receiver::set_crypto_engine(crypto_engine* engine)
{
    engine_ = engine;
    batch_.reserve(engine_ ? max_batch_packets : 0);
    make_clones();
}

void packet_receiver::make_clones()
{
    clones_.clear();
    if (engine_ == nullptr)
        return;
    for (unsigned slot = 1; slot < engine_->threads(); ++slot)
        clones_.push_back(cipher_->clone());
}

void packet_receiver::release(byte_buffer& in) noexcept
{
    in.consume(consume_);
    consume_ = 0;
}

bool packet_receiver::valid_length(std::uint32_t len) const noexcept
{
    const std::size_t covered = cipher_->length_excluded_from_padding() ? len : std::size_t(len) + 4;
    return len >= 5 && len <= max_packet_length && covered % cipher_->block_size() == 0;
}

result<std::optional<received_packet>> packet_receiver::next(byte_buffer& in)
{
    release(in);
    if (batch_next_ < batch_.size())
        return deliver(in, 0);
    if (engine_ != nullptr && lookahead_ && !decompressor_ && in.size() >= engine_->min_batch_bytes() &&
        engine_->batching(crypto_direction::open) && open_ahead(in))
        return deliver(in, 0);

    auto data = in.data();
    pos_.seq = seq_;
    if (!length_) {
        const std::size_t prefix = cipher_->length_prefix_size();
        if (data.size() < prefix)
            return std::optional<received_packet>{};
        const std::uint32_t len = cipher_->peek_length(pos_, data.first(prefix));
        if (!valid_length(len)) {
            bad_length_ = len;
            return errc::bad_packet_length;
        }
        length_ = len;
    }
    const std::size_t packet_size = 4 + std::size_t(*length_);
    const std::size_t total = packet_size + cipher_->tag_size();
    if (data.size() < total)
        return std::optional<received_packet>{};

    if (auto r = cipher_->open_body(pos_, data.first(packet_size), data.subspan(packet_size, cipher_->tag_size()));
        !r)
        return r.error();
    return deliver(in, *length_);
}

// Reads the lengths of the whole packets at the front of `in` one after
// another and opens them together. False (nothing opened) when fewer than
// two are there: the serial path then takes the first.
bool packet_receiver::open_ahead(byte_buffer& in)
{
    const mutable_byte_span data = in.data();
    const std::size_t prefix = cipher_->length_prefix_size();
    const std::size_t tag = cipher_->tag_size();
    batch_.clear();
    batch_next_ = 0;
    packet_position pos = pos_;
    pos.seq = seq_;
    std::size_t offset = 0;
    while (batch_.size() < max_batch_packets && offset < max_batch_bytes && data.size() - offset >= prefix) {
        std::uint32_t len = 0;
        if (batch_.empty() && length_) {
            len = *length_; // peeked by the serial path already
        } else {
            len = cipher_->peek_length(pos, data.subspan(offset, prefix));
            // A bad length is the serial path's to report, in its turn.
            if (!valid_length(len))
                break;
        }
        const std::size_t total = 4 + std::size_t(len) + tag;
        if (data.size() - offset < total) {
            if (batch_.empty())
                length_ = len; // so the serial path does not peek again
            break;
        }
        batch_.push_back({offset, len, pos, errc::ok});
        offset += total;
        ++pos.seq;
        ++pos.index;
        pos.block_offset += cipher_->blocks_used(4 + std::size_t(len));
    }
    if (batch_.size() < 2) {
        if (batch_.size() == 1)
            length_ = batch_.front().packet_length;
        batch_.clear();
        return false;
    }
    length_.reset();
    auto open_one = [&](unsigned slot, std::size_t i) {
        batch_packet& bp = batch_[i];
        const std::size_t size = 4 + std::size_t(bp.packet_length);
        auto r = slot_cipher(*cipher_, clones_, slot)
                     .open_body(bp.pos, data.subspan(bp.offset, size), data.subspan(bp.offset + size, tag));
        bp.status = r ? errc::ok : r.error();
    };
    engine_->run(crypto_direction::open, batch_.size(), offset, open_one);
    return true;
}

// Hands out the packet at the front of `in`, opened already: the next one
// opened ahead (packet_length 0), or the one the serial path just opened.
result<std::optional<received_packet>> packet_receiver::deliver(byte_buffer& in, std::uint32_t packet_length)
{
    if (packet_length == 0) {
        const batch_packet& bp = batch_[batch_next_++];
        if (batch_next_ == batch_.size()) {
            batch_.clear();
            batch_next_ = 0;
        }
        if (bp.status != errc::ok) {
            // The connection ends here; what was opened after it is dropped.
            batch_.clear();
            batch_next_ = 0;
            return bp.status;
        }
        packet_length = bp.packet_length;
    }
    const std::size_t packet_size = 4 + std::size_t(packet_length);
    const std::size_t total = packet_size + cipher_->tag_size();
    const byte_span packet = in.data().first(packet_size);
    const std::uint8_t pad = packet[4];
    // At least 4 bytes of padding and at least one byte (the message number) of payload.
    if (pad < 4 || std::size_t(pad) + 2 > packet_length) {
        batch_.clear();
        batch_next_ = 0;
        return errc::bad_padding;
    }

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
