#include "sshd/chroot_directory.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <map>
#include <string>

using namespace longhaul;

namespace {

user_account alice() { return user_account{"alice", 1001, 1001, "/home/alice", "/bin/sh"}; }

std::optional<std::string> other_home(std::string_view name)
{
    if (name == "bob")
        return std::string("/srv/bob/");
    return std::nullopt;
}

std::string expand(std::string_view value)
{
    std::string error;
    auto out = expand_chroot_directory(value, alice(), other_home, error);
    return out ? *out : "error: " + error;
}

// A fake file system for the path checks: path -> (uid, mode); an entry's
// absence is ENOENT. Keys are the components as the check asks for them.
struct fake_tree {
    std::map<std::string, std::pair<uid_t, mode_t>> entries;
    std::vector<std::string> asked;
    stat_function fn()
    {
        return [this](const std::string& path, struct stat& st) {
            asked.push_back(path);
            auto it = entries.find(path);
            if (it == entries.end())
                return ENOENT;
            st = {};
            st.st_uid = it->second.first;
            st.st_mode = it->second.second;
            return 0;
        };
    }
};

fake_tree safe_jail()
{
    fake_tree t;
    t.entries["/"] = {0, S_IFDIR | 0755};
    t.entries["/srv/"] = {0, S_IFDIR | 0755};
    t.entries["/srv/jail"] = {0, S_IFDIR | 0755};
    return t;
}

} // namespace

TEST_CASE("chroot directory: requested unless empty or none")
{
    CHECK_FALSE(chroot_requested(""));
    CHECK_FALSE(chroot_requested("none"));
    CHECK_FALSE(chroot_requested("NONE"));
    CHECK(chroot_requested("/srv/jail"));
    CHECK(chroot_requested("nonexistent")); // relative: refused later, not ignored
}

TEST_CASE("chroot directory: tokens")
{
    CHECK(expand("/srv/jail") == "/srv/jail");
    CHECK(expand("/srv/%u") == "/srv/alice");
    CHECK(expand("%h") == "/home/alice");
    CHECK(expand("/jails/%U/%u") == "/jails/1001/alice");
    CHECK(expand("/srv/100%%") == "/srv/100%");
    CHECK(expand("/srv/%%u") == "/srv/%u"); // %% is one literal %, not the start of %u
    CHECK(expand("") == "");
    // The expansion's results are not expanded again.
    user_account odd{"a%u", 7, 7, "/home/%h", ""};
    std::string error;
    CHECK(expand_chroot_directory("/x/%u/%h", odd, other_home, error) == std::optional<std::string>("/x/a%u//home/%h"));
}

TEST_CASE("chroot directory: refused tokens")
{
    CHECK(expand("/srv/%") == "error: percent_expand: invalid format");
    CHECK(expand("%") == "error: percent_expand: invalid format");
    CHECK(expand("/srv/%x") == "error: percent_expand: unknown key %x");
    CHECK(expand("/srv/%d") == "error: percent_expand: unknown key %d"); // %d is not a ChrootDirectory token
    CHECK(expand("/srv/%i") == "error: percent_expand: unknown key %i");
}

TEST_CASE("chroot directory: a leading tilde is a home directory, as OpenSSH's tilde_expand_filename")
{
    CHECK(expand("~") == "/home/alice/");
    CHECK(expand("~/jail") == "/home/alice/jail");
    CHECK(expand("~bob/jail") == "/srv/bob/jail"); // no doubled '/'
    CHECK(expand("~bob") == "/srv/bob/");
    CHECK(expand("~/%u") == "/home/alice/alice");
    CHECK(expand("~nobody-here/x") == "error: tilde_expand: No such user nobody-here");
    CHECK(expand("/srv/~") == "/srv/~"); // only a leading one
    std::string error;
    CHECK_FALSE(expand_chroot_directory("~bob/x", alice(), home_lookup{}, error));
}

