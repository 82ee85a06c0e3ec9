#include "sshd/user_access.hpp"

#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

server_config config_from(const std::string& text)
{
    return sshd_config::parse(text, "test.cfg").global();
}

user_account account(std::string name, std::string shell = "/bin/sh")
{
    return user_account{std::move(name), 1000, 1000, "/home/x", std::move(shell)};
}

std::string why(const user_access& a) { return a.log.empty() ? "" : a.log.front().text; }

} // namespace

TEST_CASE("user access: AllowUsers, DenyUsers, AllowGroups, DenyGroups")
{
    const std::vector<std::string> groups = {"alice", "staff"};
    auto check = [&](const std::string& cfg, const std::string& user, const std::string& ip = "192.0.2.5") {
        return check_user_access(config_from(cfg), account(user), groups, ip, ip, nullptr, 0);
    };
    CHECK(check("", "alice").allowed);
    auto d = check("DenyUsers bob alice\n", "alice");
    CHECK_FALSE(d.allowed);
    CHECK(why(d) == "User alice from 192.0.2.5 not allowed because listed in DenyUsers");
    CHECK(d.log.front().level == syslog_level::info);
    d = check("AllowUsers bob carol\n", "alice");
    CHECK(why(d) == "User alice from 192.0.2.5 not allowed because not listed in AllowUsers");
    CHECK(check("AllowUsers bob al*\n", "alice").allowed);
    CHECK(check("AllowUsers alice@192.0.2.0/24\n", "alice").allowed);
    CHECK_FALSE(check("AllowUsers alice@10.0.0.0/8\n", "alice").allowed);
    CHECK_FALSE(check("DenyUsers *@192.0.2.5\n", "alice").allowed);
    d = check("DenyGroups wheel staff\n", "alice");
    CHECK(why(d) == "User alice from 192.0.2.5 not allowed because a group is listed in DenyGroups");
    d = check("AllowGroups wheel\n", "alice");
    CHECK(why(d) == "User alice from 192.0.2.5 not allowed because none of user's groups are listed in AllowGroups");
    CHECK(check("AllowGroups st*\n", "alice").allowed);
    auto none = check_user_access(config_from("AllowGroups x\n"), account("alice"), {}, "h", "1.2.3.4", nullptr, 0);
    CHECK(why(none) == "User alice from h not allowed because not in any group");
}

TEST_CASE("user access: the login shell and the shadow checks")
{
    const std::vector<std::string> groups = {"g"};
    auto a = check_user_access(config_from(""), account("alice", "/nonexistent/shell"), groups, "h", "h", nullptr, 0);
    CHECK(why(a) == "User alice not allowed because shell /nonexistent/shell does not exist");
    a = check_user_access(config_from(""), account("alice", "/etc/passwd"), groups, "h", "h", nullptr, 0);
    CHECK(why(a) == "User alice not allowed because shell /etc/passwd is not executable");
    // A chroot skips the shell check; an empty shell means /bin/sh.
    CHECK(check_user_access(config_from("ChrootDirectory /srv\n"), account("alice", "/nonexistent"), groups, "h", "h",
                            nullptr, 0)
              .allowed);
    // "none" is no chroot: the shell is checked.
    CHECK_FALSE(check_user_access(config_from("ChrootDirectory none\n"), account("alice", "/nonexistent"), groups, "h",
                                  "h", nullptr, 0)
                    .allowed);
    CHECK(check_user_access(config_from(""), account("alice", ""), groups, "h", "h", nullptr, 0).allowed);

    password_backend shadow([](const std::string& user) -> std::optional<shadow_entry> {
        shadow_entry e;
        e.name = user;
        e.hash = user == "locked" ? "!$6$x$y" : "$6$x$y";
        return e;
    });
    a = check_user_access(config_from(""), account("locked"), groups, "h", "h", &shadow, 0);
    CHECK(why(a) == "User locked not allowed because account is locked");
    // With UsePAM yes, PAM's account stack decides instead.
    CHECK(check_user_access(config_from("UsePAM yes\n"), account("locked"), groups, "h", "h", &shadow, 0).allowed);
}
