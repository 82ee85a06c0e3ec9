// FIDO security-key middleware ("SecurityKeyProvider"): the shared library
// OpenSSH's tools load to talk to an authenticator, and the SSH signature
// blobs built from what it returns (OpenSSH's PROTOCOL.u2f: the signature
// formats, and the middleware API that its sk-api.h declares).
//
// OpenSSH runs the middleware in a separate process (ssh-sk-helper) so that
// a crashing or hostile library cannot reach the client's memory. Longhaul
// dlopens it into ssh itself and calls it synchronously: the library is the
// one the user named (SecurityKeyProvider, SSH_SK_PROVIDER), i.e. code the
// user already chose to trust with their keys, and every length it hands
// back is bounded before use. "internal" (OpenSSH's built-in libfido2
// middleware) is not implemented.
#pragma once

#include "common/bytes.hpp"
#include "common/shared_library.hpp"
#include "common/keys/public_key.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace longhaul {

// The C ABI. These mirror OpenSSH's sk-api.h at API version 0x000a0000
// (the one OpenSSH 9.2 speaks), written from its interface description:
// the field order and types are the contract with the library, so they
// must not be "tidied".
namespace sk_api {

inline constexpr std::uint32_t version_major = 0x000a0000;
inline constexpr std::uint32_t version_major_mask = 0xffff0000;

inline constexpr std::uint32_t alg_ecdsa = 0x00;
inline constexpr std::uint32_t alg_ed25519 = 0x01;

inline constexpr int err_general = -1;
inline constexpr int err_unsupported = -2;
inline constexpr int err_pin_required = -3;
inline constexpr int err_device_not_found = -4;
inline constexpr int err_credential_exists = -5;

inline constexpr std::uint8_t flag_user_presence_required = 0x01;
inline constexpr std::uint8_t flag_user_verification_required = 0x04;
inline constexpr std::uint8_t flag_force_operation = 0x10;
inline constexpr std::uint8_t flag_resident_key = 0x20;

extern "C" {
struct sk_sign_response {
    std::uint8_t flags;
    std::uint32_t counter;
    std::uint8_t* sig_r;
    std::size_t sig_r_len;
    std::uint8_t* sig_s;
    std::size_t sig_s_len;
};
struct sk_option {
    char* name;
    char* value;
    std::uint8_t required;
};
struct sk_enroll_response {
    std::uint8_t flags;
    std::uint8_t* public_key;
    std::size_t public_key_len;
    std::uint8_t* key_handle;
    std::size_t key_handle_len;
    std::uint8_t* signature;
    std::size_t signature_len;
    std::uint8_t* attestation_cert;
    std::size_t attestation_cert_len;
    std::uint8_t* authdata;
    std::size_t authdata_len;
};
struct sk_resident_key {
    std::uint32_t alg;
    std::size_t slot;
    char* application;
    sk_enroll_response key;
    std::uint8_t flags;
    std::uint8_t* user_id;
    std::size_t user_id_len;
};

using api_version_fn = std::uint32_t (*)();
using enroll_fn = int (*)(std::uint32_t alg, const std::uint8_t* challenge, std::size_t challenge_len,
                          const char* application, std::uint8_t flags, const char* pin, sk_option** options,
                          sk_enroll_response** response);
using sign_fn = int (*)(std::uint32_t alg, const std::uint8_t* data, std::size_t data_len, const char* application,
                        const std::uint8_t* key_handle, std::size_t key_handle_len, std::uint8_t flags,
                        const char* pin, sk_option** options, sk_sign_response** response);
using load_resident_keys_fn = int (*)(const char* pin, sk_option** options, sk_resident_key*** rks,
                                      std::size_t* nrks);
} // extern "C"

} // namespace sk_api

// Bounds on what the middleware returns (an Ed25519 signature is 64 bytes,
// a P-256 r or s 32; a little room for a leading zero byte).
inline constexpr std::size_t max_sk_signature_part = 64;

// What sk_sign answered, copied out of the library's buffers.
struct sk_sign_result {
    std::uint8_t flags = 0;
    std::uint32_t counter = 0;
    bytes sig_r; // Ed25519: the whole 64-byte signature
    bytes sig_s; // ECDSA only
};

// The SSH signature blob for a security key of type `t` (sk_ed25519 or
// sk_ecdsa_p256): string name, string signature (Ed25519: the 64 bytes;
// ECDSA: string { mpint r, mpint s }), byte flags, uint32 counter.
// nullopt when the parts do not fit the type (wrong Ed25519 length, an
// empty or oversized r or s).
std::optional<bytes> encode_sk_signature(key_type t, const sk_sign_result& r);

