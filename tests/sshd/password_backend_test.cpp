#include "sshd/password_backend.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace longhaul;

namespace {

// "correct horse" in SHA-512 crypt and MD5 crypt (openssl passwd -6 / -1).
const std::string sha512_hash =
    "$6$saltsalt$hRM5XZ86KXEw9UOmjigeVqFgULtFB2sgpC9lXQDfMib3Zgw7mEiUvBJI2EplzfAqxL5Vvwp2scFtv/uamSo5z0";
const std::string md5_hash = "$1$abcdefgh$y6iHhJNbuC0xpbk0w9pm80";

constexpr std::time_t now = 1700000000; // 19675 days since the epoch (UTC)

password_backend backend_with(std::map<std::string, shadow_entry> table)
{
    return password_backend([table](const std::string& user) -> std::optional<shadow_entry> {
        auto it = table.find(user);
        if (it == table.end())
            return std::nullopt;
        return it->second;
    });
}

shadow_entry entry(std::string name, std::string hash)
{
    shadow_entry e;
    e.name = std::move(name);
    e.hash = std::move(hash);
    return e;
}

} // namespace

TEST_CASE("password: crypt hashes compared in constant time")
{
    CHECK(verify_crypt_hash("correct horse", sha512_hash));
    CHECK_FALSE(verify_crypt_hash("correct horsE", sha512_hash));
    CHECK_FALSE(verify_crypt_hash("", sha512_hash));
    CHECK(verify_crypt_hash("correct horse", md5_hash));
    CHECK_FALSE(verify_crypt_hash("correct horse", "!" + sha512_hash)); // locked
    CHECK_FALSE(verify_crypt_hash("correct horse", "*"));
    CHECK_FALSE(verify_crypt_hash("correct horse", "!"));
    CHECK_FALSE(verify_crypt_hash("", ""));
    CHECK_FALSE(verify_crypt_hash(std::string("correct horse\0x", 15), sha512_hash));
}

TEST_CASE("password: sys_auth_passwd rules")
{
    auto b = backend_with({{"alice", entry("alice", sha512_hash)}, {"empty", entry("empty", "")},
                           {"locked", entry("locked", "!" + sha512_hash)}});
    CHECK(b.check_password("alice", "correct horse", true, false, now).success);
    CHECK_FALSE(b.check_password("alice", "wrong", true, false, now).success);
    // An invalid user (or root without PermitRootLogin yes) never succeeds.
    CHECK_FALSE(b.check_password("alice", "correct horse", false, false, now).success);
    CHECK_FALSE(b.check_password("nobody-here", "correct horse", true, false, now).success);
    // Empty passwords need PermitEmptyPasswords and an empty hash.
    CHECK_FALSE(b.check_password("empty", "", true, false, now).success);
    CHECK(b.check_password("empty", "", true, true, now).success);
    CHECK_FALSE(b.check_password("empty", "x", true, true, now).success);
    CHECK_FALSE(b.check_password("alice", "", true, true, now).success);
    CHECK_FALSE(b.check_password("locked", "correct horse", true, false, now).success);
}

TEST_CASE("password: locked and expired accounts, password ageing")
{
    const long today = 19675; // with TZ=UTC; OpenSSH shifts by the local zone
    setenv("TZ", "UTC", 1);
    auto expired = entry("old", sha512_hash);
    expired.expire = today - 1;
    auto expiring = entry("soon", sha512_hash);
    expiring.expire = today + 2;
    expiring.warn_days = 7;
    auto aged = entry("aged", sha512_hash);
    aged.last_change = today - 100;
    aged.max_days = 90;
    auto forced = entry("forced", sha512_hash);
    forced.last_change = 0;
    auto warn = entry("warn", sha512_hash);
    warn.last_change = today - 85;
    warn.max_days = 90;
    warn.warn_days = 7;
    auto b = backend_with({{"old", expired}, {"soon", expiring}, {"aged", aged}, {"forced", forced}, {"warn", warn},
                           {"locked", entry("locked", "!" + sha512_hash)}, {"star", entry("star", "*")}});

    auto a = b.check_account("old", now);
    CHECK_FALSE(a.allowed);
    REQUIRE(a.log.size() == 1);
    CHECK(a.log[0].text == "Account old has expired");
    a = b.check_account("soon", now);
    CHECK(a.allowed);
    CHECK(a.user_message == "Your account will expire in 2 days.\n");
    a = b.check_account("locked", now);
    CHECK_FALSE(a.allowed);
    CHECK(a.log.at(0).text == "User locked not allowed because account is locked");
    // "*" means "no password login", not locked: keys still work.
    CHECK(b.check_account("star", now).allowed);
    CHECK(b.check_account("unknown", now).allowed);

    auto p = b.check_password("aged", "correct horse", true, false, now);
    CHECK(p.success);
    CHECK(p.password_expired);
    CHECK(p.log.at(0).text == "User aged password has expired (password aged)");
    p = b.check_password("forced", "correct horse", true, false, now);
    CHECK(p.password_expired);
    CHECK(p.log.at(0).text == "User forced password has expired (root forced)");
    p = b.check_password("warn", "correct horse", true, false, now);
    CHECK(p.success);
    CHECK_FALSE(p.password_expired);
    CHECK(p.user_message == "Your password will expire in 5 days.\n");
    unsetenv("TZ");
}

TEST_CASE("password: the system lookup reads passwd/shadow")
{
    // root exists everywhere; its hash is whatever the machine has.
    auto e = system_shadow_lookup("root");
    REQUIRE(e);
    CHECK(e->name == "root");
    CHECK_FALSE(system_shadow_lookup("no-such-user-longhaul"));
}
