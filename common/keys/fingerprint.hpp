// Key fingerprints in every hash OpenSSH offers (FingerprintHash,
// ssh-keygen -E) and the "drunken bishop" randomart picture ssh-keygen
// prints below them.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/public_key.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// FingerprintHash (sshd_config) and ssh-keygen -E: what logs show; md5 and
// sha256 are what OpenSSH's programs offer, the rest are for completeness.
enum class fingerprint_hash { md5, sha1, sha256, sha384, sha512 };

std::string_view fingerprint_hash_name(fingerprint_hash h) noexcept; // "SHA256", "MD5", ...
std::optional<fingerprint_hash> parse_fingerprint_hash(std::string_view name); // case-insensitive

// The digest of the key blob.
bytes key_digest(const public_key& key, fingerprint_hash h);
// "SHA256:<unpadded base64>", "MD5:aa:bb:..." (OpenSSH's default representations).
std::string key_fingerprint(const public_key& key, fingerprint_hash h);
// The same over a key blob as it is (key types this build cannot parse,
// such as the DSA and security keys an agent may hold for ssh-add -l).
std::string blob_fingerprint(byte_span blob, fingerprint_hash h);

// The "bubble babble" encoding of a digest (Huima's; ssh-keygen -B shows
// the SHA-1 of the key blob so): "xexax" for no input.
std::string bubblebabble(byte_span digest);

// The 17x9 picture, with "+--[ED25519 256]--+" above and
// "+----[SHA256]-----+" below, lines joined by "\n" (no final newline).
std::string randomart(byte_span digest, std::string_view key_type, int bits, std::string_view hash_name);
std::string key_randomart(const public_key& key, fingerprint_hash h);

} // namespace longhaul
