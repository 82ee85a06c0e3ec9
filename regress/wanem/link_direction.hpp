// One direction of the emulated path: frames read from one TUN device wait
// here until their delivery time, then are written to the other.
#pragma once

#include "gso.hpp"
#include "link_schedule.hpp"
#include "packet_ring.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace wanem {

struct direction_stats {
    std::uint64_t frames_in = 0;      // reads from the device (TSO frames count once)
    std::uint64_t segments_in = 0;    // wire packets those frames stand for
    std::uint64_t bytes_in = 0;       // IP bytes, as if segmented
    std::uint64_t frames_out = 0;
    std::uint64_t segments_out = 0;
    std::uint64_t bytes_out = 0;
    std::uint64_t lost = 0;           // segments dropped by random loss
    std::uint64_t queue_drops = 0;    // segments dropped by the full drop-tail queue
    std::uint64_t outage_drops = 0;   // segments dropped while the link was down
    std::uint64_t ring_drops = 0;     // frames dropped because packet storage was full
    std::uint64_t write_errors = 0;
    std::uint64_t tso_frames = 0;
    std::uint64_t tso_splits = 0;     // super-packets cut because part of them was dropped
    std::uint64_t ring_high_water = 0; // bytes of storage in use
    std::uint64_t in_flight_high_water = 0; // frames queued or on the wire
    std::int64_t late_sum_ns = 0;     // how far behind schedule frames left
    std::int64_t late_max_ns = 0;
};

class link_direction {
public:
    link_direction(std::string label, const link_params& params, bool vnet,
                   std::uint64_t seed, std::size_t ring_bytes);

    // Largest frame a TUN read can return: 64 KiB IP packet plus vnet header.
    static constexpr std::size_t max_frame = 65536 + 256;

    // Buffer for the next read: the ring's tail, or a scratch buffer when the
    // ring is full (the frame is then counted and dropped by accept()).
    std::span<std::byte> read_buffer();
    // Takes the 'length' bytes just read into read_buffer() at now_ns.
    void accept(std::size_t length, std::int64_t now_ns);

    std::optional<std::int64_t> next_due() const;

    // Hands every frame due by limit_ns to write(span) in order; write
    // returns false on an error, which is counted. now_ns measures lateness.
    template <class Write>
    std::size_t release(std::int64_t now_ns, std::int64_t limit_ns, Write&& write)
    {
        std::size_t n = 0;
        while (!ring_.empty() && ring_.front().deliver_ns <= limit_ns) {
            const packet_slot& s = ring_.front();
            const std::int64_t late = now_ns - s.deliver_ns;
            if (late > 0) {
                stats_.late_sum_ns += late;
                stats_.late_max_ns = std::max(stats_.late_max_ns, late);
            }
            if (write(ring_.bytes(s))) {
                stats_.frames_out++;
                stats_.segments_out += s.segments;
                stats_.bytes_out += s.length - header_;
            } else {
                stats_.write_errors++;
            }
            ring_.pop();
            ++n;
        }
        return n;
    }

    const std::string& label() const { return label_; }
    const direction_stats& stats() const { return stats_; }
    const link_schedule& schedule() const { return schedule_; }
    void set_down(bool down) { schedule_.set_down(down); }

private:
    void accept_split(std::span<const std::byte> frame, const frame_shape& shape,
                      const std::vector<admission>& verdicts);

    std::string label_;
    bool vnet_;
    std::size_t header_; // vnet header bytes in front of each stored frame
    link_schedule schedule_;
    packet_ring ring_;
    std::vector<std::byte> scratch_;
    std::vector<std::byte> split_copy_;
    std::vector<admission> verdicts_;
    std::span<std::byte> reserved_; // ring space handed out by read_buffer()
    direction_stats stats_;
};

} // namespace wanem
