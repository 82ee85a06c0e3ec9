// The state of an established transport, exported by one process and
// imported by another that carries on the connection on the same socket
// (sshd's privilege separation, issue 12: the sandboxed child runs the key
// exchange and user authentication, then hands the live connection to its
// privileged monitor).
//
// It holds what a fresh core needs to continue exactly where the exporter
// stopped: the key epoch of each direction (keys, sequence number, packet
// position, what passed under the keys), what a later key exchange hashes
// or checks (identification lines, session id, host key), and the bytes the
// exporter read from the socket but did not process. A key exchange in
// progress, queued output and compressor history are never part of it: the
// exporter refuses until they are gone (transport::export_state()).
//
// The encoding is parsed by a root process from a possibly compromised
// child, so decode_transport_state() bounds every length and count, rejects
// trailing bytes and checks that the algorithms exist and the key sizes fit
// them: what it accepts, the import constructor can always build.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/packet_cipher.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"
#include "common/transport/algorithms.hpp"
#include "common/transport/packet_codec.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace longhaul {

enum class transport_role { client, server };

struct transport_stats {
    std::uint64_t bytes_in = 0, bytes_out = 0;
    std::uint64_t packets_in = 0, packets_out = 0;
    std::uint32_t key_exchanges = 0;
    // Client re-exchanges that sent the first kex packet with KEXINIT, and
    // those the server took (not carried by a hand-off: a client's).
    std::uint32_t kex_guesses = 0, kex_guesses_right = 0;
};

// The transport keeps at most this much received input (one maximal packet
// and generous reads); an export never carries more unread bytes.
inline constexpr std::size_t max_transport_input = 4 * 1024 * 1024;

// Bounds of the encoding, from what the core itself accepts: a peer's
// EXT_INFO has fewer than 1024 entries, names up to 1024 bytes and values up
// to 64 KiB, and fits one packet; a client takes two such messages.
inline constexpr std::size_t max_state_extensions = 2 * 1023;
inline constexpr std::size_t max_state_extension_name = 1024;
inline constexpr std::size_t max_state_extension_value = 64 * 1024;
inline constexpr std::size_t max_state_extension_bytes = 2 * max_packet_length;
// The largest key any cipher or MAC derives (chacha20-poly1305, HMAC-SHA-512).
inline constexpr std::size_t max_state_key_size = 64;
// A SHA-512 exchange hash.
inline constexpr std::size_t max_state_session_id = 64;
// An RSA key of 16384 bits and then some.
inline constexpr std::size_t max_state_host_key_blob = 16 * 1024;

// One direction's key epoch (since its last NEWKEYS).
struct transport_direction_state {
    direction_keys keys;      // as derived at NEWKEYS (mac_key empty for AEAD ciphers)
    packet_position position; // of the next packet: seq is its sequence number
    key_usage usage;          // what passed under these keys (rekey by volume)
    // A zlib stream runs in this direction. It has taken no data yet (an
    // export is refused otherwise): the importer starts a fresh one.
    bool compression = false;
};

struct transport_state {
    transport_role role = transport_role::server;
    std::string local_identification; // our version line without CR LF, as hashed
    std::string peer_identification;  // the peer's, as received and hashed
    negotiated_algorithms algorithms;
    bytes session_id;
    bool strict_kex = false;
    bool peer_wants_ext_info = false; // server: the client offered ext-info-c
    std::map<std::string, std::string> peer_extensions;
    std::uint32_t ext_info_received = 0; // EXT_INFO messages taken from the peer
    // The server's host key: the one the client verified, or the server
    // signed with, in the first key exchange (later ones must use it too).
    std::optional<public_key> host_key;
    bool authenticated = false;
    transport_direction_state out, in; // out: what this side sends
    transport_stats stats;
    bytes unread_input; // received and not yet processed, from a packet boundary on
};

// Current version of the encoding; decoding any other fails.
inline constexpr std::uint32_t transport_state_version = 2; // 2: no rekey limits (the importer sets its own)

// Checks what decode_transport_state() checks on a state built in memory:
// known algorithms with keys of their sizes, bounds, consistent flags.
// errc::unsupported for unknown algorithms, errc::too_large for a bound,
// errc::invalid_argument for anything else.
result<void> validate_transport_state(const transport_state& s);

// The encoding holds the keys: the caller cleanses it once it is sent.
bytes encode_transport_state(const transport_state& s);
// Parses and validates an encoding (see validate_transport_state()); also
// errc::malformed / trailing_data / too_large for a bad encoding and
// errc::bad_version for another version.
result<transport_state> decode_transport_state(byte_span encoded);

} // namespace longhaul
