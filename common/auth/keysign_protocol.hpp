// ssh-keysign's protocol, as OpenSSH's ssh and ssh-keysign speak it. For
// hostbased authentication ssh runs the setuid helper with the connection
// to the server on a descriptor above stderr, sends one message on the
// helper's stdin and reads one from its stdout. Each message is
//   uint32 length, byte version (2), body
//   request body: uint32 descriptor, string data (what hostbased signs)
//   reply body:   string signature (string algorithm, string blob)
// The helper signs only data that is a hostbased request for this
// connection's local name and the user running it (check_keysign_data).
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

inline constexpr std::uint8_t keysign_version = 2;
// OpenSSH's ssh_msg_recv refuses a longer message.
inline constexpr std::size_t max_keysign_message = 256 * 1024;

// uint32 length, byte version, body.
bytes keysign_frame(byte_span body, std::uint8_t version = keysign_version);
// The length a message's first four bytes announce; nullopt over the bound.
std::optional<std::uint32_t> keysign_frame_length(const std::uint8_t (&header)[4]);

bytes encode_keysign_request(std::uint32_t fd, byte_span data);
bytes encode_keysign_reply(byte_span signature);

// The helper's one message, after its length: the descriptor ssh handed
// it the connection on (never 0, 1 or 2) and the data to sign. On failure
// `error` holds the line OpenSSH's helper dies with, less its name ("bad
// version: received 3, expected 2", "bad fd = 1", "buffer error:
// incomplete message").
struct keysign_request {
    int fd = -1;
    bytes data;
};
result<keysign_request> decode_keysign_request(byte_span body, std::string& error);

// What a hostbased signature request asks the helper to sign with.
struct keysign_sign_request {
    std::string algorithm; // the request's algorithm: what the signature is made with
    bytes key_blob;        // a plain key or a certificate, matching the algorithm's type
};

// OpenSSH's valid_request(): `data` must be string session_id (20, 32, 48
// or 64 bytes), byte 50, string user, string "ssh-connection", string
// "hostbased", string algorithm, string key (of the algorithm's type, a
// certificate with a cert algorithm), string client host ("<local_host>."
// any case), string client user (= local_user), and nothing after.
// A field that cannot be read sets `parse_error` ("parse session ID:
// incomplete message", as OpenSSH's fatal line says it) and fails; a
// request that reads but does not hold fails with parse_error empty.
result<keysign_sign_request> check_keysign_data(byte_span data, std::string_view local_host,
                                                std::string_view local_user, std::string& parse_error);

// The plain signature algorithm the helper signs with for a request's
// algorithm ("ssh-ed25519-cert-v01@openssh.com" -> "ssh-ed25519",
// "rsa-sha2-512" stays); nullopt for a name that is no key algorithm.
std::optional<std::string> keysign_signature_algorithm(std::string_view algorithm);

} // namespace longhaul
