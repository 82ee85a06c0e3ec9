// FIFO storage for packets in flight through one direction of the link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>

namespace wanem {

struct packet_slot {
    std::uint32_t offset;
    std::uint32_t length;
    std::uint32_t segments;   // wire packets this frame stands for (TSO)
    std::int64_t deliver_ns;
};

// Packets leave a direction in the order they entered (jitter never
// reorders), so one contiguous byte ring holds them all: no per-packet
// allocation, and a frame is read from the TUN device straight into its
// final place. Memory is only touched as the ring advances, so a ring sized
// for a 200 ms gigabit path costs nothing on a short test.
class packet_ring {
public:
    explicit packet_ring(std::size_t capacity);

    // Space for a frame of up to 'need' bytes at the tail, or an empty span
    // when the ring is full. Only the latest reservation can be committed.
    std::span<std::byte> reserve(std::size_t need);
    void commit(std::size_t length, std::uint32_t segments, std::int64_t deliver_ns);

    bool empty() const { return slots_.empty(); }
    std::size_t packets() const { return slots_.size(); }
    const packet_slot& front() const { return slots_.front(); }
    std::span<const std::byte> bytes(const packet_slot& s) const
    {
        return {data_.get() + s.offset, s.length};
    }
    void pop();
    // Bytes between the oldest packet and the tail, dead space included.
    std::size_t used_bytes() const;
    std::size_t capacity() const { return capacity_; }

private:
    std::unique_ptr<std::byte[]> data_;
    std::size_t capacity_;
    std::size_t tail_ = 0;
    std::size_t reserved_at_ = 0;
    std::size_t reserved_len_ = 0;
    std::deque<packet_slot> slots_;
};

} // namespace wanem
