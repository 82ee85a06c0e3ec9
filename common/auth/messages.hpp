// SSH user authentication messages (RFC 4252, RFC 4256, OpenSSH's
// publickey-hostbound-v00@openssh.com): one struct per message with
// encode/decode. Decoders never throw, bound every count, reject NUL bytes in
// text fields (OpenSSH reads them as C strings) and reject trailing bytes.
//
// Messages 60 and 61 mean different things depending on the method in
// progress (PK_OK, PASSWD_CHANGEREQ, INFO_REQUEST share 60); the state
// machines pick the decoder.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"
#include "common/transport/messages.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace longhaul::msg {

inline constexpr std::uint8_t userauth_pk_ok = 60;
inline constexpr std::uint8_t userauth_passwd_changereq = 60;
inline constexpr std::uint8_t userauth_info_request = 60;
inline constexpr std::uint8_t userauth_info_response = 61;
// The range the program hands to the authentication machines.
inline constexpr std::uint8_t userauth_min = 50;
inline constexpr std::uint8_t userauth_max = 79;

} // namespace longhaul::msg

namespace longhaul {

inline constexpr std::string_view userauth_service = "ssh-userauth";
inline constexpr std::string_view connection_service = "ssh-connection";

inline constexpr std::string_view method_none = "none";
inline constexpr std::string_view method_publickey = "publickey";
inline constexpr std::string_view method_publickey_hostbound = "publickey-hostbound-v00@openssh.com";
inline constexpr std::string_view method_password = "password";
inline constexpr std::string_view method_kbdint = "keyboard-interactive";
inline constexpr std::string_view method_hostbased = "hostbased";

// Keyboard-interactive prompts or responses in one message: OpenSSH's
// server refuses more than 100 responses, and no PAM stack asks for more.
inline constexpr std::size_t max_kbdint_prompts = 100;
// Name fields (user, service, method, algorithm): generous, but far below
// a packet so a hostile peer cannot make us keep megabytes per field.
inline constexpr std::size_t max_auth_name = 8192;
// A hostbased request's client host and user names: a DNS name has at most
// 253 bytes and a login name far fewer; longer ones are refused.
inline constexpr std::size_t max_hostbased_name = 1024;

// SSH_MSG_SERVICE_REQUEST (5).
struct service_request {
    std::string service;
    bytes encode() const;
    static result<service_request> decode(byte_span payload);
};

// SSH_MSG_SERVICE_ACCEPT (6).
struct service_accept {
    std::string service;
    bytes encode() const;
    static result<service_accept> decode(byte_span payload);
};

// Method-specific parts of SSH_MSG_USERAUTH_REQUEST (50).
struct userauth_none_data {};

struct userauth_publickey_data {
    // "publickey-hostbound-v00@openssh.com": host_key_blob follows the key.
    bool hostbound = false;
    bool has_signature = false;
    std::string algorithm;
    bytes key_blob;
    bytes host_key_blob;
    bytes signature; // only when has_signature
};

struct userauth_password_data {
    bool change = false;
    secret_bytes password;
    secret_bytes new_password; // only when change
};

struct userauth_kbdint_data {
    std::string language;   // deprecated, usually empty
    std::string submethods; // comma-separated hints, usually empty
};

// RFC 4252 §9: the client host's key signs for its user. OpenSSH's client
// sends its own name with a trailing dot ("client.example.").
struct userauth_hostbased_data {
    std::string algorithm;
    bytes key_blob;
    std::string client_host;
    std::string client_user;
    bytes signature;
};

// A method this library does not parse (gssapi-with-mic, ...):
// the raw method-specific bytes, so the server can still answer FAILURE.
struct userauth_other_data {
    bytes data;
};

using userauth_method_data = std::variant<userauth_none_data, userauth_publickey_data, userauth_password_data,
                                          userauth_kbdint_data, userauth_hostbased_data, userauth_other_data>;

struct userauth_request {
    std::string user;
    std::string service;
    std::string method;
    userauth_method_data data;

    // The payload. A password request holds the password: use
    // encode_secret() for those so no copy outlives the send.
    bytes encode() const;
    secret_bytes encode_secret() const;
    // The method's fields are decoded for none, publickey (both names),
    // password, keyboard-interactive and hostbased; other methods keep
    // their bytes.
    static result<userauth_request> decode(byte_span payload);
};

// What a publickey or hostbased signature covers: string session_id, then
// the request up to and excluding the signature (RFC 4252 §7 and §9; the
// hostbound variant also covers the host key). `request.data` must hold
// publickey or hostbased data.
bytes publickey_signed_data(byte_span session_id, const userauth_request& request);

// SSH_MSG_USERAUTH_FAILURE (51).
struct userauth_failure {
    std::string methods; // name-list of methods that can continue
    bool partial_success = false;
    bytes encode() const;
    static result<userauth_failure> decode(byte_span payload);
};

// SSH_MSG_USERAUTH_SUCCESS (52).
struct userauth_success {
    bytes encode() const;
    static result<userauth_success> decode(byte_span payload);
};

// SSH_MSG_USERAUTH_BANNER (53). The message is UTF-8 text that may hold
// anything: sanitise before printing.
struct userauth_banner {
    std::string message;
    std::string language;
    bytes encode() const;
    static result<userauth_banner> decode(byte_span payload);
};

// SSH_MSG_USERAUTH_PK_OK (60), answering a publickey query.
struct userauth_pk_ok {
    std::string algorithm;
    bytes key_blob;
    bytes encode() const;
    static result<userauth_pk_ok> decode(byte_span payload);
};

// SSH_MSG_USERAUTH_PASSWD_CHANGEREQ (60).
struct userauth_passwd_changereq {
    std::string prompt;
    std::string language;
    bytes encode() const;
    static result<userauth_passwd_changereq> decode(byte_span payload);
};

struct kbdint_prompt {
    std::string text;
    bool echo = false;
    bool operator==(const kbdint_prompt&) const = default;
};

// SSH_MSG_USERAUTH_INFO_REQUEST (60), RFC 4256.
struct userauth_info_request {
    std::string name;
    std::string instruction;
    std::string language;
    std::vector<kbdint_prompt> prompts; // at most max_kbdint_prompts
    bytes encode() const;
    static result<userauth_info_request> decode(byte_span payload);
};

// SSH_MSG_USERAUTH_INFO_RESPONSE (61). Responses are secrets.
struct userauth_info_response {
    std::vector<secret_bytes> responses; // at most max_kbdint_prompts
    secret_bytes encode() const;
    static result<userauth_info_response> decode(byte_span payload);
};

// True when a text field may be carried: no NUL byte.
bool valid_auth_text(std::string_view s) noexcept;

} // namespace longhaul
