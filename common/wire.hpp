// RFC 4251 §5 data types: a bounds-checked reader over a byte span and an
// appending writer.
//
// The reader is "sticky": the first failure is recorded, every later read
// returns an empty value, and the caller checks once with ok()/finish(). That
// keeps message decoders linear and makes it impossible to act on a value read
// past a failure without also seeing the failure.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace longhaul {

// Largest string the reader accepts by default: OpenSSH's maximum packet.
inline constexpr std::size_t max_wire_string = 256 * 1024;
// Largest mpint magnitude accepted by default (16384-bit, OpenSSH's SSHBUF_MAX_BIGNUM).
inline constexpr std::size_t max_mpint_bytes = 16384 / 8 + 1;

class wire_reader {
public:
    explicit wire_reader(byte_span data) noexcept : data_(data) {}

    std::uint8_t u8() noexcept;
    bool boolean() noexcept; // any non-zero byte is TRUE (RFC 4251)
    std::uint32_t u32() noexcept;
    std::uint64_t u64() noexcept;
    // A length-prefixed string, returned as a view into the input.
    byte_span string(std::size_t max = max_wire_string) noexcept;
    std::string_view text(std::size_t max = max_wire_string) noexcept;
    // A non-negative mpint; returns its magnitude without leading zero bytes
    // (empty for zero). Negative values are rejected as malformed.
    byte_span mpint(std::size_t max_bytes = max_mpint_bytes) noexcept;
    // A name-list: printable US-ASCII only (no spaces or control bytes).
    std::string_view name_list(std::size_t max = 64 * 1024) noexcept;
    // Exactly n raw bytes.
    byte_span raw(std::size_t n) noexcept;
    // Everything not yet read.
    byte_span rest() noexcept;

    std::size_t remaining() const noexcept { return ok() ? data_.size() - pos_ : 0; }
    std::size_t position() const noexcept { return pos_; }
    bool ok() const noexcept { return err_ == errc::ok; }
    errc error() const noexcept { return err_; }
    // Records a failure found by the caller (the first one wins).
    void fail(errc e) noexcept
    {
        if (err_ == errc::ok)
            err_ = e;
    }
    // Succeeds when every read succeeded and nothing is left over.
    result<void> finish() noexcept;

private:
    bool take(std::size_t n, byte_span& out) noexcept;

    byte_span data_;
    std::size_t pos_ = 0;
    errc err_ = errc::ok;
};

class wire_writer {
public:
    explicit wire_writer(bytes& out) noexcept : out_(&out) {}

    wire_writer& u8(std::uint8_t v);
    wire_writer& boolean(bool v) { return u8(v ? 1 : 0); }
    wire_writer& u32(std::uint32_t v);
    wire_writer& u64(std::uint64_t v);
    wire_writer& string(byte_span s);
    wire_writer& string(std::string_view s) { return string(as_bytes(s)); }
    wire_writer& string(const char* s) { return string(std::string_view(s)); }
    // Encodes an unsigned big-endian magnitude as a (non-negative) mpint.
    wire_writer& mpint(byte_span magnitude);
    wire_writer& raw(byte_span s);
    wire_writer& raw(std::string_view s) { return raw(as_bytes(s)); }

    // Nested encodings (a key blob inside a message): begin returns a mark,
    // end patches the length in.
    std::size_t begin_string();
    void end_string(std::size_t mark);

    bytes& buffer() noexcept { return *out_; }

private:
    bytes* out_;
};

// Big-endian loads and stores, used by the packet layer directly.
inline std::uint32_t load_u32(const std::uint8_t* p) noexcept
{
    return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | std::uint32_t(p[3]);
}
inline void store_u32(std::uint8_t* p, std::uint32_t v) noexcept
{
    p[0] = std::uint8_t(v >> 24);
    p[1] = std::uint8_t(v >> 16);
    p[2] = std::uint8_t(v >> 8);
    p[3] = std::uint8_t(v);
}
inline std::uint64_t load_u64(const std::uint8_t* p) noexcept
{
    return std::uint64_t(load_u32(p)) << 32 | load_u32(p + 4);
}
inline void store_u64(std::uint8_t* p, std::uint64_t v) noexcept
{
    store_u32(p, std::uint32_t(v >> 32));
    store_u32(p + 4, std::uint32_t(v));
}

} // namespace longhaul
