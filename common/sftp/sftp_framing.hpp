// SFTP framing: every packet is a uint32 length and that many bytes (type
// first). read_frame() looks at the front of a byte stream and says whether
// a complete packet is there, without copying: a sans-I/O building block
// for the server core and the clients alike.
#pragma once

#include "common/bytes.hpp"
#include "common/errc.hpp"

#include <cstddef>
#include <cstdint>

namespace longhaul::sftp {

struct frame {
    // ok: `packet` is complete. incomplete: more bytes are needed (length
    // is set once its 4 bytes are there). malformed: a zero length (no type
    // byte). too_large: the length exceeds the limit; `length` says how many
    // bytes to skip after the 4-byte length to reach the next packet.
    errc status = errc::incomplete;
    std::uint32_t length = 0;
    byte_span packet; // type byte and payload, when ok

    // Bytes the whole frame takes in the stream (length included).
    std::size_t size() const noexcept { return std::size_t{4} + length; }
};

frame read_frame(byte_span stream, std::uint32_t max_length) noexcept;

} // namespace longhaul::sftp
