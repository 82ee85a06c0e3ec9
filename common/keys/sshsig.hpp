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

#include "common/keys/private_key.hpp"

#include <string>
#include <string_view>

namespace longhaul {

inline constexpr std::string_view sshsig_label = "SSH SIGNATURE";

struct sshsig {
    public_key key;        // the signer, as the signature names it
    std::string ns;        // namespace
    std::string reserved;  // empty in every version so far; still signed
    std::string hash_alg;  // "sha256" or "sha512"
    bytes signature;       // an SSH signature blob (string alg, string sig)
};

// The armored form ("-----BEGIN SSH SIGNATURE-----"), or the raw blob.
// invalid_format when malformed or of another version; unsupported for an
// unknown key type or hash.
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

bytes sshsig_to_blob(const sshsig& sig);

} // namespace longhaul
