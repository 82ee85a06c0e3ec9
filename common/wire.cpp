#include "common/wire.hpp"

namespace longhaul {

bool wire_reader::take(std::size_t n, byte_span& out) noexcept
{
    if (!ok())
        return false;
    if (n > data_.size() - pos_) {
        fail(errc::incomplete);
        return false;
    }
    out = data_.subspan(pos_, n);
    pos_ += n;
    return true;
}

std::uint8_t wire_reader::u8() noexcept
{
    byte_span b;
    return take(1, b) ? b[0] : 0;
}

bool wire_reader::boolean() noexcept { return u8() != 0; }

std::uint32_t wire_reader::u32() noexcept
{
    byte_span b;
    return take(4, b) ? load_u32(b.data()) : 0;
}

std::uint64_t wire_reader::u64() noexcept
{
    byte_span b;
    return take(8, b) ? load_u64(b.data()) : 0;
}

byte_span wire_reader::string(std::size_t max) noexcept
{
    std::uint32_t n = u32();
    if (!ok())
        return {};
    if (n > max) {
        fail(errc::too_large);
        return {};
    }
    byte_span b;
    take(n, b);
    return b;
}

std::string_view wire_reader::text(std::size_t max) noexcept { return as_string_view(string(max)); }

byte_span wire_reader::mpint(std::size_t max_bytes) noexcept
{
    // One more byte than the magnitude limit allows for the sign byte.
    byte_span b = string(max_bytes + 1);
    if (!ok())
        return {};
    if (!b.empty() && (b[0] & 0x80) != 0) {
        fail(errc::malformed);
        return {};
    }
    // Leading zeros beyond the sign byte are tolerated, as OpenSSH does, but stripped.
    while (!b.empty() && b[0] == 0)
        b = b.subspan(1);
    if (b.size() > max_bytes) {
        fail(errc::too_large);
        return {};
    }
    return b;
}

std::string_view wire_reader::name_list(std::size_t max) noexcept
{
    byte_span b = string(max);
    for (auto c : b) {
        if (c <= 0x20 || c >= 0x7f) {
            fail(errc::malformed);
            return {};
        }
    }
    return as_string_view(b);
}

byte_span wire_reader::raw(std::size_t n) noexcept
{
    byte_span b;
    take(n, b);
    return b;
}

byte_span wire_reader::rest() noexcept
{
    if (!ok())
        return {};
    auto b = data_.subspan(pos_);
    pos_ = data_.size();
    return b;
}

result<void> wire_reader::finish() noexcept
{
    if (!ok())
        return err_;
    if (pos_ != data_.size())
        return errc::trailing_data;
    return {};
}

wire_writer& wire_writer::u8(std::uint8_t v)
{
    out_->push_back(v);
    return *this;
}

wire_writer& wire_writer::u32(std::uint32_t v)
{
    std::uint8_t b[4];
    store_u32(b, v);
    out_->insert(out_->end(), b, b + 4);
    return *this;
}

wire_writer& wire_writer::u64(std::uint64_t v)
{
    std::uint8_t b[8];
    store_u64(b, v);
    out_->insert(out_->end(), b, b + 8);
    return *this;
}

wire_writer& wire_writer::string(byte_span s)
{
    u32(static_cast<std::uint32_t>(s.size()));
    return raw(s);
}

wire_writer& wire_writer::mpint(byte_span magnitude)
{
    while (!magnitude.empty() && magnitude[0] == 0)
        magnitude = magnitude.subspan(1);
    const bool pad = !magnitude.empty() && (magnitude[0] & 0x80) != 0;
    u32(static_cast<std::uint32_t>(magnitude.size() + (pad ? 1 : 0)));
    if (pad)
        u8(0);
    return raw(magnitude);
}

wire_writer& wire_writer::raw(byte_span s)
{
    out_->insert(out_->end(), s.begin(), s.end());
    return *this;
}

std::size_t wire_writer::begin_string()
{
    std::size_t mark = out_->size();
    u32(0);
    return mark;
}

void wire_writer::end_string(std::size_t mark)
{
    store_u32(out_->data() + mark, static_cast<std::uint32_t>(out_->size() - mark - 4));
}

} // namespace longhaul
