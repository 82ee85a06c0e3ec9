// Ephemeral key agreement for SSH key exchange: X25519 (RFC 8731), ECDH on
// the NIST curves (RFC 5656) and finite-field Diffie-Hellman over MODP groups
// (RFC 4253, RFC 8268, RFC 4419), all through OpenSSL EVP; and the hybrid of
// ML-KEM-768 (ours: OpenSSL 3.0 has none) with X25519.
//
// Shared secrets come back as big-endian magnitudes for the caller to write as
// the mpint K (the hybrid's is a hash the caller writes as a string). Their lengths differ by family, and the wire writer strips
// leading zeros, so the mpint is the same either way:
//   X25519: the 32 raw output bytes as-is, leading zeros kept (RFC 8731 §3.1
//           reads them as a big-endian number; hybrid methods that hash the raw
//           output as a string need all 32 bytes);
//   ECDH:   the X coordinate, fixed length (32, 48 or 66 bytes), zeros kept;
//   MODP:   the magnitude of f^x mod p with leading zeros stripped.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <memory>

namespace longhaul {

// A MODP group; p and g as unsigned big-endian magnitudes.
struct dh_group {
    bytes p;
    bytes g;
};

// RFC 3526 groups 14 (2048-bit), 16 (4096-bit) and 18 (8192-bit), generator 2.
const dh_group& modp_group14();
const dh_group& modp_group16();
const dh_group& modp_group18();

// Bit length of a big-endian magnitude (leading zero bytes allowed).
std::size_t magnitude_bits(byte_span magnitude) noexcept;
inline std::size_t dh_group_bits(const dh_group& group) noexcept { return magnitude_bits(group.p); }

class key_agreement {
public:
    virtual ~key_agreement() = default;
    // Our public value as it travels: 32 raw bytes for X25519, an uncompressed
    // SEC1 point for ECDH, the big-endian magnitude of g^x mod p for MODP
    // (which the caller writes as an mpint).
    virtual byte_span public_value() const noexcept = 0;
    // Validates the peer's public value (same encodings) and returns the shared
    // secret as an unsigned big-endian magnitude, ready to be written as the
    // mpint K. Invalid or degenerate peer values give errc::invalid_argument.
    virtual result<secret_bytes> derive(byte_span peer_public) = 0;
};

enum class ecdh_curve { p256, p384, p521 };

// Bytes of one coordinate (and of the shared secret): 32, 48 or 66.
std::size_t ecdh_field_bytes(ecdh_curve curve) noexcept;

result<std::unique_ptr<key_agreement>> make_x25519_agreement();
result<std::unique_ptr<key_agreement>> make_ecdh_agreement(ecdh_curve curve);
// The private exponent has `private_bits` bits (twice the group's security
// strength, as OpenSSH chooses it) rather than the size of p, which would make
// 8192-bit groups needlessly slow; dh_private_exponent_bits() picks it.
// Accepted: 512 <= private_bits < bits(p); p odd, 1024..16384 bits; 1 < g < p-1.
result<std::unique_ptr<key_agreement>> make_dh_agreement(const dh_group& group, int private_bits);

// The hybrids of a post-quantum KEM with X25519 (hybrid_kem_agreement.cpp):
// mlkem768x25519-sha256 and sntrup761x25519-sha512. The initiator's
// (client's) public value is the KEM's public key || X25519 from the start;
// the responder's is a ciphertext || X25519 and exists only after derive()
// has read the initiator's. The secret is HASH(K_PQ || K_CL) (SHA-256 or
// SHA-512, as the method's name says), which the exchange writes as a string.
enum class hybrid_kem { mlkem768_x25519, sntrup761_x25519 };
result<std::unique_ptr<key_agreement>> make_hybrid_kem_agreement(hybrid_kem kem, bool responder);

// OpenSSH's private exponent length (dh_gen_key): `need_bytes` is the largest
// key, block, IV or MAC key size in bytes among the negotiated ciphers and
// MACs of both directions (kex->we_need). Gives 2 * max(8 * need_bytes, 256)
// bits, at most bits(p) - 1; invalid_argument when 16 * need_bytes > bits(p).
result<int> dh_private_exponent_bits(std::size_t need_bytes, std::size_t modulus_bits) noexcept;

// Fixed private keys, for deterministic known-answer tests only: an exchange
// that reuses a private key loses forward secrecy. The X25519 key is the 32
// raw bytes of RFC 7748; the ECDH scalar is big-endian, 1 <= d < n, at most
// ecdh_field_bytes() long; the DH exponent is big-endian, 1 < x, bits(x) < bits(p).
result<std::unique_ptr<key_agreement>> make_x25519_agreement_from_private(byte_span private_key);
result<std::unique_ptr<key_agreement>> make_ecdh_agreement_from_private(ecdh_curve curve, byte_span scalar);
result<std::unique_ptr<key_agreement>> make_dh_agreement_from_private(const dh_group& group, byte_span x);
// ML-KEM's seeds d and z and the X25519 key; the responder's encapsulation
// message m and its X25519 key.
result<std::unique_ptr<key_agreement>> make_mlkem768x25519_initiator_from(byte_span d, byte_span z,
                                                                         byte_span x25519_private);
result<std::unique_ptr<key_agreement>> make_mlkem768x25519_responder_from(byte_span m, byte_span x25519_private);

} // namespace longhaul
