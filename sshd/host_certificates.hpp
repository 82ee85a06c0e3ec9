// HostCertificate: the certificates sshd presents for its host keys, read
// and matched to the loaded keys as OpenSSH's sshd does at start-up.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/private_key.hpp"
#include "common/log.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// Reads each file (the first key line of a .pub file; when the file cannot
// be read or holds no key, the file with ".pub" appended) and keeps the
// certificates of a loaded host key (its public part equal to the certified
// key; a later certificate for the same key replaces an earlier one). A
// file that cannot be read, holds no certificate, or certifies no loaded
// key is logged with OpenSSH's error and skipped:
//   Could not load host certificate "F": REASON
//   Certificate file is not a certificate: F
//   No matching private key for certificate: F
// and each certificate kept is logged at debug level ("host certificate:
// #0 type 7 ED25519-CERT", the index being the key's). `log` may be empty.
// `agent_keys` (HostKeyAgent's) are loaded keys too, numbered after `keys`.
std::vector<certificate> load_host_certificates(const std::vector<std::string>& files,
                                                const std::vector<std::shared_ptr<const private_key>>& keys,
                                                const std::function<void(log_level, std::string_view)>& log,
                                                const std::vector<public_key>& agent_keys = {});

// The certificate in a .pub-style text ("type base64 [comment]"; blank,
// comment and unreadable lines skipped, as sshkey_try_load_public does):
// errc::unsupported when the first key is a plain key, invalid_format when
// no line holds a key.
result<certificate> parse_certificate_text(std::string_view text);

} // namespace longhaul
