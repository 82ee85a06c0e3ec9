// OpenSSH certificates (PROTOCOL.certkeys): a public key, signed by a
// certificate authority (CA) key, with a serial, a key ID, principals, a
// validity interval, critical options and extensions.
//
// Wire form (every type: ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa,
// each with "-cert-v01@openssh.com", and the security-key types
// sk-ssh-ed25519-cert-v01@openssh.com and
// sk-ecdsa-sha2-nistp256-cert-v01@openssh.com, whose key fields end with
// the application string):
//
//   string  cert type name     "ssh-ed25519-cert-v01@openssh.com"
//   string  nonce
//   ...     the certified key's fields (a plain key blob without its name)
//   uint64  serial
//   uint32  type               1 user, 2 host
//   string  key id
//   string  valid principals   (a sequence of strings)
//   uint64  valid after
//   uint64  valid before
//   string  critical options   (a sequence of name, data pairs)
//   string  extensions         (the same)
//   string  reserved
//   string  signature key      (the CA's plain key blob)
//   string  signature          over every byte before this field
//
// Parsing checks structure only; verify_signature() checks the CA's
// signature, check_authority() what sshkey_cert_check_authority checks
// (type, validity, principal). Callers decide which CAs they trust.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace longhaul {

class private_key;
class random_source;

enum class cert_kind : std::uint32_t { user = 1, host = 2 };

// "ssh-ed25519-cert-v01@openssh.com" for key_type::ed25519, and so on.
std::string_view certificate_type_name(key_type t) noexcept;
// The certified key's type for a certificate type name; nullopt when the
// name is not one.
std::optional<key_type> certificate_key_type(std::string_view cert_type_name) noexcept;
// Whether `name` names a certificate (the key types above, or the
// certificate forms of RSA's signature algorithms, "rsa-sha2-256-cert-v01@
// openssh.com" and "rsa-sha2-512-cert-v01@openssh.com").
bool is_certificate_algorithm(std::string_view name) noexcept;
// The plain signature algorithm behind a certificate algorithm
// ("rsa-sha2-512-cert-v01@openssh.com" -> "rsa-sha2-512",
// "ssh-ed25519-cert-v01@openssh.com" -> "ssh-ed25519"); nullopt for any
// other name.
std::optional<std::string_view> certificate_signature_algorithm(std::string_view cert_alg) noexcept;
// The certificate algorithm for a plain signature algorithm (the reverse).
std::optional<std::string_view> certificate_algorithm_for(std::string_view sig_alg) noexcept;

// Bounds on what a certificate may carry (OpenSSH's SSHKEY_CERT_MAX_PRINCIPALS
// is 256; the options are bounded by the blob's own size).
inline constexpr std::size_t max_certificate_principals = 256;
inline constexpr std::size_t max_certificate_blob = 16 * 1024;

struct certificate_option {
    std::string name;
    // The option's data as carried (for force-command and source-address a
    // string holding the value; empty for flags such as permit-pty).
    bytes data;
    bool operator==(const certificate_option&) const = default;
};

// The fields a CA signs (what `ssh-keygen -s` sets).
struct certificate_fields {
    bytes nonce; // 32 random bytes when signing with an empty nonce
    std::uint64_t serial = 0;
    cert_kind kind = cert_kind::user;
    std::string key_id;
    std::vector<std::string> principals;
    std::uint64_t valid_after = 0;
    std::uint64_t valid_before = UINT64_MAX; // "forever"
    std::vector<certificate_option> critical_options;
    std::vector<certificate_option> extensions;
};

// OpenSSH's default extensions for a user certificate (ssh-keygen -s without
// -O clear): permit-X11-forwarding, permit-agent-forwarding,
// permit-port-forwarding, permit-pty, permit-user-rc.
std::vector<certificate_option> default_user_extensions();

class certificate {
public:
    // Parses a certificate blob: structure, the certified and the CA's key
    // (both as public_key::from_blob checks them; a CA key that is itself a
    // certificate is refused), the type (user or host), at most
    // max_certificate_principals principals, options as whole (name, data)
    // pairs (in any order, repeats kept: OpenSSH's sshd accepts what its
    // ssh-keygen writes), nothing after the signature. errc::unsupported when the name is not a
    // certificate type, invalid_format otherwise. The signature is not
    // checked here.
    static result<certificate> from_blob(byte_span blob);

