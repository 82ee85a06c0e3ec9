// The facts about a local account that authentication needs (a copy of
// struct passwd, so that callers need not keep libc's buffers around).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace longhaul {

struct user_account {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string home;
    std::string shell;
};

// getpwnam_r; nullopt when there is no such user.
std::optional<user_account> lookup_user(const std::string& name);
std::optional<user_account> lookup_user(uid_t uid);

} // namespace longhaul
