#include "sshd/privileges.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace longhaul {

user_groups lookup_groups(const user_account& user)
{
    user_groups out;
    int n = 64;
    std::vector<gid_t> groups(static_cast<std::size_t>(n));
    while (getgrouplist(user.name.c_str(), user.gid, groups.data(), &n) < 0 && n <= 65536) {
        groups.resize(static_cast<std::size_t>(n));
    }
    groups.resize(static_cast<std::size_t>(std::max(n, 0)));
    out.ids = groups;
    std::vector<char> buf(16384);
    for (gid_t g : groups) {
        group gr{};
        group* found = nullptr;
        if (getgrgid_r(g, &gr, buf.data(), buf.size(), &found) == 0 && found != nullptr)
            out.names.emplace_back(gr.gr_name);
    }
    return out;
}

temporary_identity::temporary_identity(const user_account& user, const user_groups& groups)
{
    if (geteuid() != 0 || user.uid == 0)
        return;
    int n = getgroups(0, nullptr);
    saved_groups_.resize(static_cast<std::size_t>(std::max(n, 0)));
    if (n > 0)
        getgroups(n, saved_groups_.data());
    saved_egid_ = getegid();
    if (setgroups(groups.ids.size(), groups.ids.data()) != 0 || setegid(user.gid) != 0 || seteuid(user.uid) != 0) {
        // Could not switch: restore whatever changed and stay as we were.
        seteuid(0);
        setegid(saved_egid_);
        setgroups(saved_groups_.size(), saved_groups_.data());
        return;
    }
    switched_ = true;
}

temporary_identity::~temporary_identity()
{
    if (!switched_)
        return;
    if (seteuid(0) != 0 || setegid(saved_egid_) != 0 ||
        setgroups(saved_groups_.size(), saved_groups_.data()) != 0)
        _exit(255); // cannot get root back: never continue with mixed identities
}

result<void> become_user(const user_account& user, std::string& error, const before_setuid_step& before_setuid)
{
    const bool was_root = geteuid() == 0;
    if (was_root) {
        if (setgid(user.gid) != 0) {
            error = "setgid " + std::to_string(user.gid) + ": " + std::strerror(errno);
            return errc::io_error;
        }
        if (initgroups(user.name.c_str(), user.gid) != 0) {
            error = "initgroups " + user.name + ": " + std::strerror(errno);
            return errc::io_error;
        }
        if (before_setuid) {
            if (auto r = before_setuid(error); !r)
                return r.error();
        }
        if (setresuid(user.uid, user.uid, user.uid) != 0) {
            error = "setresuid " + std::to_string(user.uid) + ": " + std::strerror(errno);
            return errc::io_error;
        }
    }
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0) {
        error = "cannot read process ids";
        return errc::io_error;
    }
    if (ruid != user.uid || euid != user.uid || suid != user.uid) {
        error = "uid is not " + std::to_string(user.uid) + " after the switch";
        return errc::io_error;
    }
    // Without root the gids were not changed (sshd then serves only its own user).
    if (was_root && (rgid != user.gid || egid != user.gid || sgid != user.gid)) {
        error = "gid is not " + std::to_string(user.gid) + " after the switch";
        return errc::io_error;
    }
    if (user.uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
        error = "root privileges could be regained";
        return errc::io_error;
    }
    return {};
}

} // namespace longhaul
