// ssh-keygen -D: the public keys a PKCS#11 token holds, as OpenSSH 9.2's
// do_download prints them (one "TYPE BASE64 LABEL" line each, or with -l
// their fingerprints).
#pragma once

#include "ssh/keygen/keygen_commands.hpp"

#include <string>

namespace longhaul::keygen {

int keygen_download_pkcs11(const keygen_options& o, const std::string& provider, bool fingerprints);

} // namespace longhaul::keygen
