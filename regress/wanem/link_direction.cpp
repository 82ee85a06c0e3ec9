#include "link_direction.hpp"

#include <algorithm>
#include <cstring>

namespace wanem {

link_direction::link_direction(std::string label, const link_params& params, bool vnet,
                               std::uint64_t seed, std::size_t ring_bytes)
    : label_(std::move(label)), vnet_(vnet), header_(vnet ? vnet_hdr_size : 0),
      schedule_(params, seed), ring_(std::max(ring_bytes, 4 * max_frame)), scratch_(max_frame)
{
}

std::span<std::byte> link_direction::read_buffer()
{
    reserved_ = ring_.reserve(max_frame);
    return reserved_.empty() ? std::span<std::byte>(scratch_) : reserved_;
}

void link_direction::accept(std::size_t length, std::int64_t now_ns)
{
    if (reserved_.empty()) {
        stats_.frames_in++;
        stats_.ring_drops++;
        return;
    }
    const auto frame = reserved_.first(length);
    reserved_ = {};
    const frame_shape shape = inspect_frame(frame, vnet_);
    stats_.frames_in++;
    stats_.segments_in += shape.segments;
    if (shape.segments > 1)
        stats_.tso_frames++;

    // Every wire packet of a super-packet meets the loss and the queue on
    // its own, exactly as if the sender had segmented it.
    verdicts_.clear();
    bool all_pass = true;
    for (std::uint32_t i = 0; i < shape.segments; ++i) {
        const std::uint32_t ip_bytes = segment_ip_bytes(shape, i);
        stats_.bytes_in += ip_bytes;
        verdicts_.push_back(schedule_.admit(ip_bytes, now_ns));
        switch (verdicts_.back().outcome) {
        case verdict::pass:
            break;
        case verdict::lost:
            stats_.lost++;
            all_pass = false;
            break;
        case verdict::queue_full:
            stats_.queue_drops++;
            all_pass = false;
            break;
        case verdict::outage:
            stats_.outage_drops++;
            all_pass = false;
            break;
        }
    }

    if (all_pass) {
        // Delivered whole when its last segment arrives. The kernel sizes
        // TSO bursts to about 1 ms at the pacing rate, which bounds the
        // error this makes on the first segments' arrival.
        ring_.commit(length, shape.segments, verdicts_.back().deliver_ns);
    } else if (shape.splittable) {
        accept_split(frame, shape, verdicts_);
    }
    // Otherwise the frame is dropped whole; a super-packet we cannot cut
    // (never seen from Linux TCP) loses all its segments with any one.
    stats_.ring_high_water = std::max<std::uint64_t>(stats_.ring_high_water, ring_.used_bytes());
    stats_.in_flight_high_water = std::max<std::uint64_t>(stats_.in_flight_high_water, ring_.packets());
}

void link_direction::accept_split(std::span<const std::byte> frame, const frame_shape& shape,
                                  const std::vector<admission>& verdicts)
{
    stats_.tso_splits++;
    // The frame sits in the ring's uncommitted tail, which the segments are
    // about to overwrite: work from a copy.
    split_copy_.assign(frame.begin(), frame.end());
    for (std::uint32_t i = 0; i < shape.segments; ++i) {
        if (verdicts[i].outcome != verdict::pass)
            continue;
        auto room = ring_.reserve(vnet_hdr_size + shape.header_bytes + shape.mss);
        if (room.empty()) {
            stats_.ring_drops++;
            continue;
        }
        const std::size_t n = build_segment(split_copy_, shape, i, room);
        ring_.commit(n, 1, verdicts[i].deliver_ns);
    }
}

std::optional<std::int64_t> link_direction::next_due() const
{
    if (ring_.empty())
        return std::nullopt;
    return ring_.front().deliver_ns;
}

} // namespace wanem
