// File attributes (draft-02 §5): the flags word says which fields follow.
// Decoding rejects flag bits version 3 does not define (their fields could
// not be skipped) and bounds the extended pairs.
#pragma once

#include "common/sftp/sftp_protocol.hpp"
#include "common/wire.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace longhaul::sftp {

struct attrs {
    std::uint32_t flags = 0;
    std::uint64_t size = 0;
    std::uint32_t uid = 0, gid = 0;
    std::uint32_t permissions = 0; // st_mode, file type bits included when a server sends them
    std::uint32_t atime = 0, mtime = 0;
    // (type, data) pairs, only with attr::extended.
    std::vector<std::pair<std::string, std::string>> extended;

    bool has(std::uint32_t flag) const noexcept { return (flags & flag) != 0; }

    void encode(wire_writer& w) const;
    // Reads one ATTRS from r; failures are recorded in r (sticky): incomplete,
    // malformed (unknown flag bit) or too_large (too many extended pairs).
    static attrs decode(wire_reader& r);

    // OpenSSH's stat_to_attrib(): size, uid/gid, mode and times.
    static attrs from_stat(const struct stat& st);

    friend bool operator==(const attrs&, const attrs&) = default;
};

} // namespace longhaul::sftp
