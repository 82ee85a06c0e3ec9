// ssh-keygen's operations (the subset users and sshd administrators need), with
// OpenSSH 9.2's prompts, messages, output and exit statuses.
#pragma once

#include "common/keys/fingerprint.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace longhaul {

struct keygen_options {
    std::optional<std::string> key_type;       // -t
    int bits = 0;                              // -b
    std::optional<std::string> file;           // -f (a prefix with -A)
    std::optional<std::string> new_passphrase; // -N
    std::optional<std::string> old_passphrase; // -P
    std::optional<std::string> comment;        // -C
    std::optional<std::string> format;         // -m
    fingerprint_hash hash = fingerprint_hash::sha256; // -E
    int rounds = 16;                           // -a
    std::string cipher = "aes256-ctr";         // -Z: new-format private keys' cipher
    bool quiet = false;                        // -q
    bool verbose = false;                      // -v
    bool bubblebabble = false;                 // -B: fingerprints as SHA-1 bubble babble
    std::optional<std::string> sk_provider;    // -w: SecurityKeyProvider library
    std::vector<std::string> generate_options; // -O when generating (security keys)
};

// Ends the program: the message (if any) goes to stderr, then exit(status).
// OpenSSH's fatal() is status 255.
class keygen_exit : public std::exception {
public:
    keygen_exit(int status, std::string message) : status_(status), message_(std::move(message)) {}
    int status() const noexcept { return status_; }
    const std::string& message() const noexcept { return message_; }
    const char* what() const noexcept override { return message_.c_str(); }

private:
    int status_;
    std::string message_;
};

int keygen_generate(const keygen_options& o);          // default action
int keygen_host_keys(const keygen_options& o);         // -A
int keygen_fingerprint(const keygen_options& o);       // -l
int keygen_print_public(const keygen_options& o);      // -y
int keygen_change_passphrase(const keygen_options& o); // -p
int keygen_export(const keygen_options& o);            // -e
int keygen_change_comment(const keygen_options& o);    // -c
// -Q [-l]: whether the KRL -f revokes each key file (exit 1 if any is
// revoked), after the KRL's listing with -l. Plain keys only for now.
int keygen_check_krl(const keygen_options& o, const std::vector<std::string>& keys, bool print);

} // namespace longhaul
