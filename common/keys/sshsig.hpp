// SSHSIG (OpenSSH's PROTOCOL.sshsig): detached signatures of files and
// other data made with SSH keys (ssh-keygen -Y sign / verify, git's SSH
// commit signing).
//
//   "SSHSIG" uint32 version (1) string publickey string namespace
//   string reserved string hash_algorithm string signature
//
// The key signs "SSHSIG" string namespace string reserved string
// hash_algorithm string H(message), so a signature for one namespace
// ("file", "git", ...) cannot be replayed in another.
#pragma once

#include "common/crypto/hash.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/private_key.hpp"

#include <functional>
#include <optional>

#include <string>
#include <string_view>

namespace longhaul {

inline constexpr std::string_view sshsig_label = "SSH SIGNATURE";

struct sshsig {
    public_key key;        // the signer's key (a certificate's certified key)
    std::optional<certificate> cert; // the signer's certificate, when it signed as one
    std::string ns;        // namespace
    std::string reserved;  // empty in every version so far; still signed
    std::string hash_alg;  // "sha256" or "sha512"
    bytes signature;       // an SSH signature blob (string alg, string sig)
};

// The armored form ("-----BEGIN SSH SIGNATURE-----"), or the raw blob.
// invalid_format when malformed or of another version; unsupported for an
// unknown key type or hash. A certificate's CA signature is checked here
// (any algorithm, as OpenSSH's sshkey_froms): signature_invalid.
result<sshsig> parse_sshsig(std::string_view armored);
result<sshsig> parse_sshsig_blob(byte_span blob);

// Checks that `sig` is a signature by sig.key over `message` in namespace
// `ns` (signature_invalid otherwise). Whether sig.key is trusted is the
// caller's decision. As OpenSSH, RSA signatures must be rsa-sha2-256/512.
result<void> verify_sshsig(const sshsig& sig, std::string_view ns, byte_span message);

// Signs as ssh-keygen -Y sign does (RSA keys use rsa-sha2-512); returns
// the armored text, 70 columns.
result<std::string> sign_sshsig(const private_key& key, std::string_view ns, byte_span message,
                                std::string_view hash_alg = "sha512");
// The same where the private half is elsewhere (an agent): `sign` makes an
// SSH signature blob with the algorithm it is given. With `cert` (whose
// certified key must be `key`) the signature names the certificate, as
// ssh-keygen -Y sign -f id-cert.pub does. The result is verified before it
// is returned (signature_invalid: the signer used another key).
using sshsig_signer = std::function<result<bytes>(std::string_view sig_alg, byte_span data)>;
result<std::string> sign_sshsig(const public_key& key, const std::optional<certificate>& cert,
                                const sshsig_signer& sign, std::string_view ns, byte_span message,
                                std::string_view hash_alg = "sha512");

// For messages hashed piece by piece (ssh-keygen -Y on files of any size):
// the hash an SSHSIG names ("sha256", "sha512"; unsupported otherwise), and
// signing and verifying over the message's digest by that hash.
result<hash_alg> sshsig_hash_alg(std::string_view name) noexcept;
result<std::string> sign_sshsig_digest(const public_key& key, const std::optional<certificate>& cert,
                                       const sshsig_signer& sign, std::string_view ns, std::string_view hash_alg,
                                       byte_span message_digest);
result<void> verify_sshsig_digest(const sshsig& sig, std::string_view ns, byte_span message_digest);

bytes sshsig_to_blob(const sshsig& sig);

} // namespace longhaul
