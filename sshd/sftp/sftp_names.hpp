// Who owns what, for the SFTP server: user and group names (ls -l long
// names, users-groups-by-id@openssh.com) and home directories (~user in
// expand-path@openssh.com, home-directory). An interface so the fuzz target
// and tests need no NSS lookups; system_names asks getpwuid_r & co.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace longhaul::sftp {

class name_service {
public:
    virtual ~name_service() = default;
    virtual std::optional<std::string> user_name(uid_t uid) = 0;
    virtual std::optional<std::string> group_name(gid_t gid) = 0;
    virtual std::optional<std::string> home_directory(const std::string& user) = 0;
};

// The system's databases, with a small cache per kind (a directory listing
// asks for the same few owners again and again, as OpenSSH's
// user_from_uid() caches).
class system_names final : public name_service {
public:
    std::optional<std::string> user_name(uid_t uid) override;
    std::optional<std::string> group_name(gid_t gid) override;
    std::optional<std::string> home_directory(const std::string& user) override;

private:
    std::unordered_map<uid_t, std::optional<std::string>> users_;
    std::unordered_map<gid_t, std::optional<std::string>> groups_;
};

// The long name of a READDIR entry as OpenSSH's ls_file(remote = 0) writes
// it: "-rw-r--r--    1 alice    staff        1234 Jan 13 18:39 name"
// (owner and group by name, numeric when unknown; "%b %e %H:%M" for dates
// within six months of `now`, "%b %e  %Y" otherwise, in the local time zone
// and the C locale).
std::string long_name(std::string_view name, const struct stat& st, name_service& names, std::time_t now);

} // namespace longhaul::sftp
