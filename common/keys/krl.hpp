// OpenSSH key revocation lists (KRLs, PROTOCOL.krl): the binary files
// `ssh-keygen -k` writes and sshd's RevokedKeys / ssh's RevokedHostKeys
// accept. Parsing only, from bytes already read; no I/O.
//
// The parser is as strict as OpenSSH's krl.c (ssh_krl_from_blob, OpenSSH
// 9.4 and later): a wrong format version, an unknown section or
// certificate subsection, a critical extension, a section with bytes left
// over, a hash of the wrong length, serial number zero, a range with
// lo > hi, a bitmap that wraps past 2^64 or a truncated field rejects the
// whole list. Signature sections (never produced by ssh-keygen, and no
// longer verified by OpenSSH since 9.4) and non-critical extensions are
// skipped after checking their framing.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// "SSHKRL\n\0": a file that starts with it is a KRL; anything else given
// as a revocation list is a list of public keys (sshkey_check_revoked).
inline constexpr std::string_view krl_magic{"SSHKRL\n\0", 8};
inline constexpr std::uint32_t krl_format_version = 1;

bool starts_with_krl_magic(byte_span file) noexcept;

// An inclusive range of revoked certificate serial numbers (lo >= 1).
struct krl_serial_range {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    bool operator==(const krl_serial_range&) const = default;
};

// A serial bitmap subsection as stored: bit N of `bits` (an unsigned
// big-endian integer without leading zero bytes) revokes serial
// `offset + N`. Kept packed: expanding an alternating bitmap into ranges
// would take 64 times the memory of the file.
struct krl_serial_bitmap {
    std::uint64_t offset = 0;
    bytes bits;
};

// The certificates one CA revoked (all KRL_SECTION_CERTIFICATES sections
// naming the same CA, merged as OpenSSH merges them).
struct krl_certificate_authority {
    // The CA's key blob (canonical for the key types Longhaul parses, as
    // stored for other OpenSSH key types); empty for "any CA".
    bytes ca_key;
    std::vector<krl_serial_range> serial_ranges; // sorted, disjoint, merged
    std::vector<krl_serial_bitmap> serial_bitmaps;
    std::vector<std::string> key_ids; // sorted, unique

    // Whether serial (non-zero; serial 0 is never revoked) is listed.
    bool serial_revoked(std::uint64_t serial) const noexcept;
    bool key_id_revoked(std::string_view key_id) const noexcept;
};

using sha1_digest = std::array<std::uint8_t, 20>;
using sha256_digest = std::array<std::uint8_t, 32>;

struct krl {
    std::uint64_t version = 0;        // krl_version (ssh-keygen -z)
    std::uint64_t generated_date = 0; // seconds since the epoch
    std::uint64_t flags = 0;
    std::string comment;

    std::vector<bytes> keys;             // explicitly revoked key blobs, sorted, unique
    std::vector<sha1_digest> sha1s;      // SHA-1 of revoked key blobs, sorted, unique
    std::vector<sha256_digest> sha256s;  // SHA-256 of revoked key blobs, sorted, unique
    std::vector<krl_certificate_authority> authorities; // in order of first appearance

    // OpenSSH's ssh_krl_check_key for a plain key: its blob, or the SHA-1
    // or SHA-256 of its blob, is listed. (Certificate sections revoke
    // certificates: their readers check a certificate's serial and key ID
    // under its CA through `authorities`.)
    bool revokes(const public_key& key) const;
    // A certificate section's part of the check: the certificate's serial
    // or key ID revoked under its CA, or in a section for any CA.
    bool revokes_serial_or_id(const certificate& cert) const;
};

// Sorts `ranges` and joins the overlapping and adjacent ones, as
// OpenSSH's insert_serial_range() keeps them (the parser, the -Q -l
// listing and the writer all need this form).
void merge_serial_ranges(std::vector<krl_serial_range>& ranges);

// Parses a whole KRL file (magic included). Errors:
//   invalid_format   not a KRL, bad version, unknown section, bad lengths,
//                    trailing bytes in a section, NUL inside a string
//   incomplete       a field runs past the end of its section or the file
//   invalid_argument a serial number of zero, or a range with lo > hi
//   unsupported      a critical extension
//   too_large        a bitmap of more than 16384 bits
//   malformed        a negative bitmap mpint
result<krl> parse_krl(byte_span file);

// What `ssh-keygen -Q -l` prints for a KRL (OpenSSH's krl_dump): version,
// generation time (local time), comment, then the revoked keys (SHA256
// fingerprints), hashes, and per CA its serial numbers and key IDs, in
// OpenSSH's order and words. Every line ends in '\n'.
std::string describe_krl(const krl& k);

// Key type names OpenSSH parses that Longhaul does not (DSA, FIDO keys,
// and certificates). A revocation list may name them; no key Longhaul
// accepts can be one, so they are kept or skipped rather than rejected.
bool openssh_only_key_type(std::string_view name) noexcept;

} // namespace longhaul
