// ssh-keygen -k: generating (and with -u updating) a key revocation list,
// as OpenSSH 9.2's do_gen_krl and update_krl_from_file do, with their
// messages and exit statuses. The KRL's encoding is krl_writer's.
//
//   ssh-keygen -k -f krl_file [-u] [-s ca_public] [-z version_number] file ...
//
// Each file (or "-", standard input) holds one entry a line, '#' starting
// a comment anywhere on it:
//   serial: N | N-M    certificates of the -s CA by serial (needs -s)
//   id: key_id         certificates of the -s CA by key ID (needs -s)
//   key: <public key>  a plain key (a certificate's own key) by its blob
//   sha1: <public key> the same by the SHA-1 of its blob
//   sha256: <public key>  ... by the SHA-256 of its blob
//   hash: SHA256:<fingerprint>  a key by its SHA256 fingerprint
//   <public key>       a plain key by its blob; a certificate by serial
//                      under its own CA, or by key ID when its serial is 0
// "-s none" names any CA. -z sets the KRL's version (0 leaves it), -C its
// comment; a new KRL is dated now, an updated one keeps its date.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/krl.hpp"
#include "common/keys/krl_writer.hpp"
#include "ssh/keygen/keygen_commands.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

struct krl_generate_request {
    std::optional<std::string> ca_path; // -s: the CA's public key, or "none"
    bool update = false;                // -u
    std::uint64_t version = 0;          // -z
    std::vector<std::string> files;
};

// -k: o.file is the KRL written, o.comment (-C) its comment, o.quiet (-q)
// silences the "Revoking from" lines.
int keygen_generate_krl(const keygen_options& o, const krl_generate_request& request);

namespace keygen {

// The CA that serial: and id: lines name: none (no -s), any ("-s none"),
// or a key's blob.
struct krl_ca {
    bool given = false;
    bytes key; // empty with `given`: any CA
};

// update_krl_from_file for one file's contents: adds every line's
// revocation to `builder`. `path` names the file in messages. A bad line
// ends the program as OpenSSH's fatal() does (keygen_exit, status 255).
void revoke_from_text(krl_writer& builder, std::string_view text, const std::string& path, const krl_ca& ca);

// load_krl: the KRL at `path`, with -Q's and -u's messages on failure.
krl load_krl(const std::string& path);

} // namespace keygen
} // namespace longhaul
