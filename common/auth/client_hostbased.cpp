// The client's hostbased method (RFC 4252 §9) as OpenSSH's
// userauth_hostbased(): HostbasedAcceptedAlgorithms is worked through in
// order, each host key that fits the algorithm is offered once with it, and
// ssh-keysign (the program's, through a keysign event) signs the request.
// A signature that cannot be had gives hostbased up for the connection.
#include "common/auth/client_auth.hpp"

#include "common/keys/certificate.hpp"
#include "common/name_list.hpp"
#include "common/transport/host_key_algorithms.hpp"

namespace longhaul {

const bytes& client_host_key::blob() const
{
    return cert ? cert->blob() : key.blob();
}

std::string_view client_host_key::type_name() const
{
    return cert ? cert->type_name() : key.type_name();
}

namespace {

// OpenSSH's sshkey_match_keyname_to_sigalgs for one algorithm: a key goes
// with the plain algorithms of its type, a certificate with the
// certificate ones (an RSA key with any of ssh-rsa, rsa-sha2-256/512).
bool fits(const client_host_key& k, std::string_view algorithm)
{
    const auto type = host_key_type_for_algorithm(algorithm);
    return type && *type == k.key.type() && is_certificate_algorithm(algorithm) == (k.cert != nullptr);
}

} // namespace

// The next untried key for the algorithm in hand, moving down the list
// when none is left for it; nullopt (and the list forgotten) at its end.
std::optional<std::size_t> client_auth::next_host_key()
{
    if (!host_algorithms_) {
        host_algorithms_.emplace();
        for (auto a : split_name_list(config_.hostbased_accepted_algorithms))
            host_algorithms_->emplace_back(a);
        host_algorithm_ = 0;
    }
    for (; host_algorithm_ < host_algorithms_->size(); ++host_algorithm_) {
        const std::string& alg = (*host_algorithms_)[host_algorithm_];
        log(auth_log_level::debug3, "userauth_hostbased: trying key type " + alg);
        for (std::size_t i = 0; i < config_.host_keys.size(); ++i) {
            if (!host_key_tried_[i] && fits(config_.host_keys[i], alg)) {
                host_key_tried_[i] = true;
                return i;
            }
        }
    }
    host_algorithms_.reset();
    return std::nullopt;
}

client_auth::started client_auth::run_hostbased()
{
    const auto i = next_host_key();
    if (!i) {
        log(auth_log_level::debug1, "No more client hostkeys for hostbased authentication.");
        return started::not_sent;
    }
    host_key_ = *i;
    const client_host_key& k = config_.host_keys[*i];
    const std::string& alg = (*host_algorithms_)[host_algorithm_];
    log(auth_log_level::debug1, "userauth_hostbased: trying hostkey " + std::string(k.type_name()) + " " +
                                    k.key.fingerprint_sha256() + " using sigalg " + alg);
    const std::string chost = config_.local_host + ".";
    log(auth_log_level::debug2, "userauth_hostbased: chost " + chost);
    host_request_ = userauth_request{config_.user, config_.service, std::string(method_hostbased),
                                     userauth_hostbased_data{alg, k.blob(), chost, config_.local_user, {}}};
    client_auth_event ev;
    ev.type = client_auth_event_type::keysign;
    ev.host_key = &k;
    ev.algorithm = alg;
    ev.data = publickey_signed_data(session_.session_id, host_request_);
    events_.push_back(std::move(ev));
    phase_ = phase::host_signing;
    return started::waiting;
}

void client_auth::answer_host_signature(byte_span signature_blob)
{
    if (phase_ != phase::host_signing)
        return;
    std::get<userauth_hostbased_data>(host_request_.data).signature = to_bytes(signature_blob);
    send(host_request_.encode());
    phase_ = phase::waiting;
    log(auth_log_level::debug2, "we sent a hostbased packet, wait for reply");
    drain_queue();
}

void client_auth::host_signature_failed()
{
    if (phase_ != phase::host_signing)
        return;
    phase_ = phase::waiting;
    const client_host_key& k = config_.host_keys[host_key_];
    log(auth_log_level::error,
        "sign using hostkey " + std::string(k.type_name()) + " " + k.key.fingerprint_sha256() + " failed");
    log(auth_log_level::debug2, "we did not send a packet, disable method");
    disabled_[std::string(method_hostbased)] = true;
    continue_method();
    drain_queue();
}

} // namespace longhaul