// Bounds on an enrolment's answer: a public key is 32 (Ed25519) or 65
// (uncompressed P-256) bytes; a key handle is an authenticator's opaque
// credential (a few hundred bytes at most; OpenSSH's key file holds it);
// an attestation certificate, its signature and the authenticator data are
// copied into the attestation file only.
inline constexpr std::size_t max_sk_key_handle = 64 * 1024;
inline constexpr std::size_t max_sk_attestation_part = 64 * 1024;

// What sk_enroll answered, copied out of the library's buffers.
struct sk_enroll_result {
    std::uint8_t flags = 0; // the key's sk flags as the authenticator set them
    bytes public_key;       // Ed25519: 32 bytes; P-256: 0x04 || X || Y
    bytes key_handle;
    bytes signature;
    bytes attestation_cert;
    bytes authdata;
};

// A resident credential as sk_load_resident_keys lists it, copied out.
struct sk_resident_result {
    std::uint32_t alg = 0;
    std::string application;
    sk_enroll_result key; // public key and key handle (no attestation)
    std::uint8_t flags = 0;
    bytes user_id;
};
// Bounds on a listing: credentials per authenticator and a user id's
// length (FIDO allows 64 bytes); applications are bounded as in public
// keys (max_sk_application).
inline constexpr std::size_t max_sk_resident_keys = 1024;
inline constexpr std::size_t max_sk_user_id = 64;

// What ssh-keygen asks an enrolment for (-t, -O application=, -O
// challenge=, -O device=, -O user=, the flags from -O no-touch-required,
// verify-required and resident).
struct sk_enroll_request {
    key_type type = key_type::sk_ed25519;
    bytes challenge; // 32 random bytes unless the user gave a file
    std::string application = "ssh:";
    std::uint8_t flags = sk_api::flag_user_presence_required;
    std::optional<std::string> device; // sk_option "device"
    std::optional<std::string> user;   // sk_option "user"
};

// The outcome of a middleware call: a signature, or an SSH_SK_ERR_* code
// (pin_required asks for the PIN) or a failure described in words.
// `cause`, when not empty, is a line to print before `message` (the
// library check's own words). `from_library`: the middleware itself
// returned `code` (OpenSSH reports those as "Provider ... returned failure
// N"); otherwise the wrapper refused what it returned, or never called it.
struct sk_failure {
    int code = sk_api::err_general;
    std::string message;
    std::string cause;
    bool from_library = false;
};

// A loaded middleware library. Movable; closes the library when destroyed.
class sk_provider {
public:
    // dlopen(path) and the checks OpenSSH makes: before dlopen, that the
    // path is a regular file whose bytes contain the name "sk_api_version"
    // (so a library that is not a middleware never has its constructors
    // run: OpenSSH's fix for CVE-2023-38408, which matters most in
    // ssh-agent); after it, the four entry points present and
    // sk_api_version() of the supported major version. The failure text is
    // ready to print, in OpenSSH's words.
    static std::variant<sk_provider, sk_failure> load(const std::string& path);

    sk_provider(sk_provider&&) noexcept = default;
    sk_provider& operator=(sk_provider&&) noexcept = default;
    ~sk_provider() = default;

    const std::string& path() const noexcept { return path_; }
    std::uint32_t api_version() const noexcept { return version_; }

    // sk_sign for a key of type `t` (its application and the key handle and
    // flags from its private key file) over `data`; `pin` may be null. The
    // response's buffers are freed as the ABI wants (free() each, then the
    // struct) whatever happens.
    std::variant<sk_sign_result, sk_failure> sign(key_type t, byte_span data, const std::string& application,
                                                  byte_span key_handle, std::uint8_t key_flags,
                                                  const char* pin) const;

    // sk_enroll: a new credential on the authenticator. The answer's
    // lengths are checked (a public key of the type's form, a key handle
    // present and bounded) and its buffers freed as the ABI wants.
    std::variant<sk_enroll_result, sk_failure> enroll(const sk_enroll_request& request, const char* pin) const;

    // sk_load_resident_keys: the resident credentials the authenticator
    // lists (`pin` may be null), each bounded and copied; the library's
    // buffers freed as the ABI wants.
    std::variant<std::vector<sk_resident_result>, sk_failure> load_resident_keys(
        const char* pin, const std::optional<std::string>& device) const;

private:
    sk_provider() = default;

    std::string path_;
    shared_library library_;
    std::uint32_t version_ = 0;
    sk_api::sign_fn sign_ = nullptr;
    sk_api::enroll_fn enroll_ = nullptr;
    sk_api::load_resident_keys_fn load_resident_ = nullptr;
};

// The SSH public key an enrolment's answer describes, for `application`
// (type, [curve,] key, application): nullopt when the key is not of the
// type's form (an ECDSA point off the curve included).
std::optional<public_key> sk_enrolled_public_key(key_type t, const sk_enroll_result& r,
                                                 const std::string& application);

} // namespace longhaul
