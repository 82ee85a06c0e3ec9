// publickey on the client, as OpenSSH's sshconnect2.c does it: identities
// filtered by PubkeyAcceptedAlgorithms and server-sig-algs, each offered
// with a query, the private half loaded (passphrase asked) only after
// PK_OK, signatures made in memory or by the agent through an event.
#include "common/auth/agent_protocol.hpp"
#include "common/auth/client_auth.hpp"

#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "common/name_list.hpp"
#include "common/wire.hpp"

#include <fstream>
#include <sstream>

namespace longhaul {

client_identity identity_from_key_file(const std::filesystem::path& path, bool user_provided)
{
    client_identity id;
    id.name = path.string();
    id.user_provided = user_provided;
    // The .pub next to the key, else the key file's own public section
    // (openssh-key-v1 keeps it in the clear; unencrypted PEM gives it too).
    std::ifstream pub(path.string() + ".pub", std::ios::binary);
    if (pub) {
        std::ostringstream text;
        text << pub.rdbuf();
        std::string line = text.str();
        if (auto nl = line.find('\n'); nl != std::string::npos)
            line.resize(nl + 1);
        if (auto k = parse_public_key_line(line))
            id.key = k->key;
    }
    if (!id.key) {
        if (auto contents = read_key_file(path)) {
            const std::string_view text = as_string_view(contents->span());
            if (auto k = private_key_file_public_key(text)) {
                id.key = std::move(*k);
            } else if (auto enc = private_key_is_encrypted(text); enc && !*enc) {
                if (auto priv = parse_private_key(text, std::nullopt))
                    id.key = priv->public_part();
            }
        }
    }
    id.load = [path](std::optional<std::string_view> passphrase) { return load_private_key_file(path, passphrase); };
    return id;
}

client_identity identity_from_agent(const agent::identity& a)
{
    client_identity id;
    id.name = a.comment;
    id.agent = true;
    id.key = a.key;
    return id;
}

// "path TYPE SHA256:... explicit agent", OpenSSH's format_identity.
std::string client_auth::format_identity(std::size_t i) const
{
    const client_identity& id = config_.identities[i];
    std::string s = id.name + " ";
    if (id.key)
        s += std::string(key_type_short_name(id.key->type())) + " " + id.key->fingerprint_sha256();
    if (id.user_provided)
        s += " explicit";
    if (id.agent)
        s += " agent";
    return s;
}

void client_auth::prepare_identities()
{
    queue_.clear();
    for (std::size_t i = 0; i < config_.identities.size(); ++i) {
        const client_identity& id = config_.identities[i];
        if (id.key) {
            const std::string ssh_name(id.key->type_name());
            if (!key_type_allowed(*id.key, config_.pubkey_accepted_algorithms)) {
                log(auth_log_level::debug1, "Skipping " + ssh_name + " key " + id.name +
                                                " - corresponding algorithm not in PubkeyAcceptedAlgorithms");
                continue;
            }
            if (session_.server_sig_algs &&
                !choose_signature_algorithm(*id.key, config_.pubkey_accepted_algorithms, session_.server_sig_algs)) {
                log(auth_log_level::debug1,
                    "Skipping " + ssh_name + " key " + id.name + " - corresponding algorithm not supported by server");
                continue;
            }
        }
        queue_.push_back(i);
    }
    for (auto i : queue_)
        log(auth_log_level::debug1, "Will attempt key: " + format_identity(i));
}

client_auth::started client_auth::run_publickey()
{
    if (!prepared_) {
        prepare_identities();
        prepared_ = true;
    }
    while (!queue_.empty()) {
        const std::size_t i = queue_.front();
        if (ids_[i].tried)
            return started::not_sent;
        ids_[i].tried = true;
        // Tried keys go to the back, so after a partial success the keys
        // not yet offered come first.
        queue_.pop_front();
        queue_.push_back(i);
        const client_identity& id = config_.identities[i];
        started s;
        if (id.key) {
            log(auth_log_level::debug1, "Offering public key: " + format_identity(i));
            auto alg = choose_signature_algorithm(*id.key, config_.pubkey_accepted_algorithms, session_.server_sig_algs);
            if (!alg) {
                log(auth_log_level::debug1, "send_pubkey_test: no mutual signature algorithm");
                s = started::not_sent;
            } else {
                userauth_publickey_data d;
                d.algorithm = *alg;
                d.key_blob = id.key->blob();
                send(userauth_request{config_.user, config_.service, std::string(method_publickey), std::move(d)}
                         .encode());
                s = started::sent;
            }
        } else {
            log(auth_log_level::debug1, "Trying private key: " + id.name);
            s = load_identity(i);
        }
        if (s != started::not_sent)
            return s;
    }
    return started::not_sent;
}

void client_auth::handle_pk_ok(byte_span payload)
{
    auto ok = userauth_pk_ok::decode(payload);
    if (!ok) {
        disconnect("invalid format");
        return;
    }
    const auto done = [&](started s) { resume(s); };
    auto type = key_type_for_signature_algorithm(ok->algorithm);
    if (!type) {
        log(auth_log_level::debug1, "input_userauth_pk_ok: server sent unknown pkalg " +
                                        sanitize_peer_text(ok->algorithm, false));
        done(started::not_sent);
        return;
    }
    auto key = public_key::from_blob(ok->key_blob);
    if (!key) {
        log(auth_log_level::debug1, "input_userauth_pk_ok: no key from blob. pkalg " +
                                        sanitize_peer_text(ok->algorithm, false));
        done(started::not_sent);
        return;
    }
    if (key->type() != *type) {
        log(auth_log_level::error, "input_userauth_pk_ok: type mismatch for decoded key (received " +
                                       std::string(key->type_name()) + ", expected " +
                                       sanitize_peer_text(ok->algorithm, false) + ")");
        done(started::not_sent);
        return;
    }
    // The key just offered is at the back of the queue: search from there,
    // which also settles duplicates.
    std::optional<std::size_t> found;
    for (auto it = queue_.rbegin(); it != queue_.rend(); ++it) {
        const auto& id = config_.identities[*it];
        if (id.key && *id.key == *key) {
            found = *it;
            break;
        }
    }
    if (!found) {
        log(auth_log_level::error, "input_userauth_pk_ok: server replied with unknown key: " + describe_key(*key));
        done(started::not_sent);
        return;
    }
    log(auth_log_level::debug1, "Server accepts key: " + format_identity(*found));
    done(sign_and_send(*found));
}

client_auth::started client_auth::sign_and_send(std::size_t i)
{
    const client_identity& id = config_.identities[i];
    sign_id_ = i;
    retried_sigtype_ = false;
    load_result_.reset();
    if (!id.loaded && !id.agent && id.load)
        return load_identity(i);
    return sign_loaded(i);
}

client_auth::started client_auth::sign_loaded(std::size_t i)
{
    const client_identity& id = config_.identities[i];
    const private_key* priv = id.loaded ? id.loaded.get() : load_result_.get();
    if (priv == nullptr && !id.key)
        return started::not_sent;
    const public_key& pub = id.key ? *id.key : priv->public_part();
    // A second try after an agent returned the wrong signature type
    // ignores server-sig-algs, as OpenSSH's fallback does.
    auto alg = choose_signature_algorithm(pub, config_.pubkey_accepted_algorithms,
                                          retried_sigtype_ ? std::nullopt : session_.server_sig_algs);
    if (!alg) {
        log(auth_log_level::error, "sign_and_send_pubkey: no mutual signature supported");
        return started::not_sent;
    }
    userauth_publickey_data d;
    const bool hostbound = config_.hostbound && session_.hostbound_offered && !session_.host_key_blob.empty();
    d.hostbound = hostbound;
    d.has_signature = true;
    d.algorithm = *alg;
    d.key_blob = pub.blob();
    if (hostbound)
        d.host_key_blob = session_.host_key_blob;
    signed_request_ = userauth_request{config_.user, config_.service,
                                       std::string(hostbound ? method_publickey_hostbound : method_publickey),
                                       std::move(d)};
    sign_alg_ = *alg;
    bytes data = publickey_signed_data(session_.session_id, signed_request_);
    log(auth_log_level::debug3, "sign_and_send_pubkey: signing using " + *alg + " " + pub.fingerprint_sha256());

    if (priv == nullptr && id.agent) {
        client_auth_event ev;
        ev.type = client_auth_event_type::sign;
        ev.identity = &id;
        ev.identity_index = i;
        ev.algorithm = *alg;
        ev.data = std::move(data);
        ev.agent_flags = agent::sign_flags_for(*alg);
        events_.push_back(std::move(ev));
        phase_ = phase::signing;
        return started::waiting;
    }
    if (priv == nullptr)
        return started::not_sent;
    auto sig = priv->sign(*alg, data);
    load_result_.reset(); // keep decrypted keys no longer than needed
    if (!sig) {
        log(auth_log_level::error, "sign_and_send_pubkey: signing failed for " +
                                       std::string(key_type_short_name(pub.type())) + " \"" + id.name +
                                       "\": " + std::string(to_string(sig.error())));
        return started::not_sent;
    }
    return send_signed(*sig);
}

client_auth::started client_auth::send_signed(byte_span signature)
{
    std::get<userauth_publickey_data>(signed_request_.data).signature = to_bytes(signature);
    send(signed_request_.encode());
    return started::sent;
}

void client_auth::answer_signature(byte_span signature_blob)
{
    if (phase_ != phase::signing)
        return;
    phase_ = phase::waiting;
    const client_identity& id = config_.identities[sign_id_];
    // The agent must have used the algorithm asked for (an old agent may
    // answer ssh-rsa to a SHA-2 request).
    wire_reader r(signature_blob);
    const std::string_view got = r.text(max_auth_name);
    started s;
    if (!r.ok() || got != sign_alg_) {
        log(auth_log_level::info, "agent key " + describe_key(*id.key) + " returned incorrect signature type");
        if (!retried_sigtype_) {
            retried_sigtype_ = true;
            s = sign_loaded(sign_id_);
        } else {
            s = started::not_sent;
        }
    } else {
        s = send_signed(signature_blob);
    }
    resume(s);
    drain_queue();
}

void client_auth::signature_failed(std::string_view why)
{
    if (phase_ != phase::signing)
        return;
    phase_ = phase::waiting;
    const client_identity& id = config_.identities[sign_id_];
    log(auth_log_level::error, "sign_and_send_pubkey: signing failed for " +
                                   std::string(key_type_short_name(id.key->type())) + " \"" + id.name +
                                   "\" from agent: " + std::string(why));
    continue_method();
    drain_queue();
}

// --- key files ---

client_auth::started client_auth::load_identity(std::size_t i)
{
    sign_id_ = i;
    load_attempt_ = 0;
    load_result_.reset();
    return try_load(std::nullopt);
}

client_auth::started client_auth::try_load(std::optional<std::string_view> passphrase)
{
    const client_identity& id = config_.identities[sign_id_];
    if (!id.load)
        return started::not_sent;
    auto key = id.load(passphrase);
    if (key) {
        if (id.key && !(key->public_part() == *id.key)) {
            log(auth_log_level::error, "sign_and_send_pubkey: private key " + id.name + " contents do not match public");
            return started::not_sent;
        }
        load_result_ = std::make_shared<const private_key>(std::move(*key));
        return sign_loaded(sign_id_);
    }
    switch (key.error()) {
    case errc::passphrase_required:
    case errc::wrong_passphrase:
        if (config_.batch_mode)
            return started::not_sent;
        if (load_attempt_ > 0)
            log(auth_log_level::debug2, "bad passphrase given, try again...");
        if (load_attempt_ >= config_.number_of_password_prompts)
            return started::not_sent;
        ++load_attempt_;
        prompt(prompt_kind::passphrase,
               {{"Enter passphrase for key '" + std::string(truncated(id.name, 100)) + "': ", false}}, ask::passphrase);
        return started::waiting;
    case errc::io_error:
        log(id.user_provided ? auth_log_level::info : auth_log_level::debug3,
            "no such identity: " + id.name + ": No such file or directory");
        return started::not_sent;
    default:
        log(auth_log_level::error, "Load key \"" + id.name + "\": " + std::string(to_string(key.error())));
        return started::not_sent;
    }
}

} // namespace longhaul
