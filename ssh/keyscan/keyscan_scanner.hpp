// ssh-keyscan's engine: every (entry, key type) pair is one connection
// that offers only that type's host key algorithms, runs the transport
// core's key exchange until the server's signature over the exchange hash
// verifies, prints the key and hangs up. Many connections at once on one
// event loop, each given up after -T seconds without input; the entries
// are read lazily, so a long -f file or a large CIDR range costs only the
// connections in flight.
#pragma once

#include "ssh/keyscan/keyscan_options.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace longhaul {

// One connection to make: the names to connect to and the names to print.
struct keyscan_job {
    std::string connect_names;
    std::string output_names;
    keyscan_type type = kt_rsa;
};

// The entries of the -f files and then the command line, expanded (CIDR
// ranges, one job per requested key type) one at a time, as do_host() does.
class keyscan_job_source {
public:
    explicit keyscan_job_source(const keyscan_options& o);
    ~keyscan_job_source();
    keyscan_job_source(const keyscan_job_source&) = delete;
    keyscan_job_source& operator=(const keyscan_job_source&) = delete;
    // The next job; nullopt when every entry is done. A -f file that cannot
    // be opened is fatal (OpenSSH: "ssh-keyscan: FILE: error", status 255).
    std::optional<keyscan_job> next();

private:
    bool next_entry(std::string& entry);
    bool load_target();

    const keyscan_options& o_;
    std::size_t file_index_ = 0, host_index_ = 0;
    std::FILE* file_ = nullptr;
    bool file_is_stdin_ = false;
    std::optional<cidr_range> range_;
    std::optional<keyscan_target> target_;
    std::size_t type_index_ = 0;
};

// Runs the scan to the end; true when at least one key was printed.
bool run_keyscan(const keyscan_options& o);

} // namespace longhaul
