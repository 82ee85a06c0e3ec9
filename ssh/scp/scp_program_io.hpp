// What scp_program's source files share (scp_program.cpp,
// scp_program_legacy.cpp). Internal to ssh/scp.
#pragma once

#include <string>

namespace longhaul::scp::program_io {

// Writes s and a newline to stderr in one unbuffered write.
void to_stderr(const std::string& s);

} // namespace longhaul::scp::program_io
