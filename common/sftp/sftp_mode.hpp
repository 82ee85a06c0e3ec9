// A file mode as ls -l and BSD strmode(3) write it, which OpenSSH's sftp
// client and sftp-server both use for long listings: "drwxr-xr-x " (the
// type, the permissions with setuid/setgid/sticky letters, and a trailing
// space where BSD marks ACLs).
#pragma once

#include <cstdint>
#include <string>

namespace longhaul::sftp {

std::string mode_string(std::uint32_t mode);

} // namespace longhaul::sftp
