// The messages between sshd's sandboxed pre-authentication child and its
// privileged monitor (privilege separation, issue 12), sent as SOCK_SEQPACKET
// datagrams: one message per datagram, a type byte, then the fields in SSH
// wire encoding.
//
// The child asks; the monitor answers each request with a reply of the same
// type | reply_flag, except for the one-way messages (kbdint_abort,
// max_tries). A log line is acknowledged, so that it is written before the
// child acts further. The monitor decodes what a possibly compromised child sent:
// every decoder bounds each length and count and refuses trailing bytes.
#pragma once

#include "common/auth/server_auth.hpp"
#include "common/bytes.hpp"
#include "common/crypto/key_agreement.hpp"
#include "common/log.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::privsep {

// The largest datagram either side sends or accepts: the transport state of
// the hand-off carries up to two packets of unread input.
inline constexpr std::size_t max_monitor_message = 1024 * 1024;
// The longest log line the child sends; it cuts longer ones (peer text in
// a line, such as a DISCONNECT's description, can be long).
inline constexpr std::size_t max_log_line = 8192;

enum class monitor_type : std::uint8_t {
    sign = 1,       // a host key signature for the key exchange
    lookup_user,    // once: the user named in the first request
    key_allowed,    // authorized_keys / AuthorizedKeysCommand decision
    verify_pubkey,  // the monitor checks a publickey signature itself
    password,       // a password check (shadow or PAM)
    kbdint_start,   // keyboard-interactive through PAM: first prompts
    kbdint_respond, // the client's answers: more prompts or the verdict
    kbdint_abort,   // one-way: the client left keyboard-interactive
    account_check,  // PAM account management after a method succeeded
    log,            // a log line from the child (acknowledged)
    max_tries,      // one-way: the child disconnects for MaxAuthTries
    authenticated,  // the child is done: the transport state for the monitor
    // After authentication, from the user's process to its root parent:
    pty, // a pseudo-terminal opened outside any chroot, given to the user (fds attached)
    pty_release, // one-way: a session's pty is closed (its logout is recorded)
    // Before authentication again (numbered last to keep the others):
    host_allowed, // hostbased: the client host's key, name and user (equiv files, known_hosts)
    moduli,       // a group-exchange group from the ModuliFile (the monitor logs its warnings)
};
inline constexpr std::uint8_t reply_flag = 0x80;

// The type of a datagram; nullopt when it is empty or of no known type.
std::optional<monitor_type> message_type(byte_span msg, bool reply) noexcept;

// What a monitor signs: an exchange hash (SHA-1, -256, -384 or -512).
inline bool is_exchange_hash_length(std::size_t n) noexcept { return n == 20 || n == 32 || n == 48 || n == 64; }

struct sign_request {
    bytes key_blob;
    std::string algorithm;
    bytes data;
};
struct sign_reply {
    bool ok = false;
    bytes signature;
};

struct lookup_user_request {
    std::string user;
};
struct lookup_user_reply {
    user_status status = user_status::unknown;
    bool is_root = false;
    std::optional<server_auth_settings> settings;
    // The user's LogLevel after Match (what the child should send).
    log_level level = log_level::info;
};

struct key_allowed_request {
    bytes key_blob;
    bool with_signature = false;
};
struct key_allowed_reply {
    bool allowed = false;
    bool forced_command = false;
};

// A hostbased request's key and names, as the client sent them; the reply
// is a verdict (encode_verdict).
struct host_allowed_request {
    bytes key_blob;
    std::string client_host;
    std::string client_user;
};

// A group-exchange request's sizes as the exchange clamped the client's
// (clamp_gex_request; the monitor refuses any others), and the group the
// monitor chose, as OpenSSH's MONITOR_REQ_MODULI: the monitor reads the
// ModuliFile and logs "WARNING: no suitable primes in ..." itself.
struct moduli_request {
    std::uint32_t min_bits = 0;
    std::uint32_t preferred_bits = 0;
    std::uint32_t max_bits = 0;
};
struct moduli_reply {
    bool ok = false;
    dh_group group; // when ok
};
// Whether the sizes are what clamp_gex_request leaves of some request: in
// [2048, 8192] and in order. An honest child sends nothing else.
bool is_clamped(const moduli_request& q) noexcept;

