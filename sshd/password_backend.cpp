#include "sshd/password_backend.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <pwd.h>
#include <shadow.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace longhaul {

namespace {

constexpr long seconds_per_day = 86400;

// OpenSSH counts days in local time: (time - timezone) / DAY.
long today(std::time_t now)
{
    tzset();
    return static_cast<long>((now - timezone) / seconds_per_day);
}

std::string plural_days(long n) { return std::to_string(n) + (n == 1 ? " day" : " days"); }

std::optional<std::string> crypt_with(std::string_view password, const std::string& setting)
{
    // struct crypt_data is large (tens of KiB): keep it off the stack.
    auto data = std::make_unique<crypt_data>();
    std::memset(data.get(), 0, sizeof(crypt_data));
    const std::string pw(password);
    const char* out = crypt_r(pw.c_str(), setting.c_str(), data.get());
    std::optional<std::string> r;
    if (out != nullptr && out[0] != '*')
        r = std::string(out);
    OPENSSL_cleanse(data.get(), sizeof(crypt_data));
    return r;
}

// A setting in the system's preferred method, so that a check for an
// unknown user costs what a real one costs.
std::string fake_setting()
{
    char buf[CRYPT_GENSALT_OUTPUT_SIZE];
    if (crypt_gensalt_rn(nullptr, 0, nullptr, 0, buf, sizeof buf) != nullptr)
        return buf;
    return "$6$longhaulfakesalt$";
}

} // namespace

std::optional<shadow_entry> system_shadow_lookup(const std::string& user)
{
    std::vector<char> buf(16384);
    spwd sp{};
    spwd* found = nullptr;
    while (getspnam_r(user.c_str(), &sp, buf.data(), buf.size(), &found) == ERANGE && buf.size() < (1u << 20))
        buf.resize(buf.size() * 4);
    if (found != nullptr) {
        shadow_entry e;
        e.name = sp.sp_namp;
        e.hash = sp.sp_pwdp ? sp.sp_pwdp : "";
        e.last_change = sp.sp_lstchg;
        e.max_days = sp.sp_max;
        e.warn_days = sp.sp_warn;
        e.expire = sp.sp_expire;
        OPENSSL_cleanse(buf.data(), buf.size());
        return e;
    }
    passwd pw{};
    passwd* p = nullptr;
    if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &p) != 0 || p == nullptr)
        return std::nullopt;
    shadow_entry e;
    e.name = pw.pw_name;
    e.hash = pw.pw_passwd ? pw.pw_passwd : "";
    OPENSSL_cleanse(buf.data(), buf.size());
    return e;
}

bool verify_crypt_hash(std::string_view password, const std::string& hash)
{
    // A stored value of fewer than two characters ("", "*", "!") cannot be a
    // crypt setting: OpenSSH then lets crypt pick a salt, which never matches.
    if (hash.size() < 2 || password.find('\0') != std::string_view::npos)
        return false;
    auto computed = crypt_with(password, hash);
    if (!computed || computed->size() != hash.size())
        return false;
    return CRYPTO_memcmp(computed->data(), hash.data(), hash.size()) == 0;
}

password_backend::password_backend(shadow_lookup lookup) : lookup_(std::move(lookup)) {}

password_check password_backend::check_password(const std::string& user, std::string_view password, bool user_valid,
                                                bool permit_empty_passwords, std::time_t now) const
{
    password_check r;
    if (password.empty() && !permit_empty_passwords)
        return r;
    std::optional<shadow_entry> entry;
    if (user_valid)
        entry = lookup_(user);
    if (!entry) {
        // Spend the time a real check would, then fail.
        (void)crypt_with(password, fake_setting());
        return r;
    }
    // Password ageing is looked at before the password, as OpenSSH does.
    if (entry->last_change == 0) {
        r.log.push_back({syslog_level::info, "User " + user.substr(0, 100) + " password has expired (root forced)"});
        r.password_expired = true;
    } else if (entry->max_days >= 0 && entry->last_change > 0) {
        const long left = entry->last_change + entry->max_days - today(now);
        if (left < 0) {
            r.log.push_back({syslog_level::info, "User " + user.substr(0, 100) + " password has expired (password aged)"});
            r.password_expired = true;
        } else if (left <= entry->warn_days) {
            r.user_message = "Your password will expire in " + plural_days(left) + ".\n";
        }
    }
    if (entry->hash.empty() && password.empty())
        r.success = true;
    else
        r.success = verify_crypt_hash(password, entry->hash);
    if (!r.success) {
        r.password_expired = false;
        r.user_message.clear();
    }
    return r;
}

account_check password_backend::check_account(const std::string& user, std::time_t now) const
{
    account_check r;
    auto entry = lookup_(user);
    if (!entry)
        return r;
    if (entry->expire != -1) {
        const long left = entry->expire - today(now);
        if (left < 0) {
            r.allowed = false;
            r.log.push_back({syslog_level::info, "Account " + user.substr(0, 100) + " has expired"});
            return r;
        }
        if (left <= entry->warn_days)
            r.user_message = "Your account will expire in " + plural_days(left) + ".\n";
    }
    // Linux marks locked accounts with a leading '!' (usermod -L, passwd -l).
    if (!entry->hash.empty() && entry->hash[0] == '!') {
        r.allowed = false;
        r.log.push_back({syslog_level::info, "User " + user.substr(0, 100) + " not allowed because account is locked"});
    }
    return r;
}

} // namespace longhaul
