// SSH payload compression (RFC 4253 §6.2): "zlib", and "zlib@openssh.com",
// which is the same stream started only after user authentication succeeds
// (the transport decides when; the streams here do not care).
//
// Each direction runs one deflate stream for the life of the connection (or
// until the next key exchange that renegotiates it); every packet payload is
// compressed and then flushed with Z_PARTIAL_FLUSH, so the peer can inflate
// it completely without waiting for later packets, as OpenSSH does.
//
// Output is appended to a caller-owned buffer, which the transport reuses
// packet after packet, so a steady stream allocates nothing.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

typedef struct z_stream_s z_stream;

namespace longhaul {

struct compression_info {
    std::string_view name;
    bool delayed; // starts only after authentication (zlib@openssh.com)
};

// nullptr for unknown names; "none" is included.
const compression_info* find_compression(std::string_view name) noexcept;
// OpenSSH's order when compression is requested: "zlib@openssh.com", "zlib", "none".
const std::vector<std::string_view>& supported_compressions();

class compressor {
public:
    // level: zlib's 1..9; OpenSSH uses 6.
    explicit compressor(int level = 6);
    compressor(compressor&&) noexcept;
    compressor& operator=(compressor&&) noexcept;
    ~compressor();

    // Compresses `in` and appends it, flushed, to `out`.
    result<void> compress(byte_span in, bytes& out);

    std::uint64_t total_in() const noexcept;
    std::uint64_t total_out() const noexcept;

private:
    std::unique_ptr<z_stream> stream_; // zlib keeps a pointer back to it: never moved
    bool failed_ = false;
};

class decompressor {
public:
    decompressor();
    decompressor(decompressor&&) noexcept;
    decompressor& operator=(decompressor&&) noexcept;
    ~decompressor();

    // Inflates one packet's compressed payload and appends it to `out`.
    // errc::too_large when the output would exceed max_out bytes (a
    // decompression bomb), errc::compression_error on a corrupt stream or a
    // stream that ends (SSH streams never do). After any error the stream
    // is unusable and `out` is left as it was.
    result<void> decompress(byte_span in, bytes& out, std::size_t max_out);

    std::uint64_t total_in() const noexcept;
    std::uint64_t total_out() const noexcept;

private:
    std::unique_ptr<z_stream> stream_;
    bool failed_ = false;
};

} // namespace longhaul
