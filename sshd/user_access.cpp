#include "sshd/user_access.hpp"

#include "common/match.hpp"
#include "sshd/chroot_directory.hpp"

#include <sys/stat.h>

namespace longhaul {

namespace {

bool any_group_matches(const std::vector<std::string>& groups, const std::vector<std::string>& patterns)
{
    // ga_match: each entry is one pattern (not a list).
    for (const auto& g : groups)
        for (const auto& p : patterns)
            if (match_pattern(g, p))
                return true;
    return false;
}

} // namespace

user_access check_user_access(const server_config& config, const user_account& user,
                              const std::vector<std::string>& groups, std::string_view host,
                              std::string_view address, const password_backend* shadow, std::time_t now)
{
    user_access r;
    const std::string name = user.name.substr(0, 100);
    const std::string from = std::string(host.substr(0, 100));
    auto deny = [&](std::string why) {
        r.allowed = false;
        r.log.push_back({syslog_level::info, std::move(why)});
        return r;
    };
    if (!config.use_pam && shadow != nullptr) {
        auto account = shadow->check_account(user.name, now);
        r.user_message = account.user_message;
        if (!account.allowed) {
            r.allowed = false;
            r.log = std::move(account.log);
            return r;
        }
    }
    // The login shell must exist and be executable, unless chrooted (it
    // is then looked for inside the jail, when the session starts).
    if (!chroot_requested(config.chroot_directory)) {
        const std::string shell = user.shell.empty() ? "/bin/sh" : user.shell;
        struct stat st {};
        if (::stat(shell.c_str(), &st) == -1)
            return deny("User " + name + " not allowed because shell " + shell.substr(0, 100) + " does not exist");
        if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IXOTH | S_IXUSR | S_IXGRP)) == 0)
            return deny("User " + name + " not allowed because shell " + shell.substr(0, 100) + " is not executable");
    }
    for (const auto& pattern : config.deny_users)
        if (match_user_pattern(user.name, host, address, pattern) > 0)
            return deny("User " + name + " from " + from + " not allowed because listed in DenyUsers");
    if (!config.allow_users.empty()) {
        bool listed = false;
        for (const auto& pattern : config.allow_users)
            listed = listed || match_user_pattern(user.name, host, address, pattern) == 1;
        if (!listed)
            return deny("User " + name + " from " + from + " not allowed because not listed in AllowUsers");
    }
    if (!config.deny_groups.empty() || !config.allow_groups.empty()) {
        if (groups.empty())
            return deny("User " + name + " from " + from + " not allowed because not in any group");
        if (!config.deny_groups.empty() && any_group_matches(groups, config.deny_groups))
            return deny("User " + name + " from " + from + " not allowed because a group is listed in DenyGroups");
        if (!config.allow_groups.empty() && !any_group_matches(groups, config.allow_groups))
            return deny("User " + name + " from " + from +
                        " not allowed because none of user's groups are listed in AllowGroups");
    }
    return r;
}

} // namespace longhaul
