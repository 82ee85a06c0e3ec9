// ssh-keygen -D: the public keys a PKCS#11 token holds, as OpenSSH 9.2's
// do_download prints them (one "TYPE BASE64 LABEL" line each, or with -l
// their fingerprints); with -s, a CA key on a token.
#pragma once

#include "ssh/keygen/keygen_cert.hpp"
#include "ssh/keygen/keygen_commands.hpp"

#include <string>

namespace longhaul::keygen {

int keygen_download_pkcs11(const keygen_options& o, const std::string& provider, bool fingerprints);

// load_pkcs11_key (-s CA.pub -D module): the token key whose public half is
// the one in `ca_path`, logged in with -P's PIN when given (else asked
// when a signature needs it). Exits as OpenSSH's does when the public key
// cannot be read, the module lists no key, or none matches.
ca_signer pkcs11_ca(const keygen_options& o, const std::string& provider, const std::string& ca_path);

} // namespace longhaul::keygen
