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
// SSH1's REMOVE_ALL_RSA_IDENTITIES: ssh-add -D still sends it after the
// SSH2 one, for old agents (its answer is ignored).
inline constexpr std::uint8_t remove_all_rsa_identities = 9;
inline constexpr std::uint8_t request_identities = 11;
inline constexpr std::uint8_t identities_answer = 12;
inline constexpr std::uint8_t sign_request = 13;
inline constexpr std::uint8_t sign_response = 14;
inline constexpr std::uint8_t add_identity = 17;
inline constexpr std::uint8_t remove_identity = 18;
inline constexpr std::uint8_t remove_all_identities = 19;
inline constexpr std::uint8_t add_smartcard_key = 20;
inline constexpr std::uint8_t remove_smartcard_key = 21;
inline constexpr std::uint8_t lock = 22;
inline constexpr std::uint8_t unlock = 23;
inline constexpr std::uint8_t add_id_constrained = 25;
inline constexpr std::uint8_t add_smartcard_key_constrained = 26;
inline constexpr std::uint8_t extension = 27;
inline constexpr std::uint8_t extension_failure = 28;
inline constexpr std::uint8_t extension_response = 29;
// Failure codes of other agents that OpenSSH also accepts.
inline constexpr std::uint8_t ssh2_failure = 30;
inline constexpr std::uint8_t ssh_com_failure = 102;

// Key constraints of ADD_ID_CONSTRAINED (byte type, then its data).
inline constexpr std::uint8_t constrain_lifetime = 1;  // uint32 seconds
inline constexpr std::uint8_t constrain_confirm = 2;   // no data
inline constexpr std::uint8_t constrain_maxsign = 3;   // uint32 (XMSS only)
inline constexpr std::uint8_t constrain_extension = 255; // string name, then data

// SIGN_REQUEST flags.
inline constexpr std::uint32_t rsa_sha2_256 = 0x02;
inline constexpr std::uint32_t rsa_sha2_512 = 0x04;

// OpenSSH's AGENT_MAX_LEN: larger messages are refused.
inline constexpr std::size_t max_message = 256 * 1024;
// More keys than this is a broken or hostile agent (OpenSSH: 2048).
inline constexpr std::size_t max_identities = 2048;

// Destination constraints (ssh-add -h; PROTOCOL.agent, OpenSSH 8.9): a
// key usable only on the listed hops, each hop a host named by its host
// keys (or CA keys), with an optional user on the destination side.
inline constexpr std::string_view restrict_destination_extension = "restrict-destination-v00@openssh.com";
struct destination_key {
    bytes blob;
    bool is_ca = false; // a @cert-authority key: host certificates it signed
};
struct destination_hop {
    std::string user;     // empty: any user (always empty on the "from" side)
    std::string hostname; // empty (with no keys): the origin host
    std::vector<destination_key> keys;
};
struct destination_constraint {
    destination_hop from;
    destination_hop to;
};

// The SecurityKeyProvider a security key signs through (ssh-add -S,
// SSH_SK_PROVIDER or "internal"): string provider, as given.
inline constexpr std::string_view sk_provider_extension = "sk-provider@openssh.com";

// The constraints ssh-add -t, -c and -h put on a key (ADD_ID_CONSTRAINED),
// and the provider it puts on every security key.
struct key_constraints {
    std::optional<std::uint32_t> lifetime_seconds; // constrain_lifetime
    bool confirm = false;                          // constrain_confirm
    std::optional<std::string> sk_provider;        // sk_provider_extension
    std::vector<destination_constraint> destinations; // restrict_destination_extension
    bool empty() const noexcept { return !lifetime_seconds && !confirm && !sk_provider && destinations.empty(); }
};

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

// ADD_IDENTITY, or ADD_ID_CONSTRAINED when `constraints` is not empty (as
// OpenSSH sends them): `key_fields` is the key as agent_key_blob.hpp's
// encode_private_key writes it, then string comment, then each constraint.
// The message holds the private key: it comes back in wiped memory.
secret_bytes encode_add_identity(byte_span key_fields, std::string_view comment, const key_constraints& constraints);
// ADD_SMARTCARD_KEY[_CONSTRAINED] (`add`, with the PIN and, when there
// are any, the constraints) or REMOVE_SMARTCARD_KEY (the PIN empty, as
// ssh-add -e sends it): ssh-add -s / -e naming a PKCS#11 module.
secret_bytes encode_update_card(bool add, std::string_view provider, byte_span pin,
                                const key_constraints& constraints);
// REMOVE_IDENTITY of a public key or certificate blob.
bytes encode_remove_identity(byte_span key_blob);
bytes encode_remove_all_identities();
bytes encode_remove_all_rsa_identities();
// LOCK (locking == true) or UNLOCK with the password (wiped memory).
secret_bytes encode_lock(std::string_view password, bool locking);
// EXTENSION: string name, then the extension's own contents.
bytes encode_extension(std::string_view name, byte_span contents);
// The "query" extension (draft-miller-ssh-agent §3.8.1): which extensions
// the agent supports.
inline constexpr std::string_view query_extension = "query";
bytes encode_query();

// Decoders take one message body (after the length prefix): type, then
// contents. A failure reply gives errc::unsupported (the agent refused);
// anything that does not parse gives errc::malformed or another decode error.
result<std::vector<identity>> decode_identities_answer(byte_span body);
// The signature blob (string algorithm, string signature).
result<bytes> decode_sign_response(byte_span body);
// An extension's answer: SUCCESS, or errc::unsupported when refused (an
// agent without the extension answers FAILURE).
result<void> decode_success(byte_span body);

// The answer to encode_query(): the extension names. Accepts SUCCESS
// followed by string[] names (the draft) and EXTENSION_RESPONSE with
// string "query" before them. errc::unsupported when the agent refuses
// (OpenSSH's agent does not know "query").
result<std::vector<std::string>> decode_query_answer(byte_span body);

// True for the reply types that mean "request refused".
bool is_failure(std::uint8_t type) noexcept;

} // namespace longhaul::agent
