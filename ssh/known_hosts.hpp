// known_hosts files as the ssh client uses them beyond reading (which is
// common/keys/known_hosts.hpp): other names of a key, host key algorithm
// order, fingerprints in messages, and appending new keys.
#pragma once

#include "common/keys/known_hosts.hpp"
#include "common/random.hpp"
#include "ssh/client_config.hpp"
#include "ssh/ssh_config.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// OpenSSH's order_hostkeyalgs(): with HostKeyAlgorithms not configured,
// the algorithms whose key types are known for the host go first, and
// every certificate algorithm when a @cert-authority line matches the host
// (all of `algorithms` unchanged when the first one's plain key type is
// known).
std::string order_host_key_algorithms(std::string_view algorithms, const known_host_keys& known);

// "SHA256:..." / "MD5:aa:bb:.." and the other FingerprintHash digests.
std::string key_fingerprint_text(const public_key& key, key_fingerprint_hash hash);

// Appends "name keytype base64\n" (name lowercased, or hashed with a fresh
// salt when `hash`) to `path`, as add_host_to_hostfile() does; with `hash`
// and several comma-separated names, each gets its own hashed line. Creates
// the ~/.ssh directory (mode 0700) when `path` lies directly in `ssh_dir`
// and it is missing, logging "Could not create directory ..." on failure.
// False when the file cannot be written.
bool add_known_host(const std::string& path, std::string_view names, const public_key& key, bool hash,
                    random_source& rng, std::string_view ssh_dir, const log_sink& log = {});

} // namespace longhaul
