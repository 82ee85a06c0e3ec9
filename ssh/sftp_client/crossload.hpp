// Copies between two SFTP servers through this process (scp -3, the
// default for a copy between two remote hosts), as OpenSSH's
// sftp_crossload() and sftp_crossload_dir(): the origin's file is read and
// each DATA reply is written to the destination as it arrives, without
// touching the local disk. Both sessions are driven together, so reads
// from the origin and writes to the destination are in flight at the same
// time, up to a fixed number of bytes.
#pragma once

#include "ssh/sftp_client/remote_fs.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace longhaul::sftp {

struct crossload_options {
    bool preserve = false;         // -p: modes and times
    std::uint32_t num_requests = 0; // -R: reads in flight (0: in_flight_bytes / chunk)
    std::uint64_t in_flight_bytes = 16 * 1024 * 1024; // reads and unacknowledged writes together
    bool print = false;            // "Retrieving DIR" lines of a recursive copy
    std::uint64_t limit_bps = 0;   // -l, bits per second read from the origin (0: none)
};

// One regular file; `a` is its attributes when known (a directory
// listing), else it is stat'ed. 0, or -1 with OpenSSH's messages (through
// the origin's output sink).
int crossload_file(remote_fs& from, remote_fs& to, const std::string& from_path, const std::string& to_path,
                   std::optional<attrs> a, const crossload_options& o);
// A directory tree: directories made on the destination, regular files
// copied, anything else skipped with a message; -p sets the directories'
// modes and times once their contents are written.
int crossload_dir(remote_fs& from, remote_fs& to, const std::string& from_path, const std::string& to_path,
                  const crossload_options& o);

} // namespace longhaul::sftp
