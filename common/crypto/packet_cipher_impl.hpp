// Internal to common/crypto: the packet cipher families behind
// make_packet_cipher(), and argument checks they share.
#pragma once

#include "common/crypto/packet_cipher.hpp"

#include <cstddef>
#include <memory>
#include <stdexcept>

namespace longhaul::detail {

// The uint32 packet_length field at the start of every packet.
inline constexpr std::size_t length_size = 4;

// chacha20-poly1305@openssh.com; key is 64 bytes.
std::unique_ptr<packet_cipher> make_chacha20_poly1305(byte_span key);
// aes128-gcm@openssh.com / aes256-gcm@openssh.com; iv is 12 bytes.
std::unique_ptr<packet_cipher> make_aes_gcm(byte_span key, byte_span iv);
// AES-CTR (or no cipher) with an HMAC (or no MAC), ETM or not. Key sizes
// were checked by the caller against the infos.
std::unique_ptr<packet_cipher> make_cipher_mac(const cipher_info& cipher, const mac_info& mac,
                                               const direction_keys& keys);

// seal() works on our own packets, so a malformed call is a bug in the
// transport, not hostile input: refuse it loudly rather than write past a span.
inline void check_seal_args(std::size_t packet_size, std::size_t min_packet, std::size_t tag_span,
                            std::size_t tag_size)
{
    if (packet_size < min_packet || tag_span < tag_size)
        throw std::invalid_argument("packet_cipher::seal: packet or tag span too small");
}

// A failure inside OpenSSL while sealing must not let a half-encrypted packet
// reach the wire.
[[noreturn]] inline void seal_failed() { throw std::runtime_error("packet_cipher::seal: OpenSSL failure"); }

} // namespace longhaul::detail
