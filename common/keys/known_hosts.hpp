// known_hosts files as OpenSSH's hostfile.c reads them, for the ssh client
// (server keys) and sshd (client host keys for hostbased authentication):
// entries for a host name, plain or hashed ("|1|salt|hash"), "[host]:port"
// names for non-default ports, wildcard and negated patterns, @revoked and
// @cert-authority markers, and the status of a key against them.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/public_key.hpp"
#include "common/log.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

enum class host_key_status {
    ok,        // a matching key is known
    not_found, // no key for this host (OpenSSH's HOST_NEW)
    changed,   // other keys are known for this host, not this one
    revoked,   // the key is listed @revoked for this host
};

struct known_host_entry {
    std::string file;        // the path as configured (expanded)
    unsigned long line = 0;
    std::string hosts;       // the host field as written
    known_hosts_marker marker = known_hosts_marker::none;
    public_key key;
    std::string lookup_name; // the name the entry was loaded for
};

// The name under which a host's keys are filed: HostKeyAlias when set,
// else the host, as "[host]:port" when the port is not 22 (port 0 means
// "no port", as for the fallback lookup).
std::string known_hosts_name(std::string_view host, int port, const std::optional<std::string>& alias = std::nullopt);

// True when `name` matches the host field of a known_hosts line: a hashed
// entry, or a comma-separated pattern list where a negated pattern means no
// match, compared case-insensitively.
bool known_hosts_field_matches(std::string_view field, std::string_view name);

// The keys known for one name (OpenSSH's struct hostkeys).
class known_host_keys {
public:
    // Adds the entries of `path` matching `name`. A missing file adds
    // nothing; unreadable lines are skipped (logged at debug level).
    void load_file(std::string_view name, const std::string& path, const log_sink& log = {});
    // The same from text already read (tests, fuzzing, KnownHostsCommand output).
    void load_text(std::string_view name, std::string_view text, std::string_view path, const log_sink& log = {});

    const std::vector<known_host_entry>& entries() const noexcept { return entries_; }

    // OpenSSH's check_key_in_hostkeys(): ok on an equal unmarked key;
    // changed when unmarked keys exist but none is equal (of any type);
    // not_found without unmarked keys; revoked, overriding the rest, when an
    // @revoked entry holds this key. `found` gets the matching entry (ok) or
    // the last non-matching one (changed).
    host_key_status check(const public_key& key, const known_host_entry** found = nullptr) const;
    // The same for a host certificate (check_key_in_hostkeys with a
    // certificate): ok when a @cert-authority entry holds its CA key, else
    // not_found (never changed: a CA for other hosts is not a conflict);
    // revoked, overriding, when an @revoked entry holds the certified key
    // or the CA key. `found` gets the CA entry (ok).
    host_key_status check_certificate(const certificate& cert, const known_host_entry** found = nullptr) const;
    // The first unmarked entry of this key type (ECDSA curves are distinct types).
    const known_host_entry* find_type(key_type type) const;
    bool has_cert_authority() const;

private:
    std::vector<known_host_entry> entries_;
};

// Other names the same key is filed under in `files` (lines whose host field
// does not match `host_name`), as OpenSSH lists them under "This host key is
// known by the following other names/addresses:": "file:line: hosts" with
// hashed names shown as "[hashed name]" and paths under `home` as "~/...".
std::vector<std::string> other_names_for_key(const public_key& key, std::string_view host_name,
                                             const std::vector<std::string>& files, std::string_view home,
                                             const log_sink& log = {});

// The key type word of messages: "ED25519", "ECDSA", "RSA".
std::string_view key_type_label(const public_key& key) noexcept;

} // namespace longhaul
