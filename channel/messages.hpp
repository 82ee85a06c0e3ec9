// Connection protocol message numbers (RFC 4254 §9) and codecs for the
// session channel requests that ssh and sshd exchange (RFC 4254 §6,
// OpenSSH's PROTOCOL). One struct per request with encode/decode; decoders
// reject truncated input and trailing bytes.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::msg {

inline constexpr std::uint8_t global_request = 80;
inline constexpr std::uint8_t request_success = 81;
inline constexpr std::uint8_t request_failure = 82;
inline constexpr std::uint8_t channel_open = 90;
inline constexpr std::uint8_t channel_open_confirmation = 91;
inline constexpr std::uint8_t channel_open_failure = 92;
inline constexpr std::uint8_t channel_window_adjust = 93;
inline constexpr std::uint8_t channel_data = 94;
inline constexpr std::uint8_t channel_extended_data = 95;
inline constexpr std::uint8_t channel_eof = 96;
inline constexpr std::uint8_t channel_close = 97;
inline constexpr std::uint8_t channel_request = 98;
inline constexpr std::uint8_t channel_success = 99;
inline constexpr std::uint8_t channel_failure = 100;

inline constexpr bool is_connection_message(std::uint8_t t) noexcept { return t >= 80 && t <= 127; }

} // namespace longhaul::msg

namespace longhaul {

enum class open_failure_reason : std::uint32_t {
    administratively_prohibited = 1,
    connect_failed = 2,
    unknown_channel_type = 3,
    resource_shortage = 4,
};

inline constexpr std::uint32_t extended_data_stderr = 1;

// "pty-req"
struct pty_request {
    std::string term;
    std::uint32_t cols = 0, rows = 0, width_px = 0, height_px = 0;
    bytes modes; // encoded terminal modes (RFC 4254 §8)
    bytes encode() const;
    static result<pty_request> decode(byte_span data);
};

// "window-change"
struct window_change_request {
    std::uint32_t cols = 0, rows = 0, width_px = 0, height_px = 0;
    bytes encode() const;
    static result<window_change_request> decode(byte_span data);
};

// "env"
struct env_request {
    std::string name, value;
    bytes encode() const;
    static result<env_request> decode(byte_span data);
};

// "exec" (command) and "subsystem" (name): one string each.
struct string_request {
    std::string value;
    bytes encode() const;
    static result<string_request> decode(byte_span data, std::size_t max = 256 * 1024);
};

// "signal": signal name without "SIG".
struct signal_request {
    std::string name;
    bytes encode() const;
    static result<signal_request> decode(byte_span data);
};

// "exit-status"
struct exit_status_request {
    std::uint32_t status = 0;
    bytes encode() const;
    static result<exit_status_request> decode(byte_span data);
};

// "exit-signal"
struct exit_signal_request {
    std::string signal; // without "SIG"
    bool core_dumped = false;
    std::string message;
    std::string language;
    bytes encode() const;
    static result<exit_signal_request> decode(byte_span data);
};

// RFC 4254 §8 terminal modes: opcode/value pairs ended by TTY_OP_END (0).
struct terminal_mode {
    std::uint8_t opcode;
    std::uint32_t value;
};
result<std::vector<terminal_mode>> decode_terminal_modes(byte_span modes);
bytes encode_terminal_modes(const std::vector<terminal_mode>& modes);

} // namespace longhaul
