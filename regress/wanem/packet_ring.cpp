#include "packet_ring.hpp"

#include <cassert>
#include <stdexcept>

namespace wanem {

packet_ring::packet_ring(std::size_t capacity)
    // Default-initialised (not zeroed) so the kernel backs pages lazily.
    : data_(new std::byte[capacity]), capacity_(capacity)
{
    if (capacity >= (std::size_t{1} << 32))
        throw std::invalid_argument("packet ring larger than 4 GiB");
}

std::span<std::byte> packet_ring::reserve(std::size_t need)
{
    reserved_len_ = 0;
    if (need > capacity_)
        return {};
    if (slots_.empty()) {
        tail_ = 0;
    } else {
        const std::size_t head = slots_.front().offset;
        if (tail_ >= head) {
            // Used region is [head, tail): room after tail, else wrap to 0.
            // Strictly less than head after a wrap, so tail == head always
            // means "not wrapped".
            if (capacity_ - tail_ < need) {
                if (need >= head)
                    return {};
                reserved_at_ = 0;
                reserved_len_ = need;
                return {data_.get(), need};
            }
        } else if (head - tail_ <= need) {
            return {};
        }
    }
    reserved_at_ = tail_;
    reserved_len_ = need;
    return {data_.get() + tail_, need};
}

void packet_ring::commit(std::size_t length, std::uint32_t segments, std::int64_t deliver_ns)
{
    assert(length <= reserved_len_);
    slots_.push_back({static_cast<std::uint32_t>(reserved_at_), static_cast<std::uint32_t>(length),
                      segments, deliver_ns});
    tail_ = reserved_at_ + length;
    reserved_len_ = 0;
}

void packet_ring::pop()
{
    slots_.pop_front();
    if (slots_.empty())
        tail_ = 0;
}

std::size_t packet_ring::used_bytes() const
{
    if (slots_.empty())
        return 0;
    const std::size_t head = slots_.front().offset;
    return tail_ >= head ? tail_ - head : capacity_ - head + tail_;
}

} // namespace wanem
