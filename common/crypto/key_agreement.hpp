// Ephemeral key agreement for SSH key exchange: X25519 (RFC 8731), ECDH on
// the NIST curves (RFC 5656) and finite-field Diffie-Hellman over MODP groups
// (RFC 4253, RFC 8268, RFC 4419), all through OpenSSL EVP.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

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

result<std::unique_ptr<key_agreement>> make_x25519_agreement();
result<std::unique_ptr<key_agreement>> make_ecdh_agreement(ecdh_curve curve);
// The private exponent has `private_bits` bits (twice the group's security
// strength, as OpenSSH chooses it) rather than the size of p, which would make
// 8192-bit groups needlessly slow.
result<std::unique_ptr<key_agreement>> make_dh_agreement(const dh_group& group, int private_bits);

} // namespace longhaul
