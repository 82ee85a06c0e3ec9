// Helpers shared by the file tasks (download_task.cpp, upload_task.cpp);
// not part of the engine's interface.
#pragma once

#include "ssh/sftp_client/session.hpp"

#include <cstdint>

namespace longhaul::sftp::detail {

inline std::uint32_t status_of(const reply& r) noexcept
{
    if (const auto* s = std::get_if<status_reply>(&r))
        return s->code;
    return static_cast<std::uint32_t>(status_code::bad_message);
}

// The session died under the request: OpenSSH's client would already have
// exited with "Connection closed"; the program reports that once.
inline bool lost(session& s, const reply& r) noexcept
{
    return !s.ok() && status_of(r) == static_cast<std::uint32_t>(status_code::connection_lost);
}

} // namespace longhaul::sftp::detail
