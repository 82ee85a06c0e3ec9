#include "channel/forward/tun_messages.hpp"

#include "common/wire.hpp"

namespace longhaul::forward {

bytes tun_open::encode() const
{
    bytes out;
    wire_writer(out).u32(mode).u32(unit);
    return out;
}

result<tun_open> tun_open::decode(byte_span data)
{
    wire_reader r(data);
    tun_open m;
    m.mode = r.u32();
    m.unit = r.u32();
    if (auto f = r.finish(); !f)
        return f.error() == errc::incomplete ? errc::malformed : f.error();
    return m;
}

std::uint32_t tun_packet_family(byte_span packet) noexcept
{
    // An empty packet or any version but 6 counts as IPv4, as OpenSSH's
    // switch on ip_v does.
    if (!packet.empty() && (packet[0] >> 4) == 6)
        return openbsd_af_inet6;
    return openbsd_af_inet;
}

void put_af_header(std::uint8_t* header, byte_span packet) noexcept
{
    const std::uint32_t af = tun_packet_family(packet);
    header[0] = static_cast<std::uint8_t>(af >> 24);
    header[1] = static_cast<std::uint8_t>(af >> 16);
    header[2] = static_cast<std::uint8_t>(af >> 8);
    header[3] = static_cast<std::uint8_t>(af);
}

std::optional<byte_span> strip_af_header(byte_span message) noexcept
{
    if (message.size() < tun_af_header_size)
        return std::nullopt;
    return message.subspan(tun_af_header_size);
}

} // namespace longhaul::forward
