// allowed_signers files (ssh-keygen(1) "ALLOWED SIGNERS"): who may make
// SSHSIG signatures, as OpenSSH 9.2's sshsig.c reads them for ssh-keygen
// -Y verify, find-principals and match-principals (git's SSH commit
// signing). One entry per line:
//
//   principals [options] key
//
// principals: a pattern list (wildcards, '!' negation), quoted if it
// holds blanks; options: cert-authority, namespaces="pattern-list",
// valid-after="time", valid-before="time" (YYYYMMDD[HHMM[SS]][Z]). A plain
// key line matches that key; a cert-authority line matches certificates
// its key signed, whose principals then stand for the signer.
//
// Pure functions over the file's text, with OpenSSH's messages; the
// caller reads the file (bounded) and prints them.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/log.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// Who made a signature: its key, or its certificate (and the certified key).
struct signature_signer {
    public_key key;
    std::optional<certificate> cert;
};

struct signers_message {
    log_level level; // error: printed by default; debug1: with -v
    std::string text;
};

struct allowed_signers_query {
    std::string path;                     // names lines in messages: "path:N"
    signature_signer signer;
    std::optional<std::string> principal; // verify -I; nullopt: find the principals
    std::optional<std::string> ns;        // the signature's namespace (verify)
    std::uint64_t verify_time = 0;
};

struct allowed_signers_result {
    bool found = false;
    // find-principals: the principals the matching line grants, comma
    // separated (a certificate's own principals that the line's patterns
    // match).
    std::string principals;
    // error: what OpenSSH prints at its default level (a malformed line is
    // reported and skipped, as by OpenSSH); debug1: what -v adds.
    std::vector<signers_message> log;
};

// sshsig_check_allowed_keys (with a principal) and sshsig_find_principals
// (without): the first line that allows the signer.
allowed_signers_result check_allowed_signers(std::string_view contents, const allowed_signers_query& query);

// sshsig_match_principals: the principals field of every line whose
// pattern list matches `principal`, in file order. error set (and the
// list cut short) at a malformed line.
struct principals_list_result {
    std::vector<std::string> principals;
    std::vector<signers_message> log;
    bool error = false;
};
principals_list_result match_allowed_principals(std::string_view contents, std::string_view path,
                                                std::string_view principal);

} // namespace longhaul
