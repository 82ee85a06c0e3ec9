#include "sshd/user_account.hpp"

#include <pwd.h>

#include <cerrno>

#include <vector>

namespace longhaul {

namespace {

template <class Lookup>
std::optional<user_account> lookup_with(Lookup&& lookup)
{
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    // Retry with more room for entries with very long fields.
    while (true) {
        const int r = lookup(&pw, buf.data(), buf.size(), &found);
        if (r == ERANGE && buf.size() < (1u << 20)) {
            buf.resize(buf.size() * 4);
            continue;
        }
        if (r != 0 || found == nullptr)
            return std::nullopt;
        break;
    }
    user_account u;
    u.name = pw.pw_name;
    u.uid = pw.pw_uid;
    u.gid = pw.pw_gid;
    u.home = pw.pw_dir ? pw.pw_dir : "";
    u.shell = pw.pw_shell ? pw.pw_shell : "";
    return u;
}

} // namespace

std::optional<user_account> lookup_user(const std::string& name)
{
    return lookup_with([&](passwd* pw, char* buf, std::size_t n, passwd** out) {
        return getpwnam_r(name.c_str(), pw, buf, n, out);
    });
}

std::optional<user_account> lookup_user(uid_t uid)
{
    return lookup_with([&](passwd* pw, char* buf, std::size_t n, passwd** out) { return getpwuid_r(uid, pw, buf, n, out); });
}

} // namespace longhaul
