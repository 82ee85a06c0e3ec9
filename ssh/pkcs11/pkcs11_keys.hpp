// The pure half of PKCS#11 support: SSH public keys from a token's object
// attributes, what C_Sign is handed for an SSH signature algorithm, and the
// SSH signature blob made of the token's answer (as OpenSSH 9.2's
// ssh-pkcs11.c does it: RSA through CKM_RSA_PKCS over a DigestInfo, ECDSA
// through CKM_ECDSA over the digest). No library calls: every value comes
// from a module the user named but is still checked and bounded here, and
// `fuzz/pkcs11_attributes_fuzz.cpp` drives it.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <optional>
#include <string_view>

namespace longhaul::pkcs11 {

// Largest attribute value read from a token: an RSA modulus of 16384 bits
// is 2048 bytes, an X.509 certificate a few KiB; 64 KiB leaves room.
inline constexpr std::size_t max_attribute = 64 * 1024;
// Longest label kept (OpenSSH reads CKA_LABEL into 256 bytes).
inline constexpr std::size_t max_label = 255;

// CKA_MODULUS and CKA_PUBLIC_EXPONENT (big-endian magnitudes) as an
// ssh-rsa key; public_key's checks apply (1024-16384 bits, odd exponent).
result<public_key> rsa_public_key(byte_span modulus, byte_span exponent);

// CKA_EC_PARAMS (DER: the OID of NIST P-256, P-384 or P-521) and
// CKA_EC_POINT (DER OCTET STRING holding the uncompressed point) as an
// ecdsa-sha2-nistp* key; the point must be on the curve. Other curves and
// explicit parameters are errc::unsupported.
result<public_key> ecdsa_public_key(byte_span ec_params, byte_span ec_point);

// A CKO_CERTIFICATE of type X.509, as OpenSSH 9.2 reads one: the SSH key
// of the certificate in CKA_VALUE (RSA or ECDSA on P-256/384/521; the
// certificate itself is not checked, only its key is used) and its label,
// CKA_SUBJECT as OpenSSL's X509_NAME_oneline writes it ("/C=DE/CN=alice"),
// or "invalid subject". On failure `error` holds OpenSSH's words.
struct certificate_key {
    public_key key;
    std::string subject;
};
std::optional<certificate_key> x509_public_key(byte_span subject_der, byte_span cert_der, std::string& error);

// The text of a fixed-width, blank-padded PKCS#11 string (a token's label,
// manufacturer) as OpenSSH's rmspace leaves it: the last byte dropped, the
// text ending at a NUL, trailing blanks removed.
std::string padded_text(const unsigned char* field, std::size_t width);

// What C_Sign gets for signature algorithm `alg` with `key` over `data`:
// for RSA ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa") the DER DigestInfo of
// the hash, for CKM_RSA_PKCS to pad; for ECDSA the curve's hash (SHA-256,
// -384, -512), for CKM_ECDSA. nullopt for a pair that does not go together.
std::optional<bytes> sign_input(const public_key& key, std::string_view alg, byte_span data);

// The SSH signature blob (string alg, string signature) from what C_Sign
// returned: RSA left-padded with zeros to the modulus' length (never
// longer); ECDSA's r||s (two halves of the curve's size) as mpint r, mpint
// s. nullopt when the answer has the wrong length.
std::optional<bytes> signature_blob(const public_key& key, std::string_view alg, byte_span token_signature);

} // namespace longhaul::pkcs11
