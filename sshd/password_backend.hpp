// Password checks without PAM (UsePAM no): the shadow hash through
// crypt_r(3), empty passwords per PermitEmptyPasswords, and the account
// checks OpenSSH makes from /etc/shadow (locked "!" accounts, expired
// accounts and passwords). The shadow lookup is injectable so tests never
// touch /etc/shadow.
#pragma once

#include "sshd/sshd_config.hpp"

#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// The fields of a shadow(5) entry that matter; -1 where the field is empty.
struct shadow_entry {
    std::string name;
    std::string hash;       // "$6$salt$...", "!..." (locked), "*" (no password login), "" (none)
    long last_change = -1;  // days since the epoch; 0 forces a change
    long max_days = -1;
    long warn_days = -1;
    long expire = -1;       // account expiry, days since the epoch
};

using shadow_lookup = std::function<std::optional<shadow_entry>(const std::string& user)>;

// getspnam_r, falling back to the passwd entry's password field when the
// user has no shadow entry (as OpenSSH's shadow_pw does).
std::optional<shadow_entry> system_shadow_lookup(const std::string& user);

// crypt_r(password, setting = hash) compared with `hash` in constant time.
// False for "", "*", "!..." and any hash crypt cannot use.
bool verify_crypt_hash(std::string_view password, const std::string& hash);

struct password_check {
    bool success = false;
    // The password was right but has expired: OpenSSH then only lets the
    // user change it (sshd should restrict the session, see sshd(8)).
    bool password_expired = false;
    std::vector<log_message> log;
    std::string user_message; // e.g. "Your password will expire in 3 days.\n", for the login messages
};

struct account_check {
    bool allowed = true;
    std::vector<log_message> log;
    std::string user_message; // "Your account will expire in 2 days.\n"
};

class password_backend {
public:
    explicit password_backend(shadow_lookup lookup = system_shadow_lookup);

    // OpenSSH's sys_auth_passwd with auth_password's empty-password rule.
    // `user_valid` false (unknown user, or root that PermitRootLogin keeps
    // from using passwords): the work is done against a fixed hash, so the
    // answer takes as long as a real one, and fails.
    password_check check_password(const std::string& user, std::string_view password, bool user_valid,
                                  bool permit_empty_passwords, std::time_t now) const;

    // allowed_user()'s shadow checks for UsePAM no, for every method:
    // "Account alice has expired", "User alice not allowed because account
    // is locked".
    account_check check_account(const std::string& user, std::time_t now) const;

private:
    shadow_lookup lookup_;
};

} // namespace longhaul
