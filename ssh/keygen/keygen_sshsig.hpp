// ssh-keygen -Y: SSHSIG signatures (common/keys/sshsig.hpp) as OpenSSH
// 9.2's ssh-keygen makes and checks them, the interface git's SSH commit
// signing drives: sign (a key file, a certificate or an agent's key),
// verify against an allowed_signers file (common/keys/allowed_signers.hpp)
// and a revocation list, check-novalidate, find-principals and
// match-principals, with -O hashalg=, verify-time= and print-pubkey.
// Messages, output and exit statuses as OpenSSH's.
#pragma once

#include "ssh/keygen/keygen_commands.hpp"

#include <optional>
#include <string>
#include <vector>

namespace longhaul {

// What -Y needs beyond keygen_options (-f: the key, or the allowed
// signers file; -q).
struct sshsig_request {
    std::string operation;                 // -Y
    std::optional<std::string> ns;         // -n
    std::optional<std::string> identity;   // -I
    std::optional<std::string> signature;  // -s
    std::optional<std::string> revoked;    // -r
    bool use_agent = false;                // -U
    std::vector<std::string> options;      // -O
    std::vector<std::string> files;        // sign: the files ("-": standard input)
};

// The exit status. Prints usage and exits for an unknown operation.
int keygen_sshsig(const keygen_options& o, const sshsig_request& r, void (*usage)());

} // namespace longhaul