    // Signs `fields` over `key` with `ca`, using `sig_alg` (empty: the CA's
    // default, rsa-sha2-512 for RSA). A 32-byte nonce is drawn from `rng`
    // when fields.nonce is empty. Options are written sorted by name (a
    // repeated name kept, as OpenSSH's ssh-keygen does).
    static result<certificate> sign(const certificate_fields& fields, const public_key& key, const private_key& ca,
                                    random_source& rng, std::string_view sig_alg = {});
    // The same with a CA whose private half is elsewhere (ssh-agent):
    // `signer` returns the signature blob of `data` made with `sig_alg`
    // (empty: the CA's default). The result's signature is checked: made
    // with that algorithm by `ca`, else errc::signature_invalid.
    using signer = std::function<result<bytes>(std::string_view sig_alg, byte_span data)>;
    static result<certificate> sign(const certificate_fields& fields, const public_key& key, const public_key& ca,
                                    const signer& sign_with_ca, random_source& rng, std::string_view sig_alg = {});

    const bytes& blob() const noexcept { return blob_; }
    std::string_view type_name() const noexcept { return certificate_type_name(key_.type()); }
    // The certified key.
    const public_key& key() const noexcept { return key_; }
    const certificate_fields& fields() const noexcept { return fields_; }
    std::uint64_t serial() const noexcept { return fields_.serial; }
    cert_kind kind() const noexcept { return fields_.kind; }
    const std::string& key_id() const noexcept { return fields_.key_id; }
    const std::vector<std::string>& principals() const noexcept { return fields_.principals; }
    const public_key& signature_key() const noexcept { return ca_; }
    // The CA's signature algorithm ("ssh-ed25519", "rsa-sha2-512", ...).
    const std::string& signature_algorithm() const noexcept { return sig_alg_; }

    // The value of a critical option or extension carrying a string
    // (force-command, source-address); nullopt when absent, or when its data
    // is not a single string.
    std::optional<std::string> critical_option(std::string_view name) const;
    bool has_extension(std::string_view name) const noexcept;

    // Checks the CA's signature over the signed part. `allowed` is the
    // CASignatureAlgorithms list (empty: every algorithm but ssh-rsa, as
    // OpenSSH's default). errc::signature_invalid on any failure.
    result<void> verify_signature(const std::vector<std::string>& allowed = {}) const;
    // Every algorithm a CA may sign with, ssh-rsa included: what
    // OpenSSH's sshkey_read/sshkey_froms accept when they parse a
    // certificate (the caller's CASignatureAlgorithms apply later, if any).
    static const std::vector<std::string>& any_signature_algorithm();
    // OpenSSH's default CASignatureAlgorithms (SSH_ALLOWED_CA_SIGALGS), for
    // ssh and sshd alike: security keys included, SHA-1 RSA left out.
    static constexpr std::string_view default_ca_signature_algorithms =
        "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,"
        "sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256";

private:
    bytes blob_;
    public_key key_;
    public_key ca_;
    std::string sig_alg_;
    std::size_t signed_size_ = 0;
    certificate_fields fields_;
};

// What sshkey_cert_check_authority checks, with its reasons: the kind (a
// host certificate for want_host, else a user one), `now` within [valid
// after, valid before), and `name` among the principals (when name is not
// empty; a certificate without principals passes unless require_principal).
// Returns the reason OpenSSH logs ("Certificate invalid: expired", ...) or
// nullopt when the certificate is acceptable.
std::optional<std::string> check_authority(const certificate& cert, bool want_host, bool require_principal,
                                           std::uint64_t now, std::string_view name);

// Critical options a server understands (force-command, source-address,
// verify-required): any other critical option makes the certificate
// unusable there.
std::optional<std::string> unknown_critical_option(const certificate& cert);

// "2026-12-06T01:20:00" in local time, as ssh-keygen -L prints a validity
// bound; "forever" and "always" for the ends.
std::string certificate_time(std::uint64_t t, bool is_after);

} // namespace longhaul
