// What sshd's privilege-separation monitor logs of authentication (issue
// 12). As in OpenSSH, whose monitor calls auth_log() for every request that
// decides authentication, the lines an administrator (and fail2ban) reads
// as verdicts come from the privileged side, from what it decided itself:
// "Accepted", "Failed" and "Partial", "Invalid user", the root refusals and
// "Timeout before authentication". Every line the unprivileged child sends
// is logged with " [preauth]", so a compromised child can neither forge a
// verdict nor hide one. A pure class: the monitor feeds it what it decided
// and writes what it returns.
#pragma once

#include "common/auth/server_auth.hpp"
#include "common/log.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace longhaul {

class monitor_verdicts {
public:
    using sink = std::function<void(log_level, std::string)>;
    monitor_verdicts(std::string remote_ip, int remote_port, bool use_pam, sink out)
        : remote_ip_(std::move(remote_ip)), remote_port_(remote_port), use_pam_(use_pam), out_(std::move(out))
    {
    }

    // The user the child named, as the monitor looked it up.
    void user(std::string name, user_status status);
    // A line from the unprivileged child: kept printable, marked as the child's.
    void child_line(log_level level, std::string_view text);
    // An attempt the monitor refused (a key not allowed, a bad signature or
    // password, a failed conversation).
    // A certificate, when given, is named in place of `key` (its certified
    // key); `note` follows the key (hostbased's client user and host).
    void failed(std::string_view method, std::string_view submethod, const public_key* key,
                const server_auth_settings& s, const certificate* cert = nullptr, std::string_view note = {});
    // An attempt the monitor verified, judged as the child's machine judges
    // it: PermitRootLogin (`root_permitted`, for root), then
    // AuthenticationMethods (`methods_complete`), then with UsePAM the
    // account check, which the child asks for next: "Accepted" waits for it.
    void succeeded(std::string_view method, std::string_view submethod, const public_key* key, bool is_root,
                   permit_root_login root_rule, bool root_permitted, bool methods_complete,
                   const server_auth_settings& s, const certificate* cert = nullptr);
    // PAM's account management answered (after a success that waited for it).
    void account(bool allowed, const server_auth_settings& s);
    void timeout();

    // For the listener's PerSourcePenalties: attempts refused so far, and
    // whether the user the client named does not exist.
    int failures() const noexcept { return failures_; }
    bool invalid_user() const noexcept { return !user_.empty() && !valid_; }

    // A failed login for btmp, as OpenSSH's record_failed_login(): an
    // invalid user, and each failed password or keyboard-interactive
    // attempt (a refused key is not one). Gets the name the client gave.
    std::function<void(const std::string& user)> on_failed_login;

private:
    void attempt(std::string_view verdict, std::string_view method, std::string_view submethod, const public_key* key,
                 bool authenticated, const server_auth_settings& s, const certificate* cert = nullptr,
                 std::string_view note = {});

    std::string remote_ip_;
    int remote_port_;
    bool use_pam_;
    sink out_;
    std::string user_;
    bool valid_ = false;
    int failures_ = 0; // "Failed" lines so far (sshd's count, for their level)
    struct pending {
        std::string method, submethod;
        std::optional<public_key> key;
        std::optional<certificate> cert;
    };
    std::optional<pending> accept_pending_;
};

} // namespace longhaul
