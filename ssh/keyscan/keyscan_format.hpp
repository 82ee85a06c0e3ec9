// What ssh-keyscan prints for a key it fetched and for a server's version
// line, as OpenSSH 9.2's keyprint() and congreet() do. Pure (randomness
// for -H salts is passed in).
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/random.hpp"

#include <string>
#include <string_view>

namespace longhaul {

struct keyscan_format {
    int port = 22;
    bool hash = false;        // -H
    bool sshfp = false;       // -D
    bool certificates = false; // -c
    int sshfp_digest = 0;     // 0 both, 1 SHA-1, 2 SHA-256
};

// The stdout lines (each ending in '\n') for a host key fetched for
// `output_names` (the comma-separated names of the entry). `cert`, when
// set, is printed instead of `key`. With -c the line has no host name;
// else, on port 22 and without -H, one line names all the names; otherwise
// one line per name, "[name]:port" off port 22, lowercased, hashed with -H.
// -D: SSHFP records (ssh-keygen -r's) for the names as given.
std::string format_keyscan_key(std::string_view output_names, const public_key& key, const certificate* cert,
                               const keyscan_format& f, random_source& rng);

// The stderr comment for a server's version line: "# host:port SSH-2.0-..."
// (';' with -D, so that the output is a zone file); the port is always
// there, unlike known_hosts names.
std::string format_keyscan_banner(std::string_view connect_name, int port, std::string_view version_line, bool sshfp);

} // namespace longhaul
