// ssh-keygen -i (import a public key written by another program: RFC 4716
// "SSH2 PUBLIC KEY", PKCS#8 SubjectPublicKeyInfo, PKCS#1 RSA) and -r
// (SSHFP resource records, -g in RFC 3597's generic form), as OpenSSH
// 9.2's do_convert_from and do_print_resource_record.
#pragma once

#include "common/keys/public_key.hpp"
#include "ssh/keygen/keygen_commands.hpp"

#include <string>
#include <string_view>

namespace longhaul {

// The key blob of an RFC 4716 text (do_convert_from_ssh2's reading:
// header lines and their continuations skipped, the rest base64);
// errc::invalid_format when the base64 is not, errc::unsupported for an
// SSH.COM private key.
result<bytes> read_rfc4716_blob(std::string_view text);

// The SSHFP lines of a key for `host` (SHA-1 then SHA-256), or their
// generic TYPE44 form; empty for a key type SSHFP has no number for.
std::string sshfp_records(const public_key& key, const std::string& host, bool generic);

int keygen_import(const keygen_options& o);                                         // -i, -X
int keygen_dns_records(const keygen_options& o, const std::string& host, bool generic); // -r [-g]

} // namespace longhaul