TEST_CASE("chroot directory: a safe path passes, each component checked from /")
{
    auto t = safe_jail();
    CHECK(chroot_path_problem("/srv/jail", t.fn()) == std::nullopt);
    CHECK(t.asked == std::vector<std::string>{"/", "/srv/", "/srv/jail"});
    t.entries["/srv/jail/"] = {0, S_IFDIR | 0755};
    t.asked.clear();
    CHECK(chroot_path_problem("/srv/jail/", t.fn()) == std::nullopt);
    CHECK(t.asked == std::vector<std::string>{"/", "/srv/", "/srv/jail/", "/srv/jail/"});
    t.asked.clear();
    CHECK(chroot_path_problem("/", t.fn()) == std::nullopt);
    // Setuid/sticky bits and group-readable are fine: only 022 counts.
    t.entries["/srv/jail"] = {0, S_IFDIR | S_ISVTX | 0750};
    CHECK(chroot_path_problem("/srv/jail", t.fn()) == std::nullopt);
}

TEST_CASE("chroot directory: unsafe paths are refused with OpenSSH's texts")
{
    auto t = safe_jail();
    CHECK(chroot_path_problem("srv/jail", t.fn()) == "chroot path does not begin at root");
    CHECK(chroot_path_problem("", t.fn()) == "chroot path does not begin at root");
    CHECK(chroot_path_problem("/" + std::string(5000, 'a'), t.fn()) == "chroot path too long");

    auto world = safe_jail();
    world.entries["/srv/jail"] = {0, S_IFDIR | 0777};
    CHECK(chroot_path_problem("/srv/jail", world.fn()) == "bad ownership or modes for chroot directory \"/srv/jail\"");

    auto group = safe_jail();
    group.entries["/srv/"] = {0, S_IFDIR | 0775};
    CHECK(chroot_path_problem("/srv/jail", group.fn()) ==
          "bad ownership or modes for chroot directory component \"/srv/\"");

    auto others = safe_jail();
    others.entries["/srv/"] = {0, S_IFDIR | 0757};
    CHECK(chroot_path_problem("/srv/jail", others.fn()) ==
          "bad ownership or modes for chroot directory component \"/srv/\"");

    auto owned = safe_jail();
    owned.entries["/srv/jail"] = {1001, S_IFDIR | 0755};
    CHECK(chroot_path_problem("/srv/jail", owned.fn()) == "bad ownership or modes for chroot directory \"/srv/jail\"");

    auto root_dir = safe_jail();
    root_dir.entries["/"] = {5, S_IFDIR | 0755};
    CHECK(chroot_path_problem("/srv/jail", root_dir.fn()) ==
          "bad ownership or modes for chroot directory component \"/\"");

    auto file = safe_jail();
    file.entries["/srv/jail"] = {0, S_IFREG | 0644};
    CHECK(chroot_path_problem("/srv/jail", file.fn()) == "chroot path \"/srv/jail\" is not a directory");
    file.entries["/srv/"] = {0, S_IFREG | 0644};
    CHECK(chroot_path_problem("/srv/jail", file.fn()) == "chroot path component \"/srv/\" is not a directory");

    auto missing = safe_jail();
    missing.entries.erase("/srv/jail");
    CHECK(chroot_path_problem("/srv/jail", missing.fn()) == "stat(\"/srv/jail\"): No such file or directory");
    missing.entries.erase("/srv/");
    missing.asked.clear();
    CHECK(chroot_path_problem("/srv/jail", missing.fn()) == "stat(\"/srv/\"): No such file or directory");
    CHECK(missing.asked == std::vector<std::string>{"/", "/srv/"}); // stops at the first problem
}

TEST_CASE("chroot directory: the real stat follows symlinks, as OpenSSH's stat(2)")
{
    // /tmp is world-writable (sticky): refused as a component, even through
    // a path that only names it.
    CHECK(chroot_path_problem("/tmp/x", system_stat) == "bad ownership or modes for chroot directory component \"/tmp/\"");
    CHECK(chroot_path_problem("/", system_stat) == std::nullopt);
    CHECK(chroot_path_problem("/nonexistent-longhaul-jail", system_stat) ==
          "stat(\"/nonexistent-longhaul-jail\"): No such file or directory");
    // A symlink is judged by what it points to: stat, not lstat.
    fake_tree t = safe_jail();
    stat_function via_link = [&](const std::string& path, struct stat& st) {
        return t.fn()(path == "/link" ? std::string("/srv/jail") : path, st);
    };
    CHECK(chroot_path_problem("/link", via_link) == std::nullopt);
    t.entries["/srv/jail"] = {0, S_IFDIR | 0777};
    CHECK(chroot_path_problem("/link", via_link) == "bad ownership or modes for chroot directory \"/link\"");
}
