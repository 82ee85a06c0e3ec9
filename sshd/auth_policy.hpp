// sshd's answers to the authentication machine's questions: who a user is
// (AllowUsers/DenyUsers/AllowGroups/DenyGroups, shells, Match settings,
// account expiry), whether a key is in their authorized_keys (read with the
// user's identity, StrictModes applied) or AuthorizedKeysCommand output,
// and for user certificates TrustedUserCAKeys and AuthorizedPrincipalsFile.
#pragma once

#include "common/auth/server_auth.hpp"
#include "common/log.hpp"
#include "sshd/authorized_keys.hpp"
#include "sshd/certificate_auth.hpp"
#include "sshd/password_backend.hpp"
#include "sshd/privileges.hpp"
#include "sshd/sshd_config.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace longhaul {

struct connection_facts {
    std::string remote_address;
    int remote_port = 0;
    std::string remote_host; // the canonical name with UseDNS, else the address
    std::string local_address;
    int local_port = 0;
};

class sshd_auth_policy {
public:
    sshd_auth_policy(const sshd_config& config, connection_facts facts, logger& log);

    server_auth_policy make_policy();

    // The effective settings for the user who authenticated (after Match).
    const server_config& user_config() const noexcept { return *user_config_; }
    const std::optional<user_account>& account() const noexcept { return account_; }
    const user_groups& groups() const noexcept { return groups_; }
    server_auth_settings settings_for(const server_config& c) const;
    // Called with the user's Match-applied configuration once it is known
    // (valid user or not), as OpenSSH applies LogLevel in mm_getpwnamallow().
    std::function<void(const server_config&)> on_user_config;

private:
    user_lookup lookup(std::string_view user);
    key_decision key_allowed(std::string_view user, const public_key& key, bool with_signature);
    // User certificates (auth_policy_certificate.cpp): RevokedKeys, then
    // cert-authority lines in the authorized keys files, then
    // TrustedUserCAKeys with AuthorizedPrincipalsFile and -Command, then
    // AuthorizedKeysCommand, as OpenSSH's user_key_allowed() orders them.
    key_decision certificate_allowed(std::string_view user, const certificate& cert, bool with_signature);
    std::optional<authorized_key_match> trusted_ca_match(const certificate& cert, const authorized_keys_context& ctx);
    // Hostbased: RequiredRSASize, then sshd/hostbased_auth's checks.
    bool host_allowed(const public_key& key, const certificate* cert, std::string_view client_host,
                      std::string_view client_user);
    authorized_keys_context keys_context() const;
    // The first match in the user's AuthorizedKeysFile files, read as the
    // user, each file's contents given to `check` (a plain key's or a
    // certificate's check_authorized_keys).
    using keys_file_check =
        std::function<authorized_keys_result(std::string_view contents, const std::string& path)>;
    std::optional<authorized_key_match> find_in_authorized_keys(const keys_file_check& check);
    // AuthorizedKeysCommand's output checked by `check`, for a plain key
    // or (`cert` set) a certificate; nullopt when not configured.
    std::optional<authorized_key_match> find_in_keys_command(const public_key& key, const certificate* cert,
                                                             const keys_file_check& check);
    // AuthorizedPrincipalsCommand's first line naming one of the
    // certificate's principals.
    std::optional<principals_match> find_in_principals_command(const certificate& cert,
                                                               std::vector<log_message>& notes);
    // A key or certificate allowed by `found` (its options, and what a
    // security key must show under them and PubkeyAuthOptions), or refused.
    key_decision decision_of(std::optional<authorized_key_match> found) const;
    // %C of both commands.
    std::string connection_id() const;
    bool allowed_user(const user_account& u, const user_groups& g);
    void log_all(const std::vector<log_message>& msgs);

    const sshd_config& config_;
    connection_facts facts_;
    logger& log_;
    std::optional<user_account> account_;
    user_groups groups_;
    std::unique_ptr<server_config> user_config_;
    password_backend shadow_;
};

log_level to_log_level(syslog_level l) noexcept;

} // namespace longhaul
