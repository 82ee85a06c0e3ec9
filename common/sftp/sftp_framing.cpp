#include "common/sftp/sftp_framing.hpp"

#include "common/wire.hpp"

namespace longhaul::sftp {

frame read_frame(byte_span stream, std::uint32_t max_length) noexcept
{
    frame f;
    if (stream.size() < 4)
        return f;
    f.length = load_u32(stream.data());
    if (f.length == 0) {
        f.status = errc::malformed;
        return f;
    }
    if (f.length > max_length) {
        f.status = errc::too_large;
        return f;
    }
    if (stream.size() - 4 < f.length)
        return f;
    f.status = errc::ok;
    f.packet = stream.subspan(4, f.length);
    return f;
}

} // namespace longhaul::sftp
