// The one-way switch from root to a user, and the user's groups.
#pragma once

#include "common/result.hpp"
#include "sshd/user_account.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// Supplementary groups of a user (primary included) by id and name, for
// initgroups checks, Match Group and AllowGroups/DenyGroups.
struct user_groups {
    std::vector<gid_t> ids;
    std::vector<std::string> names;
};
user_groups lookup_groups(const user_account& user);

// Runs with the user's effective ids while alive (root only; a no-op
// otherwise), as OpenSSH's temporarily_use_uid() does when it reads a user's
// authorized_keys: root must not open user files as root.
class temporary_identity {
public:
    temporary_identity(const user_account& user, const user_groups& groups);
    ~temporary_identity();
    temporary_identity(const temporary_identity&) = delete;
    temporary_identity& operator=(const temporary_identity&) = delete;

private:
    bool switched_ = false;
    std::vector<gid_t> saved_groups_;
    gid_t saved_egid_ = 0;
};

// Permanently becomes `user`: setgid, initgroups, setuid, then checks that
// it took: real/effective/saved ids all match and root cannot be regained.
// Without root this is a no-op that checks we already are that user.
// `error` says what failed.
result<void> become_user(const user_account& user, std::string& error);

} // namespace longhaul
