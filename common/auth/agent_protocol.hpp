// The ssh-agent protocol (draft-miller-ssh-agent, OpenSSH's PROTOCOL.agent)
// as pure encoders and decoders: what agent_client sends over the socket.
// Every message is framed as uint32 length, byte type, contents.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::agent {

inline constexpr std::uint8_t failure = 5;
inline constexpr std::uint8_t success = 6;
inline constexpr std::uint8_t request_identities = 11;
inline constexpr std::uint8_t identities_answer = 12;
inline constexpr std::uint8_t sign_request = 13;
inline constexpr std::uint8_t sign_response = 14;
inline constexpr std::uint8_t extension = 27;
inline constexpr std::uint8_t extension_failure = 28;
// Failure codes of other agents that OpenSSH also accepts.
inline constexpr std::uint8_t ssh2_failure = 30;
inline constexpr std::uint8_t ssh_com_failure = 102;

// SIGN_REQUEST flags.
inline constexpr std::uint32_t rsa_sha2_256 = 0x02;
inline constexpr std::uint32_t rsa_sha2_512 = 0x04;

// OpenSSH's AGENT_MAX_LEN: larger messages are refused.
inline constexpr std::size_t max_message = 256 * 1024;
// More keys than this is a broken or hostile agent (OpenSSH: 2048).
inline constexpr std::size_t max_identities = 2048;

// The flags that ask for `algorithm` (RSA SHA-2 variants; 0 otherwise).
std::uint32_t sign_flags_for(std::string_view algorithm) noexcept;

struct identity {
    bytes key_blob;
    std::string comment;
    // The parsed key; nullopt for key types this build does not know
    // (certificates, security keys), which callers skip.
    std::optional<public_key> key;
};

// Framed requests (length prefix included).
bytes encode_request_identities();
bytes encode_sign_request(byte_span key_blob, byte_span data, std::uint32_t flags);
// session-bind@openssh.com (PROTOCOL.agent, OpenSSH 8.9): tells the agent
// which host this connection authenticates to (its host key, the session
// id and the host's signature of it, which the agent verifies) and whether
// the connection is a forwarded one, so that keys restricted to some
// destinations (ssh-add -h) are used only on the way they allow.
inline constexpr std::string_view session_bind_extension = "session-bind@openssh.com";
bytes encode_session_bind(byte_span host_key_blob, byte_span session_id, byte_span signature, bool forwarding);

// Decoders take one message body (after the length prefix): type, then
// contents. A failure reply gives errc::unsupported (the agent refused);
// anything that does not parse gives errc::malformed or another decode error.
result<std::vector<identity>> decode_identities_answer(byte_span body);
// The signature blob (string algorithm, string signature).
result<bytes> decode_sign_response(byte_span body);
// An extension's answer: SUCCESS, or errc::unsupported when refused (an
// agent without the extension answers FAILURE).
result<void> decode_success(byte_span body);

// True for the reply types that mean "request refused".
bool is_failure(std::uint8_t type) noexcept;

} // namespace longhaul::agent
