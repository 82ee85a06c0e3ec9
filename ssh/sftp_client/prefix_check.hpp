// The check a resume makes before it continues after the `n` bytes that
// already arrived (scp -a, sftp's reget/reput): the local file and the
// remote one must hold the same [0, n), or the transfer starts again from
// zero instead of splicing the rest onto a stale or different prefix.
//
// With a server that offers check-file-handle (Longhaul's sftp-server and
// internal-sftp) every byte is compared: SHA-256 of both sides, in pieces
// of prefix_check_piece bytes (a server bounds what one request may hash),
// up to prefix_check_in_flight pieces at once, the server hashing its side
// while the disk worker hashes ours (the event loop hashes nothing). Without
// it (OpenSSH's server), or when the server refuses the request, only
// samples can be compared without reading the whole prefix back: the first
// and last 64 KiB (two READs), which misses a change in between.
#pragma once

#include "ssh/sftp_client/session.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace longhaul::sftp {

inline constexpr std::uint64_t prefix_check_piece = 64 * 1024 * 1024;
inline constexpr int prefix_check_in_flight = 4;

struct prefix_verdict {
    bool same = false;
    bool lost = false; // the session died under the check
    // How the prefix was compared, for -v (debug level 1).
    std::string how;
};

// `handle` is the remote file opened for reading; `fd` the local one,
// readable. `done` is called once, on the loop's thread. `piece`: the
// bytes hashed per request (smaller in the tests, to see many pieces).
void check_prefix(session& s, const bytes& handle, int fd, std::uint64_t n,
                  std::function<void(const prefix_verdict&)> done, std::uint64_t piece = prefix_check_piece);

} // namespace longhaul::sftp
