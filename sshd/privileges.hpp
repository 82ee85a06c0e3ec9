// The one-way switch from root to a user, and the user's groups.
#pragma once

#include "common/result.hpp"
#include "sshd/user_account.hpp"

#include <sys/types.h>

#include <functional>
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

// A step that needs root but must come after the groups are set (initgroups
// reads /etc/group): ChrootDirectory's chroot, as in OpenSSH's
// do_setusercontext(). It sets `error` when it fails.
using before_setuid_step = std::function<result<void>(std::string& error)>;

// Permanently becomes `user`: setgid, initgroups, `before_setuid` (if any),
// setuid, then checks that it took: real/effective/saved ids all match and
// root cannot be regained. Without root this is a no-op that checks we
// already are that user (`before_setuid` is not run: it needs root).
// `error` says what failed; a failed `before_setuid` leaves its own text.
result<void> become_user(const user_account& user, std::string& error,
                         const before_setuid_step& before_setuid = {});

} // namespace longhaul
