// Tunnel device forwarding (ssh -w, OpenSSH's PROTOCOL §2.3): the
// "tun@openssh.com" channel open and the framing of its data. The open
// carries the tunnel mode (1 point-to-point: IP packets, a tun device; 2
// ethernet: whole frames, a tap device) and the unit the peer should use
// (0x7fffffff: any). Each CHANNEL_DATA message is one packet or frame, so
// both ends must keep packet boundaries. In point-to-point mode every
// packet starts with a 4-byte address family in OpenBSD's numbering
// (AF_INET 2, AF_INET6 24): OpenBSD's tun(4) reads and writes it, and
// OpenSSH's Linux port (sys_tun_infilter/outfilter) adds it from the IP
// version and strips it, whatever it says, before writing to the device.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace longhaul::forward {

inline constexpr std::string_view tun_channel_type = "tun@openssh.com";

inline constexpr std::uint32_t tun_mode_point_to_point = 1;
inline constexpr std::uint32_t tun_mode_ethernet = 2;
// The unit "any" (SSH_TUNID_ANY) and the largest named unit (SSH_TUNID_MAX).
inline constexpr std::uint32_t tun_unit_any = 0x7fffffff;
inline constexpr std::uint32_t tun_unit_max = 0x7ffffffd;

inline constexpr std::uint32_t openbsd_af_inet = 2;
inline constexpr std::uint32_t openbsd_af_inet6 = 24;
inline constexpr std::size_t tun_af_header_size = 4;

// The open's type-specific data. Values are kept as sent: a mode other
// than 1 or 2, or a unit over INT_MAX, is the server's to refuse (OpenSSH
// refuses the channel; it does not disconnect).
struct tun_open {
    std::uint32_t mode = tun_mode_point_to_point;
    std::uint32_t unit = tun_unit_any;
    bytes encode() const;
    // Truncation is errc::malformed, bytes after it errc::trailing_data.
    static result<tun_open> decode(byte_span data);
};

// The address family for an IP packet read from a Linux tun device (no
// packet information): 24 for version 6, else 2, as OpenSSH decides.
std::uint32_t tun_packet_family(byte_span packet) noexcept;

// Device -> channel: writes the header for `packet` into the 4 bytes at
// `header` (big-endian), the packet following it in the same buffer.
void put_af_header(std::uint8_t* header, byte_span packet) noexcept;

// Channel -> device: the packet inside a point-to-point message, or
// nullopt for a message too short to hold the header (OpenSSH's
// outfilter then stops the channel's output).
std::optional<byte_span> strip_af_header(byte_span message) noexcept;

} // namespace longhaul::forward
