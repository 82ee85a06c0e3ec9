#include "common/buffer.hpp"

#include <algorithm>
#include <cstring>

namespace longhaul {

mutable_byte_span byte_buffer::prepare(std::size_t n)
{
    const std::size_t live = size();
    if (n > max_ - live)
        return {};
    if (storage_.size() - end_ < n) {
        if (begin_ != 0 && storage_.size() - live >= n && begin_ >= live) {
            // Enough room once the consumed prefix is reclaimed, and the move is
            // cheaper than what was consumed: slide down.
            std::memmove(storage_.data(), storage_.data() + begin_, live);
        } else {
            bytes grown(std::max(live + n, std::min(max_, storage_.size() * 2)));
            if (live)
                std::memcpy(grown.data(), storage_.data() + begin_, live);
            storage_.swap(grown);
        }
        begin_ = 0;
        end_ = live;
    }
    return {storage_.data() + end_, n};
}

void byte_buffer::consume(std::size_t n) noexcept
{
    begin_ += std::min(n, size());
    if (begin_ == end_)
        begin_ = end_ = 0;
}

bool byte_buffer::append(byte_span b)
{
    auto dst = prepare(b.size());
    if (dst.size() < b.size())
        return false;
    if (!b.empty())
        std::memcpy(dst.data(), b.data(), b.size());
    commit(b.size());
    return true;
}

void byte_buffer::wipe() noexcept
{
    cleanse(storage_.data(), storage_.size());
    clear();
}

} // namespace longhaul
