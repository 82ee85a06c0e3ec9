// An owning byte queue with sshbuf-like semantics: prepare() space at the
// back, commit() what was written, consume() from the front. Consumed space is
// reclaimed by moving the live bytes down only when that is cheap relative to
// the data already consumed, so steady streaming does no per-packet copying.
#pragma once

#include "common/bytes.hpp"

#include <cstddef>
#include <limits>

namespace longhaul {

class byte_buffer {
public:
    explicit byte_buffer(std::size_t max_size = std::numeric_limits<std::size_t>::max()) : max_(max_size) {}

    // Live bytes.
    byte_span data() const noexcept { return {storage_.data() + begin_, end_ - begin_}; }
    mutable_byte_span data() noexcept { return {storage_.data() + begin_, end_ - begin_}; }
    std::size_t size() const noexcept { return end_ - begin_; }
    bool empty() const noexcept { return begin_ == end_; }
    std::size_t max_size() const noexcept { return max_; }

    // Writable space of at least n bytes after the live bytes, or an empty
    // span when that would exceed max_size().
    mutable_byte_span prepare(std::size_t n);
    void commit(std::size_t n) noexcept { end_ += n; }
    void consume(std::size_t n) noexcept;
    // prepare + copy + commit; false when it would exceed max_size().
    bool append(byte_span b);
    void clear() noexcept { begin_ = end_ = 0; }
    // Wipes the storage (buffers that held plaintext of secrets).
    void wipe() noexcept;

private:
    bytes storage_;
    std::size_t begin_ = 0;
    std::size_t end_ = 0;
    std::size_t max_;
};

} // namespace longhaul