struct verify_pubkey_request {
    bytes key_blob;
    std::string algorithm;
    bytes signed_data;
    bytes signature;
};

struct password_request {
    secret_bytes password;
};

struct kbdint_start_request {
    std::string submethods;
};
struct kbdint_respond_request {
    std::vector<secret_bytes> responses;
};

struct account_reply {
    bool allowed = false;
    std::string message;
};

struct log_request {
    log_level level = log_level::info;
    std::string text;
};

struct authenticated_request {
    bytes transport_state;
};

// The root parent's answer to `pty` (a message with no fields): the
// slave's name; the master and slave descriptors travel with it
// (SCM_RIGHTS) when ok.
struct pty_reply {
    bool ok = false;
    std::string name;
    std::string login_message; // PrintLastLog's "Last login:" line, or empty
};

// The user's process is done with a pty the root parent opened.
struct pty_release_request {
    std::string name;
};

// Verdicts with nothing but yes or no: verify_pubkey, password,
// authenticated, and the acknowledgement of a log line.
struct verdict_reply {
    bool ok = false;
};

bytes encode(const sign_request& m);
bytes encode(const sign_reply& m);
bytes encode(const lookup_user_request& m);
bytes encode(const lookup_user_reply& m);
bytes encode(const key_allowed_request& m);
bytes encode(const key_allowed_reply& m);
bytes encode(const moduli_request& m);
bytes encode(const moduli_reply& m);
bytes encode(const verify_pubkey_request& m);
bytes encode(const password_request& m);
bytes encode(const kbdint_start_request& m);
bytes encode(const kbdint_respond_request& m);
bytes encode_kbdint_reply(monitor_type request, const kbdint_reply& m);
bytes encode(const account_reply& m);
bytes encode(const log_request& m);
bytes encode(const authenticated_request& m);
bytes encode(const pty_reply& m);
bytes encode(const pty_release_request& m);
bytes encode_verdict(monitor_type request, bool ok);
// A message of a type with no fields (kbdint_abort, account_check,
// max_tries).
bytes encode_empty(monitor_type type);

// Decoders take the whole datagram (type byte included) and fail with
// errc::malformed on anything out of bounds, of the wrong type or left over.
result<sign_request> decode_sign_request(byte_span msg);
result<sign_reply> decode_sign_reply(byte_span msg);
result<lookup_user_request> decode_lookup_user_request(byte_span msg);
result<lookup_user_reply> decode_lookup_user_reply(byte_span msg);
result<key_allowed_request> decode_key_allowed_request(byte_span msg);
result<key_allowed_reply> decode_key_allowed_reply(byte_span msg);
bytes encode(const host_allowed_request& m);
result<host_allowed_request> decode_host_allowed_request(byte_span msg);
result<moduli_request> decode_moduli_request(byte_span msg);
result<moduli_reply> decode_moduli_reply(byte_span msg);
result<verify_pubkey_request> decode_verify_pubkey_request(byte_span msg);
result<password_request> decode_password_request(byte_span msg);
result<kbdint_start_request> decode_kbdint_start_request(byte_span msg);
result<kbdint_respond_request> decode_kbdint_respond_request(byte_span msg);
result<kbdint_reply> decode_kbdint_reply(monitor_type request, byte_span msg);
result<account_reply> decode_account_reply(byte_span msg);
result<log_request> decode_log_request(byte_span msg);
result<authenticated_request> decode_authenticated_request(byte_span msg);
result<pty_reply> decode_pty_reply(byte_span msg);
result<pty_release_request> decode_pty_release_request(byte_span msg);
result<bool> decode_verdict(monitor_type request, byte_span msg);
result<void> decode_empty(monitor_type type, byte_span msg);

} // namespace longhaul::privsep
