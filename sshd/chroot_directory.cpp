#include "sshd/chroot_directory.hpp"

#include "common/percent_expand.hpp"
#include "common/text_parse.hpp"
#include "sshd/privsep/sandbox.hpp" // LONGHAUL_SANITIZER_RUNTIME

#ifdef LONGHAUL_SANITIZER_RUNTIME
#include <sanitizer/common_interface_defs.h>
#endif

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace longhaul {

bool chroot_requested(std::string_view value) { return !value.empty() && !iequals(value, "none"); }

namespace {

// OpenSSH's tilde_expand(): "~" and "~/rest" are the user's home, "~name"
// and "~name/rest" another user's; the home gets one '/' before the rest.
std::optional<std::string> expand_tilde(std::string_view value, const user_account& user, const home_lookup& home_of,
                                        std::string& error)
{
    if (value.empty() || value.front() != '~')
        return std::string(value);
    std::string_view rest = value.substr(1);
    const std::size_t slash = rest.find('/');
    const std::string_view name = rest.substr(0, slash);
    std::string home;
    if (name.empty()) {
        home = user.home;
    } else {
        auto found = home_of ? home_of(name) : std::nullopt;
        if (!found) {
            error = "tilde_expand: No such user " + std::string(name);
            return std::nullopt;
        }
        home = *found;
    }
    std::string out = home;
    if (out.empty() || out.back() != '/')
        out += '/';
    if (slash != std::string_view::npos)
        out += rest.substr(slash + 1);
    return out;
}

} // namespace

std::optional<std::string> expand_chroot_directory(std::string_view value, const user_account& user,
                                                   const home_lookup& home_of, std::string& error)
{
    auto tilde = expand_tilde(value, user, home_of, error);
    if (!tilde)
        return std::nullopt;
    // The tokens AuthorizedKeysFile takes too (OpenSSH's do_setusercontext
    // passes the same three to percent_expand).
    auto expanded = percent_expand(*tilde, {{'h', user.home}, {'u', user.name}, {'U', std::to_string(user.uid)}}, error);
    if (!expanded)
        return std::nullopt;
    return std::move(*expanded);
}

int system_stat(const std::string& path, struct stat& st) { return ::stat(path.c_str(), &st) == 0 ? 0 : errno; }

std::optional<std::string> chroot_path_problem(const std::string& path, const stat_function& stat_of)
{
    if (path.empty() || path.front() != '/')
        return "chroot path does not begin at root";
    if (path.size() >= PATH_MAX)
        return "chroot path too long";
    // Each prefix up to and including a '/', then the whole path: the same
    // components (and texts) as OpenSSH's loop.
    for (std::size_t end = 0;;) {
        const std::size_t slash = path.find('/', end);
        const bool last = slash == std::string::npos;
        const std::string component = last ? path : path.substr(0, slash + 1);
        struct stat st {};
        if (int e = stat_of(component, st))
            return "stat(\"" + component + "\"): " + std::strerror(e);
        const std::string what = last ? "" : "component ";
        if (st.st_uid != 0 || (st.st_mode & 022) != 0)
            return "bad ownership or modes for chroot directory " + what + "\"" + component + "\"";
        if (!S_ISDIR(st.st_mode))
            return "chroot path " + what + "\"" + component + "\" is not a directory";
        if (last)
            return std::nullopt;
        end = slash + 1;
    }
}

result<void> enter_chroot_directory(const std::string& path, std::string& error)
{
    if (auto problem = chroot_path_problem(path, system_stat)) {
        error = *problem;
        return errc::bad_permissions;
    }
    // chdir first, as OpenSSH: the chroot then cannot leave a cwd outside.
    if (::chdir(path.c_str()) != 0) {
        error = "Unable to chdir to chroot path \"" + path + "\": " + std::strerror(errno);
        return errc::io_error;
    }
#ifdef LONGHAUL_SANITIZER_RUNTIME
    // As before the pre-auth sandbox's chroot: the runtime reads what its
    // reports need (/proc/self/maps) while the real root is still there.
    __sanitizer_sandbox_on_notify(nullptr);
#endif
    if (::chroot(path.c_str()) != 0) {
        error = "chroot(\"" + path + "\"): " + std::strerror(errno);
        return errc::io_error;
    }
    if (::chdir("/") != 0) {
        error = std::string("chdir(/) after chroot: ") + std::strerror(errno);
        return errc::io_error;
    }
    return {};
}

} // namespace longhaul
