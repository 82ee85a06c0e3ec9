#include "gso.hpp"

#include <algorithm>
#include <cstring>

namespace wanem {

namespace {

std::uint16_t load16_native(const std::byte* p)
{
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

void store16_native(std::byte* p, std::uint16_t v) { std::memcpy(p, &v, 2); }

std::uint16_t load16_be(const std::byte* p)
{
    return static_cast<std::uint16_t>(std::to_integer<unsigned>(p[0]) << 8 | std::to_integer<unsigned>(p[1]));
}

void store16_be(std::byte* p, std::uint16_t v)
{
    p[0] = std::byte(v >> 8);
    p[1] = std::byte(v & 0xff);
}

std::uint32_t load32_be(const std::byte* p)
{
    return std::uint32_t{load16_be(p)} << 16 | load16_be(p + 2);
}

void store32_be(std::byte* p, std::uint32_t v)
{
    store16_be(p, static_cast<std::uint16_t>(v >> 16));
    store16_be(p + 2, static_cast<std::uint16_t>(v));
}

constexpr std::uint8_t tcp_fin = 0x01;
constexpr std::uint8_t tcp_psh = 0x08;
constexpr std::uint8_t tcp_cwr = 0x80;

} // namespace

std::uint64_t ones_sum(std::span<const std::byte> data, std::uint64_t acc)
{
    std::size_t i = 0;
    for (; i + 1 < data.size(); i += 2)
        acc += load16_be(data.data() + i);
    if (i < data.size())
        acc += std::to_integer<std::uint64_t>(data[i]) << 8;
    return acc;
}

std::uint16_t fold_sum(std::uint64_t acc)
{
    while (acc >> 16)
        acc = (acc & 0xffff) + (acc >> 16);
    return static_cast<std::uint16_t>(acc);
}

frame_shape inspect_frame(std::span<const std::byte> frame, bool has_vnet)
{
    frame_shape s;
    const std::size_t skip = has_vnet ? vnet_hdr_size : 0;
    if (frame.size() < skip)
        return s;
    s.ip_bytes = static_cast<std::uint32_t>(frame.size() - skip);
    if (!has_vnet)
        return s;

    const auto gso_type = std::to_integer<std::uint8_t>(frame[1]) & 0x7f;
    const std::uint16_t gso_size = load16_native(frame.data() + 4);
    if (gso_type == vnet_gso_none || gso_size == 0)
        return s;

    // Work out the header length ourselves: hdr_len is only a hint.
    const std::byte* ip = frame.data() + skip;
    const std::size_t len = s.ip_bytes;
    std::size_t ip_hdr = 0;
    if (len >= 20 && (std::to_integer<unsigned>(ip[0]) >> 4) == 4 && gso_type == vnet_gso_tcpv4) {
        ip_hdr = (std::to_integer<unsigned>(ip[0]) & 0x0f) * 4u;
        if (ip_hdr < 20 || std::to_integer<unsigned>(ip[9]) != 6)
            ip_hdr = 0;
    } else if (len >= 40 && (std::to_integer<unsigned>(ip[0]) >> 4) == 6 && gso_type == vnet_gso_tcpv6) {
        // Extension headers are not expected from a local TCP socket; such a
        // frame is still counted correctly, just never cut.
        if (std::to_integer<unsigned>(ip[6]) == 6)
            ip_hdr = 40;
    }
    std::size_t tcp_hdr = 0;
    if (ip_hdr != 0 && len >= ip_hdr + 20)
        tcp_hdr = (std::to_integer<unsigned>(ip[ip_hdr + 12]) >> 4) * 4u;
    if (tcp_hdr < 20 || len < ip_hdr + tcp_hdr) {
        // Unknown layout: estimate the segment count from the hint so that
        // the bottleneck is still charged for every wire packet.
        const std::uint16_t hint = load16_native(frame.data() + 2);
        const std::size_t h = std::min<std::size_t>(hint, len);
        s.segments = static_cast<std::uint32_t>(std::max<std::size_t>(1, (len - h + gso_size - 1) / gso_size));
        s.header_bytes = static_cast<std::uint32_t>(h);
        s.payload_bytes = static_cast<std::uint32_t>(len - h);
        s.mss = gso_size;
        return s;
    }
    s.header_bytes = static_cast<std::uint32_t>(ip_hdr + tcp_hdr);
    s.payload_bytes = static_cast<std::uint32_t>(len - s.header_bytes);
    s.mss = gso_size;
    s.segments = std::max<std::uint32_t>(1, (s.payload_bytes + gso_size - 1) / gso_size);
    s.splittable = s.segments > 1;
    return s;
}

std::uint32_t segment_ip_bytes(const frame_shape& shape, std::uint32_t index)
{
    if (shape.segments <= 1)
        return shape.ip_bytes;
    const std::uint32_t start = index * shape.mss;
    return shape.header_bytes + std::min(shape.mss, shape.payload_bytes - start);
}

std::size_t build_segment(std::span<const std::byte> frame, const frame_shape& shape,
                          std::uint32_t index, std::span<std::byte> out)
{
    const std::byte* in_ip = frame.data() + vnet_hdr_size;
    const std::uint32_t hdr = shape.header_bytes;
    const std::uint32_t start = index * shape.mss;
    const std::uint32_t payload = std::min(shape.mss, shape.payload_bytes - start);
    const std::size_t total = vnet_hdr_size + hdr + payload;

    std::memcpy(out.data(), frame.data(), vnet_hdr_size);
    std::memcpy(out.data() + vnet_hdr_size, in_ip, hdr);
    std::memcpy(out.data() + vnet_hdr_size + hdr, in_ip + hdr + start, payload);

    std::byte* vh = out.data();
    const bool partial = (std::to_integer<std::uint8_t>(vh[0]) & vnet_flag_needs_csum) != 0;
    vh[1] = std::byte{vnet_gso_none};
    store16_native(vh + 2, 0); // hdr_len
    store16_native(vh + 4, 0); // gso_size

    std::byte* ip = out.data() + vnet_hdr_size;
    const bool v4 = (std::to_integer<unsigned>(ip[0]) >> 4) == 4;
    const std::size_t ip_hdr = v4 ? (std::to_integer<unsigned>(ip[0]) & 0x0f) * 4u : 40;
    std::byte* tcp = ip + ip_hdr;
    const auto tcp_len = static_cast<std::uint16_t>(hdr - ip_hdr + payload);

    if (v4) {
        store16_be(ip + 2, static_cast<std::uint16_t>(hdr + payload));
        // Linux numbers the segments of a TSO burst consecutively.
        store16_be(ip + 4, static_cast<std::uint16_t>(load16_be(ip + 4) + index));
        store16_be(ip + 10, 0);
        store16_be(ip + 10, static_cast<std::uint16_t>(~fold_sum(ones_sum({ip, ip_hdr}))));
    } else {
        store16_be(ip + 4, tcp_len);
    }

    store32_be(tcp + 4, load32_be(tcp + 4) + start);
    auto flags = std::to_integer<std::uint8_t>(tcp[13]);
    if (index + 1 != shape.segments)
        flags &= static_cast<std::uint8_t>(~(tcp_fin | tcp_psh));
    if (index != 0)
        flags &= static_cast<std::uint8_t>(~tcp_cwr);
    tcp[13] = std::byte{flags};

    std::uint64_t pseudo = 0;
    if (v4) {
        pseudo = ones_sum({ip + 12, 8});
    } else {
        pseudo = ones_sum({ip + 8, 32});
    }
    pseudo += 6 + tcp_len;
    if (partial) {
        // CHECKSUM_PARTIAL: the field holds the pseudo-header sum and
        // whoever finishes the checksum adds the segment itself.
        store16_be(tcp + 16, fold_sum(pseudo));
    } else {
        store16_be(tcp + 16, 0);
        store16_be(tcp + 16, static_cast<std::uint16_t>(~fold_sum(ones_sum({tcp, tcp_len}, pseudo))));
    }
    return total;
}

} // namespace wanem
