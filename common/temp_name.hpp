// Names for temporary files, directories and sockets as OpenSSH makes
// them. OpenSSH's own mkstemp/mkdtemp replace every trailing 'X' of a
// template with a random letter or digit ("/tmp/ssh-XXXXXXXXXXXX" becomes
// "/tmp/ssh-TW963RTi91ty"); glibc's replace only the last six and leave
// the others as X's, in names users see (SSH_AUTH_SOCK).
#pragma once

#include "common/random.hpp"

#include <cstddef>
#include <string>

namespace longhaul {

// `tmpl` with its trailing X's, but the last `keep`, replaced by random
// letters and digits (OpenBSD's alphabet of 62, each equally likely).
// keep = 6 leaves mkstemp(3) or mkdtemp(3) the six they replace while
// making the name exclusively; keep = 0 names something those cannot
// make (a socket to bind).
std::string fill_temp_template(std::string tmpl, random_source& rng, std::size_t keep = 6);
// The same from a system_random of its own.
std::string fill_temp_template(std::string tmpl, std::size_t keep = 6);

} // namespace longhaul
