// Writing OpenSSH key revocation lists (PROTOCOL.krl), as `ssh-keygen -k`
// does: a builder that collects what is revoked, optionally starting from
// an existing KRL (`ssh-keygen -k -u`), and serialises it. No I/O, and no
// signature sections (OpenSSH's ssh-keygen never signs a KRL, and OpenSSH
// 9.4 and later ignore KRL signatures).
//
// The output is what krl.hpp's parser (and OpenSSH's) accepts: sections in
// OpenSSH's order (certificates per CA, explicit keys, SHA-1, SHA-256),
// keys and hashes sorted and unique, serials merged into disjoint ranges
// and written as a list (single serials), ranges, or a bitmap where a
// cluster of nearby serials is smaller that way.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/krl.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <string>

namespace longhaul {

class krl_writer {
public:
    // An empty KRL: version 0, generated at time 0, no comment.
    krl_writer() = default;
    // Starts from a parsed KRL (its header and everything it revokes), for
    // `ssh-keygen -k -u`. Serial bitmaps are kept packed as they were.
    explicit krl_writer(krl existing);

    void set_version(std::uint64_t version) noexcept { krl_.version = version; }
    void set_generated_date(std::uint64_t seconds) noexcept { krl_.generated_date = seconds; }
    void set_comment(std::string comment) { krl_.comment = std::move(comment); }

    // Certificates signed by `ca` (a plain public key blob; empty: any CA)
    // with a serial in lo..hi. invalid_argument for lo == 0 or lo > hi
    // (serial 0 means "no serial" and cannot be revoked by number).
    result<void> add_serials(byte_span ca, std::uint64_t lo, std::uint64_t hi);
    // Certificates signed by `ca` (empty: any CA) with this key ID.
    void add_key_id(byte_span ca, std::string key_id);
    // A plain public key, by its blob, by the SHA-1 or SHA-256 of its blob.
    void add_explicit_key(byte_span blob);
    void add_sha1(const sha1_digest& d) { krl_.sha1s.push_back(d); }
    void add_sha256(const sha256_digest& d) { krl_.sha256s.push_back(d); }

    // The KRL file, magic first.
    bytes to_blob() const;

    // What has been collected (not yet sorted, merged or de-duplicated).
    const krl& contents() const noexcept { return krl_; }

private:
    krl_certificate_authority& authority(byte_span ca);

    krl krl_;
};

} // namespace longhaul
