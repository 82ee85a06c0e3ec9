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
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

inline constexpr std::uint8_t keysign_version = 2;

// The host keys hostbased signs with: OpenSSH's _PATH_HOST_*_KEY_FILE in
// the order ssh loads them (DSA and XMSS, which this build does not
// support, left out). ssh reads their public halves, the helper the
// private ones.
inline constexpr const char* hostbased_key_files[] = {"/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
                                                      "/etc/ssh/ssh_host_rsa_key"};
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

// What a hostbased signature request asks the helper to sign with: the
// request's algorithm (signed with its plain form,
// host_key_signature_algorithm), and the host key it names (a
// certificate's certified key).
struct keysign_sign_request {
    std::string algorithm;
    bytes key_blob; // the key or certificate as the request carries it
    public_key key;
    bool certificate = false;
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

} // namespace longhaul
