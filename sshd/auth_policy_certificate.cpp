// sshd_auth_policy's answer for user certificates, run by the monitor
// (root): it checks the certificate again itself (the child's parse and
// signature check count for nothing here), then reads RevokedKeys and
// TrustedUserCAKeys as root and the user's authorized keys and principals
// files as the user, runs AuthorizedPrincipalsCommand and
// AuthorizedKeysCommand as their users, as OpenSSH's user_key_allowed()
// does, and decides with the pure functions of certificate_auth.hpp.
#include "sshd/auth_policy.hpp"

#include "common/auth/auth_common.hpp"
#include "common/file_read.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/name_list.hpp"
#include "sshd/authorized_keys_command.hpp"
#include "sshd/certificate_auth.hpp"
#include "sshd/revoked_keys.hpp"
#include "sshd/secure_path.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

namespace {

// TrustedUserCAKeys is the administrator's file, read as root like
// OpenSSH's sshkey_in_file; nullopt, with the reason, when it cannot be.
std::optional<std::string> read_root_file(const std::string& path, std::string& reason)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd == -1) {
        reason = std::strerror(errno);
        return std::nullopt;
    }
    std::string text;
    const int err = read_to_end(fd, 16 * 1024 * 1024, text);
    ::close(fd);
    if (err != 0) {
        reason = std::strerror(err);
        return std::nullopt;
    }
    return text;
}

std::vector<std::string> name_list_vector(std::string_view list)
{
    std::vector<std::string> out;
    for (auto n : split_name_list(list))
        out.emplace_back(n);
    return out;
}

} // namespace

std::optional<principals_match> sshd_auth_policy::find_in_principals_command(const certificate& cert,
                                                                            std::vector<log_message>& notes)
{
    const server_config& c = *user_config_;
    if (c.authorized_principals_command.empty() || c.authorized_principals_command == "none")
        return std::nullopt;
    principals_command_request req;
    req.command = c.authorized_principals_command;
    req.target = *account_;
    req.run_as =
        command_user("AuthorizedPrincipalsCommand", c.authorized_principals_command_user, *account_, notes);
    if (!req.run_as)
        return std::nullopt;
    req.cert = cert;
    req.fingerprint = c.fingerprint;
    req.connection_id = connection_id();
    auto out = run_authorized_principals_command(req);
    notes.insert(notes.end(), out.log.begin(), out.log.end());
    if (!out.output)
        return std::nullopt;
    // OpenSSH names the command's lines "(command):N" in its log.
    return check_authorized_principals(*out.output, "(command)", cert, notes);
}

std::optional<authorized_key_match> sshd_auth_policy::trusted_ca_match(const certificate& cert,
                                                                       const authorized_keys_context& ctx)
{
    const server_config& c = *user_config_;
    const public_key& ca = cert.signature_key();
    std::string reason;
    auto listed = read_root_file(c.trusted_user_ca_keys, reason);
    if (!listed || !ca_key_listed(*listed, ca)) {
        log_.debug2("user_cert_trusted_ca: CA " + std::string(key_type_short_name(ca.type())) + " " +
                    key_fingerprint(ca, c.fingerprint) + " is not listed in " + c.trusted_user_ca_keys + ": " +
                    (listed ? "key not found" : reason));
        return std::nullopt;
    }
    std::optional<principals_match> principal;
    std::vector<log_message> notes;
    if (!c.authorized_principals_file.empty()) {
        std::string error;
        auto path = expand_authorized_keys_path(c.authorized_principals_file, *account_, error);
        if (!path) {
            log_.error(error);
        } else {
            // Read as the user, not as root (OpenSSH's temporarily_use_uid).
            temporary_identity as_user(*account_, groups_);
            log_.debug("trying authorized principals file " + *path);
            auto file = read_user_file(*path, *account_, c.strict_modes, "authorized principals");
            log_all(file.log);
            if (file.contents)
                principal = check_authorized_principals(*file.contents, *path, cert, notes);
        }
    }
    if (!principal)
        principal = find_in_principals_command(cert, notes);
    log_all(notes);
    const bool use_principals = !c.authorized_principals_file.empty() || !c.authorized_principals_command.empty();
    auto r = check_trusted_user_ca(cert, c.trusted_user_ca_keys, use_principals, principal, ctx);
    log_all(r.log);
    return std::move(r.match);
}

key_decision sshd_auth_policy::certificate_allowed(std::string_view, const certificate& cert, bool)
{
    key_decision d;
    if (!account_)
        return d;
    const server_config& c = *user_config_;
    // What the child checked, checked again from the monitor's own parse:
    // the CA's signature, made with an algorithm CASignatureAlgorithms allows.
    if (!cert.verify_signature(name_list_vector(c.ca_signature_algorithms))) {
        log_.info("refusing certificate ID \"" + sanitize_peer_text(cert.key_id(), false) +
                  "\": CA signature invalid or its algorithm " + cert.signature_algorithm() +
                  " not in CASignatureAlgorithms");
        return d;
    }
    if (!rsa_size_allowed(cert.key(), c.required_rsa_size)) {
        log_.info("refusing " + std::string(key_type_short_name(cert.key().type())) + "-CERT key: Invalid key length");
        return d;
    }
    // RevokedKeys first, read as root: the certificate (its key, its
    // serial or key ID under its CA), then its CA's key.
    if (!c.revoked_keys.empty()) {
        auto revoked = check_revoked_certificate(c.revoked_keys, cert, c.fingerprint);
        log_all(revoked.log);
        if (revoked.refused)
            return d;
        auto ca_revoked = check_revoked_key(c.revoked_keys, cert.signature_key(), c.fingerprint);
        log_all(ca_revoked.log);
        if (ca_revoked.refused)
            return d;
    }
    const authorized_keys_context ctx = keys_context();
    const keys_file_check check = [&](std::string_view contents, const std::string& source) {
        return check_authorized_keys(contents, source, cert, ctx);
    };
    std::optional<authorized_key_match> found = find_in_authorized_keys(check);
    if (!found && !c.trusted_user_ca_keys.empty())
        found = trusted_ca_match(cert, ctx);
    if (!found)
        found = find_in_keys_command(cert.key(), &cert, check);
    return decision_of(std::move(found));
}

} // namespace longhaul
