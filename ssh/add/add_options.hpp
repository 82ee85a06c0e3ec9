// ssh-add's command line (OpenSSH 9.2's): options as BSD getopt reads
// them (no reordering: the first operand ends the options), and which
// action they ask for. Pure, so that it is unit-tested without an agent.
#pragma once

#include "common/keys/fingerprint.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::add {

inline constexpr const char* usage_text =
    "usage: ssh-add [-cDdKkLlqvXx] [-E fingerprint_hash] [-H hostkey_file]\n"
    "               [-h destination_constraint] [-S provider] [-t life]\n"
    "               [file ...]\n"
    "       ssh-add -s pkcs11\n"
    "       ssh-add -e pkcs11\n"
    "       ssh-add -T pubkey ...\n";

// What ssh-add does, in the order OpenSSH's main() tests for them.
enum class action {
    add,               // files, or the default identities
    remove,            // -d
    remove_all,        // -D
    list_fingerprints, // -l
    list_public,       // -L
    lock,              // -x
    unlock,            // -X
    test,              // -T
    add_pkcs11,        // -s
    remove_pkcs11,     // -e
    load_resident,     // -K (with or without -d)
};

struct add_options {
    action what = action::add;
    bool key_only = false; // -k: no certificates
    bool confirm = false;  // -c
    bool quiet = false;    // -q
    bool download_resident = false; // -K
    int verbose = 0;       // -v
    fingerprint_hash hash = fingerprint_hash::sha256; // -E
    std::optional<std::uint32_t> lifetime; // -t, seconds (0: none)
    std::vector<std::string> hostkey_files; // -H
    std::vector<std::string> destinations;  // -h
    std::optional<std::string> sk_provider; // -S
    std::optional<std::string> pkcs11_provider; // -s / -e
    std::optional<std::uint32_t> maxsign; // -M (XMSS)
    std::optional<std::uint32_t> minleft; // -m (XMSS)
    std::vector<std::string> files;
};

// A command line that ends the program: the message for stderr (OpenSSH's
// fatal() lines end in "\r\n", its fprintf ones in "\n") and the status.
struct add_exit {
    int status = 0;
    std::string message;
};

struct parsed_add_args {
    std::optional<add_options> options;
    add_exit error;
};

// argv without the program name.
parsed_add_args parse_add_args(const std::vector<std::string>& args);

// -t's argument as OpenSSH's convtime reads it (seconds, or 1h30m...);
// nullopt when it is not a valid time or does not fit 32 bits.
std::optional<std::uint32_t> parse_lifetime(const std::string& text);

// The SecurityKeyProvider ssh-add names to the agent for every FIDO
// security key it adds: -S, else `env_provider` ($SSH_SK_PROVIDER, null
// when unset) verbatim, even empty, else "internal". Never for other keys.
std::string security_key_provider(const add_options& o, const char* env_provider);

// What this ssh-add cannot do yet (XMSS signature limits): the message to print and exit 1
// with, before anything is done; nullopt when the options are all
// supported. Never ignored silently.
std::optional<std::string> unsupported_option(const add_options& o);

} // namespace longhaul::add
