// TCP super-packets (TSO/GSO) as the TUN device hands them over with
// IFF_VNET_HDR: how many wire packets one stands for, and how to cut it into
// those packets when some of them must be dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace wanem {

// struct virtio_net_hdr, native byte order (x86: little-endian legacy header).
constexpr std::size_t vnet_hdr_size = 10;
constexpr std::uint8_t vnet_flag_needs_csum = 1;
constexpr std::uint8_t vnet_gso_none = 0;
constexpr std::uint8_t vnet_gso_tcpv4 = 1;
constexpr std::uint8_t vnet_gso_tcpv6 = 4;

struct frame_shape {
    std::uint32_t segments = 1;     // wire packets
    std::uint32_t header_bytes = 0; // IP + TCP header repeated in every segment
    std::uint32_t payload_bytes = 0;
    std::uint32_t mss = 0;
    std::uint32_t ip_bytes = 0;     // length of the frame without the vnet header
    bool splittable = false;        // a TCP super-packet we know how to cut
};

// 'frame' is the vnet header (when has_vnet) followed by the IP packet.
frame_shape inspect_frame(std::span<const std::byte> frame, bool has_vnet);

// IP bytes of wire packet i of the frame.
std::uint32_t segment_ip_bytes(const frame_shape& shape, std::uint32_t index);

// Writes wire packet i of a splittable frame (with its own vnet header, no
// GSO) into out, which must hold vnet_hdr_size + header_bytes + mss bytes.
// Returns the frame length. Sequence numbers, lengths, IPv4 id and header
// checksum are rewritten; the TCP checksum stays "partial" (pseudo-header
// sum) when the kernel asked for that, and is computed in full otherwise.
std::size_t build_segment(std::span<const std::byte> frame, const frame_shape& shape,
                          std::uint32_t index, std::span<std::byte> out);

// RFC 1071 one's-complement sum of big-endian 16-bit words, unfolded.
std::uint64_t ones_sum(std::span<const std::byte> data, std::uint64_t acc = 0);
std::uint16_t fold_sum(std::uint64_t acc);

} // namespace wanem
