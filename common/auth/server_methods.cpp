// The server's authentication methods: none, publickey (query, signature,
// hostbound), password (through the program's backend),
// keyboard-interactive (a device driven by events) and hostbased, each
// deciding as sshd's auth2-*.c do and leaving the reply to finish().
#include "common/auth/server_auth.hpp"

#include "common/name_list.hpp"

#include <algorithm>
#include <string_view>

namespace longhaul {

namespace {

// Longer passwords are refused without asking the backend (OpenSSH's
// MAX_PASSWORD_LEN), so a client cannot make crypt() hash megabytes.
constexpr std::size_t max_password_length = 1024;

// What the backend gets instead of a password that can never log in (an
// invalid user, or root without PermitRootLogin yes): bytes no password
// holds, as many as the client sent, so the check takes as long as a real
// one but the backend's verdict (and PAM's failure delay) cannot tell an
// attacker whether the password was right. OpenSSH's fake_password().
secret_bytes fake_password(byte_span wire)
{
    static constexpr std::string_view junk = "\b\n\r\177INCORRECT";
    secret_bytes out(std::max<std::size_t>(wire.size(), 1));
    for (std::size_t i = 0; i < out.size(); ++i)
        out.data()[i] = static_cast<std::uint8_t>(junk[i % junk.size()]);
    return out;
}

} // namespace

bool server_auth::password_can_succeed() const noexcept
{
    return valid_ && !(is_root_ && settings_.root_login != permit_root_login::yes);
}

server_auth::outcome server_auth::run_none(attempt& a)
{
    // sshd answers "none" once; a second one is an unknown method.
    none_enabled_ = false;
    if (!(settings_.permit_empty_passwords && settings_.password_authentication))
        return outcome::failed;
    // PermitEmptyPasswords: "none" succeeds when the empty password is the
    // user's password, which only the backend knows.
    a.log = true;
    password_ok_ = password_can_succeed();
    server_auth_event ev;
    ev.type = server_auth_event_type::check_password;
    ev.user = user_;
    ev.user_valid = valid_;
    if (!password_ok_)
        ev.password = fake_password({});
    events_.push_back(std::move(ev));
    state_ = state::password_check;
    return outcome::pending;
}

server_auth::outcome server_auth::run_password(const userauth_request& req, attempt& a)
{
    const auto& d = std::get<userauth_password_data>(req.data);
    if (d.change) {
        log(auth_log_level::info, "password change not supported [preauth]");
        return outcome::failed;
    }
    a.log = true;
    if (d.password.size() > max_password_length)
        return outcome::failed;
    if (d.password.empty() && !settings_.permit_empty_passwords)
        return outcome::failed;
    // Root without PermitRootLogin yes, and invalid users, still go through
    // the backend so the reply takes as long as a real check, but with a
    // password that cannot match: the real one never reaches it.
    password_ok_ = password_can_succeed();
    server_auth_event ev;
    ev.type = server_auth_event_type::check_password;
    ev.user = user_;
    ev.user_valid = valid_;
    ev.password = password_ok_ ? d.password : fake_password(d.password);
    events_.push_back(std::move(ev));
    state_ = state::password_check;
    return outcome::pending;
}

void server_auth::answer_password(bool ok)
{
    if (state_ != state::password_check)
        return;
    state_ = state::ready;
    finish(ok && password_ok_);
    drain_queue();
}

std::optional<certificate> server_auth::presented_certificate(byte_span blob, std::string_view failure)
{
    // Parsed here, in sshd's sandboxed child, before anything privileged
    // sees the blob; the monitor parses it again itself.
    auto cert = blob.size() <= max_certificate_blob ? certificate::from_blob(blob) : result<certificate>(errc::too_large);
    if (!cert) {
        log(auth_log_level::error, std::string(failure) + "invalid format [preauth]");
        return std::nullopt;
    }
    // The CA's signature, whatever its algorithm (as OpenSSH's parser); the
    // caller checks the algorithm against CASignatureAlgorithms
    // (sshkey_check_cert_sigtype).
    if (!cert->verify_signature({cert->signature_algorithm()})) {
        log(auth_log_level::error, std::string(failure) + "incorrect signature [preauth]");
        return std::nullopt;
    }
    return std::move(*cert);
}

server_auth::outcome server_auth::run_publickey(const userauth_request& req, attempt& a)
{
    const auto& d = std::get<userauth_publickey_data>(req.data);
    if (d.hostbound) {
        auto ours = public_key::from_blob(config_.host_key_blob);
        auto theirs = public_key::from_blob(d.host_key_blob);
        if (config_.host_key_blob.empty())
            return outcome::failed; // no host key recorded: the method is not offered
        // A host certificate (not a plain key blob) must come back as sent.
        const bool same = ours ? theirs && *ours == *theirs : config_.host_key_blob == d.host_key_blob;
        if (!same) {
            log(auth_log_level::error, "userauth_pubkey: " + std::string(method_publickey_hostbound) +
                                           " packet contained wrong host key [preauth]");
            disconnect(disconnect_reason::protocol_error,
                       std::string(method_publickey_hostbound) + " packet contained wrong host key", false);
            return outcome::pending;
        }
    }
    // A certificate signs with its certified key's plain algorithm
    // ("rsa-sha2-512" for rsa-sha2-512-cert-v01@openssh.com).
    const bool is_cert = is_certificate_algorithm(d.algorithm);
    const auto plain_alg =
        is_cert ? certificate_signature_algorithm(d.algorithm) : std::optional(std::string_view(d.algorithm));
    auto alg_type = plain_alg ? key_type_for_signature_algorithm(*plain_alg) : result<key_type>(errc::unsupported);
    if (!alg_type) {
        log(auth_log_level::verbose, "userauth_pubkey: unsupported public key algorithm: " + d.algorithm + " [preauth]");
        return outcome::failed;
    }
    std::optional<certificate> cert;
    std::optional<public_key> key;
    if (is_cert) {
        cert = presented_certificate(d.key_blob, "userauth_pubkey: parse key: ");
        if (!cert)
            return outcome::failed;
        key = cert->key();
    } else if (auto k = public_key::from_blob(d.key_blob)) {
        key = std::move(*k);
    } else {
        log(auth_log_level::error, "userauth_pubkey: cannot decode key: " + d.algorithm + " [preauth]");
        return outcome::failed;
    }
    const std::string short_name = std::string(key_type_short_name(key->type())) + (is_cert ? "-CERT" : "");
    if (key->type() != *alg_type) {
        log(auth_log_level::error, "userauth_pubkey: type mismatch for decoded key (received " +
                                       std::string(is_cert ? cert->type_name() : key->type_name()) + ", expected " +
                                       d.algorithm + ") [preauth]");
        return outcome::failed;
    }
    // A certificate is a key of its own: the same key plain, or in another
    // certificate, counts as a different one (OpenSSH's sshkey_equal).
    const bytes& presented = is_cert ? cert->blob() : key->blob();
    for (const auto& used : used_keys_) {
        if (used == presented) {
            log(auth_log_level::info, "refusing previously-used " + short_name + " key [preauth]");
            return outcome::failed;
        }
    }
    if (!name_list_contains(settings_.pubkey_accepted_algorithms, d.algorithm)) {
        log(auth_log_level::info,
            "userauth_pubkey: signature algorithm " + d.algorithm + " not in PubkeyAcceptedAlgorithms [preauth]");
        return outcome::failed;
    }
    if (cert && !name_list_contains(settings_.ca_signature_algorithms, cert->signature_algorithm())) {
        log(auth_log_level::info, "userauth_pubkey: certificate signature algorithm " + cert->signature_algorithm() +
                                      ": signature algorithm not supported [preauth]");
        return outcome::failed;
    }
    // Invalid users get the same FAILURE a refused key gets: no PK_OK,
    // no signature check, nothing that tells the user does not exist.
    if (!valid_) {
        log(auth_log_level::debug2, "userauth_pubkey: disabled because of invalid user [preauth]");
        return outcome::failed;
    }
    key_decision decision;
    if (cert) {
        if (policy_.certificate_allowed)
            decision = policy_.certificate_allowed(user_, *cert, d.has_signature);
    } else if (policy_.key_allowed) {
        decision = policy_.key_allowed(user_, *key, d.has_signature);
    }

    a.log = true;
    a.key = *key;
    a.cert = cert;
    if (!d.has_signature) {
        if (!decision.allowed)
            return outcome::failed;
        a.log = false;
        a.key.reset();
        a.cert.reset();
        send(userauth_pk_ok{d.algorithm, d.key_blob}.encode());
        return outcome::postponed;
    }

    if (!decision.allowed)
        return outcome::failed;
    const bytes signed_data = publickey_signed_data(config_.session_id, req);
    // sshd's monitor checks the signature itself, a security key's flags
    // included; without one, the machine does.
    if (policy_.verify_signature) {
        if (!policy_.verify_signature(d.key_blob, d.algorithm, signed_data, d.signature))
            return outcome::failed;
    } else {
        sk_signature_details sk;
        if (!key->verify(*plain_alg, signed_data, d.signature, &sk))
            return outcome::failed;
        if (is_security_key(key->type())) {
            if (auto unmet = sk_unmet_requirement(decision.security_key, sk.flags)) {
                log(auth_log_level::error, sk_refusal_line(short_name + " " + key->fingerprint_sha256(), valid_, user_,
                                                           config_.remote_ip, config_.remote_port, *unmet));
                return outcome::failed;
            }
        }
    }
    // A key that proved itself may not count twice towards
    // AuthenticationMethods ("publickey,publickey" needs two keys).
    used_keys_.push_back(presented);
    a.decision = std::move(decision);
    return outcome::succeeded;
}

// RFC 4252 §9, as OpenSSH's userauth_hostbased(): the key and the names
// are checked by the policy (sshd's monitor), then the signature over the
// request by the key of the client's host.
server_auth::outcome server_auth::run_hostbased(const userauth_request& req, attempt& a)
{
    const auto& d = std::get<userauth_hostbased_data>(req.data);
    log(auth_log_level::debug1, "userauth_hostbased: cuser " + sanitize_peer_text(truncated(d.client_user, 100), false) +
                                    " chost " + sanitize_peer_text(truncated(d.client_host, 100), false) + " pkalg " +
                                    d.algorithm + " slen " + std::to_string(d.signature.size()) + " [preauth]");
    if (d.client_host.size() > max_hostbased_name || d.client_user.size() > max_hostbased_name) {
        log(auth_log_level::info, "userauth_hostbased: client host or user name too long [preauth]");
        return outcome::failed;
    }
    // A host certificate signs with its key's plain algorithm.
    const bool is_cert = is_certificate_algorithm(d.algorithm);
    const auto plain_alg =
        is_cert ? certificate_signature_algorithm(d.algorithm) : std::optional(std::string_view(d.algorithm));
    auto alg_type = plain_alg ? key_type_for_signature_algorithm(*plain_alg) : result<key_type>(errc::unsupported);
    if (!alg_type) {
        log(auth_log_level::info, "userauth_hostbased: unsupported public key algorithm: " + d.algorithm + " [preauth]");
        return outcome::failed;
    }
    std::optional<certificate> cert;
    std::optional<public_key> key;
    if (is_cert) {
        auto c = presented_certificate(d.key_blob, "userauth_hostbased: key_from_blob: ");
        if (!c)
            return outcome::failed;
        if (!name_list_contains(settings_.ca_signature_algorithms, c->signature_algorithm())) {
            log(auth_log_level::info, "userauth_hostbased: certificate signature algorithm " + c->signature_algorithm() +
                                          ": signature algorithm not supported [preauth]");
            return outcome::failed;
        }
        key = c->key();
        cert = std::move(*c);
    } else if (auto k = public_key::from_blob(d.key_blob)) {
        key = std::move(*k);
    } else {
        log(auth_log_level::error, "userauth_hostbased: key_from_blob: invalid format [preauth]");
        return outcome::failed;
    }
    if (key->type() != *alg_type) {
        log(auth_log_level::error, "userauth_hostbased: type mismatch for decoded key (received " +
                                       std::string(is_cert ? cert->type_name() : key->type_name()) + ", expected " +
                                       d.algorithm + ") [preauth]");
        return outcome::failed;
    }
    if (!name_list_contains(settings_.hostbased_accepted_algorithms, d.algorithm)) {
        log(auth_log_level::info, "userauth_hostbased: signature algorithm " + d.algorithm +
                                      " not in HostbasedAcceptedAlgorithms [preauth]");
        return outcome::failed;
    }
    if (!valid_) {
        log(auth_log_level::debug2, "userauth_hostbased: disabled because of invalid user [preauth]");
        return outcome::failed;
    }
    // A host key that proved itself may not count twice either.
    const bytes& presented = is_cert ? cert->blob() : key->blob();
    for (const auto& used : used_keys_) {
        if (used == presented) {
            log(auth_log_level::info, "refusing previously-used " + std::string(key_type_short_name(key->type())) +
                                          (is_cert ? "-CERT" : "") + " key [preauth]");
            return outcome::failed;
        }
    }
    a.log = true;
    a.key = *key;
    a.cert = cert;
    a.failure_note = hostbased_failure_note(d.client_user, d.client_host);
    if (!policy_.host_allowed ||
        !policy_.host_allowed(user_, *key, cert ? &*cert : nullptr, d.client_host, d.client_user))
        return outcome::failed;
    const bytes signed_data = publickey_signed_data(config_.session_id, req);
    const bool verified = policy_.verify_signature
                              ? policy_.verify_signature(d.key_blob, d.algorithm, signed_data, d.signature)
                              : static_cast<bool>(key->verify(*plain_alg, signed_data, d.signature));
    if (!verified)
        return outcome::failed;
    used_keys_.push_back(presented);
    return outcome::succeeded;
}

server_auth::outcome server_auth::run_kbdint(const userauth_request& req, attempt& a)
{
    const auto& d = std::get<userauth_kbdint_data>(req.data);
    if (settings_.kbdint_device.empty())
        return outcome::failed;
    // The first INFO_REQUEST is logged under the bare method name, later
    // rounds and the verdict under method/device, as sshd does.
    a.submethod.clear();
    kbdint_active_ = true;
    server_auth_event ev;
    ev.type = server_auth_event_type::kbdint_start;
    ev.user = user_;
    ev.user_valid = valid_;
    ev.submethods = d.submethods;
    events_.push_back(std::move(ev));
    state_ = state::kbdint_query;
    return outcome::pending;
}

void server_auth::handle_info_response(byte_span payload, std::uint32_t seq)
{
    if (state_ != state::kbdint_wait) {
        unimplemented(seq);
        return;
    }
    auto resp = userauth_info_response::decode(payload);
    if (!resp) {
        protocol_failure("invalid format");
        return;
    }
    if (resp->responses.size() != kbdint_prompts_) {
        log(auth_log_level::error, "input_userauth_info_response: wrong number of replies [preauth]");
        disconnect(disconnect_reason::protocol_error, "wrong number of replies", false);
        return;
    }
    server_auth_event ev;
    ev.type = server_auth_event_type::kbdint_respond;
    ev.user = user_;
    ev.user_valid = valid_;
    ev.responses = std::move(resp->responses);
    // The device (PAM) never sees what an invalid user or a refused root
    // typed, as with passwords above.
    if (!password_can_succeed())
        for (auto& r : ev.responses)
            r = fake_password(r);
    events_.push_back(std::move(ev));
    current_.submethod = settings_.kbdint_device;
    state_ = state::kbdint_query;
}

void server_auth::answer_kbdint(kbdint_reply reply)
{
    if (state_ != state::kbdint_query)
        return;
    state_ = state::ready;
    apply_kbdint_reply(std::move(reply));
    drain_queue();
}

void server_auth::apply_kbdint_reply(kbdint_reply reply)
{
    if (reply.result == kbdint_reply::kind::prompts && reply.prompts.size() <= max_kbdint_prompts) {
        kbdint_prompts_ = reply.prompts.size();
        send(userauth_info_request{std::move(reply.name), std::move(reply.instruction), "", std::move(reply.prompts)}
                 .encode());
        state_ = state::kbdint_wait;
        log_attempt("Postponed", false);
        return;
    }
    // The device is done with this conversation.
    kbdint_active_ = false;
    kbdint_prompts_ = 0;
    current_.submethod = settings_.kbdint_device;
    current_.log = true;
    finish(reply.result == kbdint_reply::kind::success);
}

void server_auth::stop_kbdint()
{
    if (!kbdint_active_)
        return;
    kbdint_active_ = false;
    kbdint_prompts_ = 0;
    server_auth_event ev;
    ev.type = server_auth_event_type::kbdint_abort;
    events_.push_back(std::move(ev));
    if (state_ == state::kbdint_wait || state_ == state::kbdint_query)
        state_ = state::ready;
}

} // namespace longhaul
