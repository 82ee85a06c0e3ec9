// ssh-keygen -F (find a host), -R (remove a host's keys) and -H (hash the
// host names) on a known_hosts file, as OpenSSH 9.2's do_known_hosts and
// hostkeys_foreach do them: which lines match (patterns, hashed names,
// "[host]:port"), which are kept (@cert-authority and @revoked lines are
// never removed or hashed, nor are names with wildcards hashed), which are
// invalid (the file is then left alone), and the messages.
//
// edit_known_hosts is the pure part (text in, text and messages out);
// keygen_known_hosts reads the file and replaces it, keeping
// "<file>.old".
#pragma once

#include "common/keys/fingerprint.hpp"
#include "common/random.hpp"
#include "ssh/keygen/keygen_commands.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

enum class known_hosts_action { find, remove, hash };

struct known_hosts_request {
    known_hosts_action action = known_hosts_action::find;
    std::string host;               // -F / -R: a name, or "[name]:port"
    bool hash_found = false;        // -F with -H: matching lines printed hashed
    bool print_fingerprint = false; // -F with -l
    bool randomart = false;         // ... and -v
    bool quiet = false;             // -q
    fingerprint_hash fingerprint = fingerprint_hash::sha256;
    std::string path;               // for messages "path:N"
};

struct known_hosts_result {
    std::string file;               // -R, -H: the new file
    std::string printed;            // standard output: -F's lines, -R's "# Host ... found"
    std::vector<std::string> notes; // OpenSSH's logit()/error() lines, in order
    bool found = false;
    bool invalid = false;           // a malformed line: the file must not be replaced
    bool has_unhashed = false;      // -H hashed something: the .old copy holds names
};

known_hosts_result edit_known_hosts(std::string_view contents, const known_hosts_request& request,
                                    random_source& rng);

// -F, -R, -H on o.file (default ~/.ssh/known_hosts). The exit status.
int keygen_known_hosts(const keygen_options& o, known_hosts_request request);

} // namespace longhaul
