#include "common/crypto/compression.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <climits>
#include <new>
#include <stdexcept>

namespace longhaul {

namespace {

constexpr std::array<compression_info, 3> compression_table{{
    {"zlib@openssh.com", true},
    {"zlib", false},
    {"none", false},
}};

// zlib counts in uInt; slicing keeps every call within range for any span.
constexpr std::size_t max_chunk = std::size_t(1) << 30;

} // namespace

const compression_info* find_compression(std::string_view name) noexcept
{
    for (const auto& c : compression_table)
        if (c.name == name)
            return &c;
    return nullptr;
}

const std::vector<std::string_view>& supported_compressions()
{
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (const auto& c : compression_table)
            v.push_back(c.name);
        return v;
    }();
    return names;
}

// ---- compressor ----

compressor::compressor(int level) : stream_(std::make_unique<z_stream>())
{
    if (deflateInit(stream_.get(), level) != Z_OK)
        throw std::runtime_error("deflateInit failed");
}

compressor::compressor(compressor&&) noexcept = default;

compressor& compressor::operator=(compressor&& o) noexcept
{
    if (this != &o) {
        if (stream_)
            deflateEnd(stream_.get());
        stream_ = std::move(o.stream_);
        failed_ = o.failed_;
    }
    return *this;
}

compressor::~compressor()
{
    if (stream_)
        deflateEnd(stream_.get());
}

result<void> compressor::compress(byte_span in, bytes& out)
{
    if (!stream_ || failed_ || in.size() > max_chunk)
        return errc::compression_error;
    z_stream& z = *stream_;
    z.next_in = const_cast<Bytef*>(in.data());
    z.avail_in = static_cast<uInt>(in.size());
    const std::size_t start = out.size();
    // deflateBound covers a whole stream's worth of output for this input;
    // the flush adds a few bytes, so usually one round suffices.
    std::size_t room = deflateBound(&z, static_cast<uLong>(in.size())) + 16;
    for (;;) {
        const std::size_t used = out.size();
        out.resize(used + room);
        z.next_out = out.data() + used;
        z.avail_out = static_cast<uInt>(room);
        const int rc = deflate(&z, Z_PARTIAL_FLUSH);
        out.resize(used + room - z.avail_out);
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            failed_ = true;
            out.resize(start);
            return errc::compression_error;
        }
        // Space left over means deflate had nothing more to emit.
        if (z.avail_out != 0)
            break;
        room = std::min(room * 2, max_chunk);
    }
    return {};
}

std::uint64_t compressor::total_in() const noexcept { return stream_ ? stream_->total_in : 0; }
std::uint64_t compressor::total_out() const noexcept { return stream_ ? stream_->total_out : 0; }

// ---- decompressor ----

decompressor::decompressor() : stream_(std::make_unique<z_stream>())
{
    if (inflateInit(stream_.get()) != Z_OK)
        throw std::runtime_error("inflateInit failed");
}

decompressor::decompressor(decompressor&&) noexcept = default;

decompressor& decompressor::operator=(decompressor&& o) noexcept
{
    if (this != &o) {
        if (stream_)
            inflateEnd(stream_.get());
        stream_ = std::move(o.stream_);
        failed_ = o.failed_;
    }
    return *this;
}

decompressor::~decompressor()
{
    if (stream_)
        inflateEnd(stream_.get());
}

result<void> decompressor::decompress(byte_span in, bytes& out, std::size_t max_out)
{
    if (!stream_ || failed_ || in.size() > max_chunk || max_out >= max_chunk)
        return errc::compression_error;
    z_stream& z = *stream_;
    z.next_in = const_cast<Bytef*>(in.data());
    z.avail_in = static_cast<uInt>(in.size());
    const std::size_t start = out.size();
    std::size_t produced = 0;
    // Start near a typical ratio and double; never offer inflate more than one
    // byte past the cap, so a bomb is caught after at most max_out + 1 bytes
    // of work and memory.
    std::size_t room = std::max<std::size_t>(4096, in.size() * 4);
    auto fail = [&](errc e) {
        failed_ = true;
        out.resize(start);
        return e;
    };
    const std::size_t limit = start + max_out + 1;
    for (;;) {
        room = std::min(room, max_out - produced + 1);
        // Grow geometrically like the vector would, but never past the cap.
        const std::size_t need = start + produced + room;
        if (need > out.capacity())
            out.reserve(std::min(std::max(need, 2 * out.capacity()), limit));
        out.resize(need);
        z.next_out = out.data() + start + produced;
        z.avail_out = static_cast<uInt>(room);
        const int rc = inflate(&z, Z_SYNC_FLUSH);
        produced += room - z.avail_out;
        out.resize(start + produced);
        if (produced > max_out)
            return fail(errc::too_large);
        if (rc == Z_BUF_ERROR)
            break; // no progress possible: input consumed, output flushed
        if (rc != Z_OK)
            return fail(errc::compression_error); // corrupt, dictionary, or end of stream
        if (z.avail_out != 0 && z.avail_in == 0)
            break;
        room *= 2;
    }
    return {};
}

std::uint64_t decompressor::total_in() const noexcept { return stream_ ? stream_->total_in : 0; }
std::uint64_t decompressor::total_out() const noexcept { return stream_ ? stream_->total_out : 0; }

} // namespace longhaul
