// Revoked key files as sshd's RevokedKeys and ssh's RevokedHostKeys read
// them (OpenSSH's sshkey_check_revoked): a KRL (krl.hpp) when the file
// starts with the KRL magic, otherwise a list of public keys, one per line.
// Parsing only, from bytes already read; revocation_file.hpp reads files.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/krl.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <string_view>

namespace longhaul {

class revocation_list {
public:
    enum class format { krl, key_list };

    format kind() const noexcept { return kind_; }
    // The KRL; for a key list, its keys as explicitly revoked keys.
    const krl& contents() const noexcept { return contents_; }

    // Whether the key is revoked: listed (a key list compares public keys,
    // as sshkey_equal_public does), or listed in the KRL by blob, SHA-1 or
    // SHA-256.
    bool revoked(const public_key& key) const { return contents_.revokes(key); }
    // Whether a certificate is revoked, as OpenSSH's sshkey_check_revoked
    // answers for one: its certified key listed; in a KRL also its serial
    // or key ID under its CA (or in a section for any CA); in a key list
    // also its CA's key (sshkey_in_file's check_ca). A reader that must
    // refuse a revoked CA in a KRL as well asks about signature_key().
    bool revoked(const certificate& cert) const;

private:
    friend result<revocation_list> parse_revocation_list(byte_span file);
    format kind_ = format::key_list;
    krl contents_;
};

// A KRL (parse_krl's errors) or a key list (parse_revoked_key_list's).
result<revocation_list> parse_revocation_list(byte_span file);

// The key list form, as OpenSSH's sshkey_in_file reads it for revocation:
// lines end at '\n' (and at a NUL, as C strings do); blank lines and lines
// whose first non-blank is '#' are skipped; every other line must be
// "keytype base64 [comment]", or the whole file is refused (invalid_format,
// key_type_mismatch): OpenSSH fails closed on a line it cannot read, and so
// does this. Exceptions, as in OpenSSH or because no key Longhaul accepts
// could match:
//  - RSA keys under 1024 bits are skipped (OpenSSH's SSH_ERR_KEY_LENGTH);
//  - a certificate of an Ed25519, ECDSA or RSA key stands for its public
//    key (OpenSSH compares public parts), its signature unchecked;
//  - keys of types only OpenSSH parses (DSA, FIDO) are skipped unchecked.
// Returns the canonical blobs of the listed keys, sorted and unique.
result<std::vector<bytes>> parse_revoked_key_list(std::string_view text);

// What OpenSSH's ssh_err() says for the errors above, for log lines such as
// "Error checking authentication key ... in revoked keys file F: REASON".
std::string_view revocation_error_reason(errc e) noexcept;

} // namespace longhaul
