// publickey on the client, as OpenSSH's sshconnect2.c does it: identities
// filtered by PubkeyAcceptedAlgorithms and server-sig-algs, each offered
// with a query, the private half loaded (passphrase asked) only after
// PK_OK, signatures made in memory, or by the agent or a security key's
// middleware through an event (a security-key file's record is loaded,
// passphrase and all, as a private key would be). A
// certificate identity offers the certificate blob and algorithm and signs
// with the private key of the identity holding its key (certificate_signer).
#include "common/auth/agent_protocol.hpp"
#include "common/auth/client_auth.hpp"
#include "common/auth/client_certificates.hpp"

#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "common/name_list.hpp"
#include "common/wire.hpp"

#include <fstream>
#include <sstream>

namespace longhaul {

namespace {

// The key of a public key line file (the first line), when it is one.
std::optional<public_key> public_key_line_file(const std::string& path)
{
    std::ifstream pub(path, std::ios::binary);
    if (!pub)
        return std::nullopt;
    std::string line;
    std::getline(pub, line);
    auto k = parse_public_key_line(line + "\n");
    if (!k)
        return std::nullopt;
    return std::move(k->key);
}

} // namespace

client_identity identity_from_key_file(const std::filesystem::path& path, bool user_provided)
{
    client_identity id;
    id.name = path.string();
    id.user_provided = user_provided;
    // As OpenSSH's sshkey_load_public: the file itself when it is a public
    // key (`-i id.pub` names a key the agent holds), else the .pub next to
    // it, else the key file's own public section (openssh-key-v1 keeps it in
    // the clear; unencrypted PEM gives it too).
    id.key = public_key_line_file(path.string());
    if (!id.key)
        id.key = public_key_line_file(path.string() + ".pub");
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
    id.load_security_key = [path](std::optional<std::string_view> passphrase) -> result<openssh_security_key> {
        auto contents = read_key_file(path);
        if (!contents)
            return contents.error();
        return parse_openssh_security_key(as_string_view(contents->span()), passphrase);
    };
    return id;
}

namespace {

// What an identity is offered as: its certificate when it has one (the
// identity's key is then the certified key, for fingerprints and signing).
std::string_view offered_type_name(const client_identity& id)
{
    return id.cert ? id.cert->type_name() : id.key->type_name();
}

const bytes& offered_blob(const client_identity& id) { return id.cert ? id.cert->blob() : id.key->blob(); }

// OpenSSH's sshkey_type(): "ED25519", "RSA-CERT".
std::string type_label(const client_identity& id)
{
    std::string s(key_type_short_name(id.key->type()));
    if (id.cert)
        s += "-CERT";
    return s;
}

bool offer_allowed(const client_identity& id, std::string_view accepted)
{
    return id.cert ? certificate_allowed(*id.cert, accepted) : key_type_allowed(*id.key, accepted);
}

std::optional<std::string> offer_algorithm(const client_identity& id, std::string_view accepted,
                                           const std::optional<std::string>& server_sig_algs)
{
    return id.cert ? choose_certificate_algorithm(*id.cert, accepted, server_sig_algs)
                   : choose_signature_algorithm(*id.key, accepted, server_sig_algs);
}

} // namespace

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
        s += type_label(id) + " " + id.key->fingerprint_sha256();
    if (id.user_provided)
        s += " explicit";
    if (id.token)
        s += " token";
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
            const std::string ssh_name(offered_type_name(id));
            if (!offer_allowed(id, config_.pubkey_accepted_algorithms)) {
                log(auth_log_level::debug1, "Skipping " + ssh_name + " key " + id.name +
                                                " - corresponding algorithm not in PubkeyAcceptedAlgorithms");
                continue;
            }
            if (session_.server_sig_algs &&
                !offer_algorithm(id, config_.pubkey_accepted_algorithms, session_.server_sig_algs)) {
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
            auto alg = offer_algorithm(id, config_.pubkey_accepted_algorithms, session_.server_sig_algs);
            if (!alg) {
                log(auth_log_level::debug1, "send_pubkey_test: no mutual signature algorithm");
                s = started::not_sent;
            } else {
                userauth_publickey_data d;
                d.algorithm = *alg;
                d.key_blob = offered_blob(id);
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
    // A certificate algorithm names the certified key's type through its
    // plain signature algorithm (rsa-sha2-512-cert-v01@openssh.com: RSA).
    const auto cert_sig = certificate_signature_algorithm(ok->algorithm);
    auto type = key_type_for_signature_algorithm(cert_sig ? *cert_sig : std::string_view(ok->algorithm));
    if (!type) {
        log(auth_log_level::debug1, "input_userauth_pk_ok: server sent unknown pkalg " +
                                        sanitize_peer_text(ok->algorithm, false));
        done(started::not_sent);
        return;
    }
    std::optional<certificate> cert;
    std::optional<public_key> key;
    if (cert_sig) {
        if (auto c = certificate::from_blob(ok->key_blob)) {
            key = c->key();
            cert.emplace(std::move(*c));
        }
    } else if (auto k = public_key::from_blob(ok->key_blob)) {
        key.emplace(std::move(*k));
    }
    if (!key) {
        log(auth_log_level::debug1, "input_userauth_pk_ok: no key from blob. pkalg " +
                                        sanitize_peer_text(ok->algorithm, false));
        done(started::not_sent);
        return;
    }
    const std::string received(cert ? cert->type_name() : key->type_name());
    if (key->type() != *type) {
        log(auth_log_level::error, "input_userauth_pk_ok: type mismatch for decoded key (received " + received +
                                       ", expected " + sanitize_peer_text(ok->algorithm, false) + ")");
        done(started::not_sent);
        return;
    }
    // The key just offered is at the back of the queue: search from there,
    // which also settles duplicates. A certificate matches only itself, a
    // plain key only a plain identity (OpenSSH's sshkey_equal).
    std::optional<std::size_t> found;
    for (auto it = queue_.rbegin(); it != queue_.rend(); ++it) {
        const auto& id = config_.identities[*it];
        const bool same = cert ? id.cert && id.cert->blob() == cert->blob() : !id.cert && id.key && *id.key == *key;
        if (same) {
            found = *it;
            break;
        }
    }
    if (!found) {
        log(auth_log_level::error, "input_userauth_pk_ok: server replied with unknown key: " +
                                       std::string(key_type_short_name(key->type())) + (cert ? "-CERT " : " ") +
                                       key->fingerprint_sha256());
        done(started::not_sent);
        return;
    }
    log(auth_log_level::debug1, "Server accepts key: " + format_identity(*found));
    done(sign_and_send(*found));
}

// OpenSSH's sign_and_send_pubkey: a certificate is signed by another
// identity holding its key (a key file or an agent key; the first in the
// current trying order), else by a key-less identity whose file name is
// the certificate's (id_filename_matches), else by its own loader.
std::size_t client_auth::certificate_signer(std::size_t i)
{
    const client_identity& id = config_.identities[i];
    std::optional<std::size_t> found;
    for (auto j : queue_) {
        const auto& other = config_.identities[j];
        if (j != i && !other.cert && other.key && *other.key == *id.key) {
            found = j;
            break;
        }
    }
    if (!found && !id.agent) {
        for (auto j : queue_) {
            const auto& other = config_.identities[j];
            if (!other.key && certificate_name_matches(id.name, other.name)) {
                found = j;
                break;
            }
        }
    }
    if (!found) {
        log(auth_log_level::debug1, "sign_and_send_pubkey: no separate private key for certificate \"" + id.name + "\"");
        return i;
    }
    // (OpenSSH names the certificate's identity here, not the signer's.)
    log(auth_log_level::debug2, "sign_and_send_pubkey: using private key \"" + id.name + "\"" +
                                    (id.agent ? " from agent" : "") + " for certificate");
    return *found;
}

client_auth::started client_auth::sign_and_send(std::size_t i)
{
    const client_identity& id = config_.identities[i];
    sign_id_ = i;
    signer_id_ = id.cert ? certificate_signer(i) : i;
    retried_sigtype_ = false;
    load_result_.reset();
    sk_result_.reset();
    const client_identity& signer = config_.identities[signer_id_];
    if (!signer.loaded && !signer.agent && !signer.token && (signer.load || signer.load_security_key))
        return load_signer();
    return sign_loaded(i);
}

client_auth::started client_auth::sign_loaded(std::size_t i)
{
    const client_identity& id = config_.identities[i];
    const client_identity& signer = config_.identities[signer_id_];
    const private_key* priv = signer.loaded ? signer.loaded.get() : load_result_.get();
    const std::shared_ptr<const openssh_security_key> sk = priv == nullptr ? sk_result_ : nullptr;
    std::optional<public_key> derived; // for an identity known only by its file
    if (!id.key) {
        if (priv != nullptr)
            derived = priv->public_part();
        else if (sk)
            derived = sk->key;
        else
            return started::not_sent;
    }
    const public_key& pub = id.key ? *id.key : *derived;
    // A second try after an agent returned the wrong signature type
    // ignores server-sig-algs, as OpenSSH's fallback does.
    const auto server_sig_algs = retried_sigtype_ ? std::nullopt : session_.server_sig_algs;
    auto alg = id.cert ? choose_certificate_algorithm(*id.cert, config_.pubkey_accepted_algorithms, server_sig_algs)
                       : choose_signature_algorithm(pub, config_.pubkey_accepted_algorithms, server_sig_algs);
    if (!alg) {
        log(auth_log_level::error, "sign_and_send_pubkey: no mutual signature supported");
        return started::not_sent;
    }
    userauth_publickey_data d;
    const bool hostbound = config_.hostbound && session_.hostbound_offered && !session_.host_key_blob.empty();
    d.hostbound = hostbound;
    d.has_signature = true;
    d.algorithm = *alg;
    d.key_blob = id.cert ? id.cert->blob() : pub.blob();
    if (hostbound)
        d.host_key_blob = session_.host_key_blob;
    signed_request_ = userauth_request{config_.user, config_.service,
                                       std::string(hostbound ? method_publickey_hostbound : method_publickey),
                                       std::move(d)};
    // The request names the certificate algorithm; the signature is the
    // certified key's own (rsa-sha2-512-cert-v01@openssh.com signs with
    // rsa-sha2-512), as OpenSSH's sshkey_sign makes it.
    const auto plain = id.cert ? certificate_signature_algorithm(*alg) : std::optional<std::string_view>(*alg);
    if (!plain)
        return started::not_sent;
    sign_alg_ = std::string(*plain);
    bytes data = publickey_signed_data(session_.session_id, signed_request_);
    log(auth_log_level::debug3, "sign_and_send_pubkey: signing using " + *alg + " " + pub.fingerprint_sha256());

    // The agent, a PKCS#11 token or a security key's middleware signs in
    // the program.
    if (priv == nullptr && (signer.agent || signer.token || sk)) {
        client_auth_event ev;
        ev.type = client_auth_event_type::sign;
        ev.identity = &signer;
        ev.identity_index = signer_id_;
        ev.algorithm = sign_alg_;
        ev.data = std::move(data);
        if (sk)
            ev.security_key = sk;
        else
            ev.agent_flags = agent::sign_flags_for(sign_alg_);
        events_.push_back(std::move(ev));
        phase_ = phase::signing;
        return started::waiting;
    }
    if (priv == nullptr)
        return started::not_sent;
    auto sig = priv->sign(sign_alg_, data);
    load_result_.reset(); // keep decrypted keys no longer than needed
    if (!sig) {
        log(auth_log_level::error, "sign_and_send_pubkey: signing failed for " +
                                       std::string(key_type_short_name(pub.type())) + " \"" + signer.name +
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
        log(auth_log_level::info,
            "agent key " + type_label(id) + " " + id.key->fingerprint_sha256() + " returned incorrect signature type");
        if (!retried_sigtype_) {
            retried_sigtype_ = true;
            s = sign_loaded(sign_id_);
        } else {
            s = started::not_sent;
        }
    } else {
        s = send_signed(signature_blob);
    }
    sk_result_.reset();
    resume(s);
    drain_queue();
}

void client_auth::signature_failed(std::string_view why)
{
    if (phase_ != phase::signing)
        return;
    phase_ = phase::waiting;
    const client_identity& id = config_.identities[sign_id_];
    const client_identity& signer = config_.identities[signer_id_];
    const key_type t = signer.key ? signer.key->type() : sk_result_ ? sk_result_->key.type() : key_type::ed25519;
    log(auth_log_level::error, "sign_and_send_pubkey: signing failed for " + std::string(key_type_short_name(t)) +
                                   " \"" + signer.name + "\"" + (id.agent ? " from agent" : "") + ": " +
                                   std::string(why));
    sk_result_.reset();
    continue_method();
    drain_queue();
}

// --- key files ---

client_auth::started client_auth::load_identity(std::size_t i)
{
    sign_id_ = i;
    signer_id_ = i;
    return load_signer();
}

client_auth::started client_auth::load_signer()
{
    load_attempt_ = 0;
    load_result_.reset();
    sk_result_.reset();
    sk_loading_ = false;
    return try_load(std::nullopt);
}

client_auth::started client_auth::try_load(std::optional<std::string_view> passphrase)
{
    const client_identity& id = config_.identities[signer_id_];
    // A security-key file has no private key: its record (key handle,
    // flags) stands in for one, and the middleware signs in the program.
    const bool sk_file = id.load_security_key && (sk_loading_ || (id.key && is_security_key(id.key->type())));
    errc error = errc::ok;
    if (sk_file) {
        auto rec = id.load_security_key(passphrase);
        if (rec) {
            if (id.key && !(rec->key == *id.key)) {
                log(auth_log_level::error,
                    "sign_and_send_pubkey: private key " + id.name + " contents do not match public");
                return started::not_sent;
            }
            sk_result_ = std::make_shared<const openssh_security_key>(std::move(*rec));
            return sign_loaded(sign_id_);
        }
        error = rec.error();
    } else {
        if (!id.load)
            return started::not_sent;
        auto key = id.load(passphrase);
        if (key) {
            if (id.key && !(key->public_part() == *id.key)) {
                log(auth_log_level::error,
                    "sign_and_send_pubkey: private key " + id.name + " contents do not match public");
                return started::not_sent;
            }
            load_result_ = std::make_shared<const private_key>(std::move(*key));
            return sign_loaded(sign_id_);
        }
        error = key.error();
        // A file whose public half was unknown may hold a security key.
        if (error == errc::security_key_unsupported && id.load_security_key) {
            sk_loading_ = true;
            return try_load(passphrase);
        }
    }
    switch (error) {
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
    case errc::key_length: // RequiredRSASize (the program's loader checks it)
        log(auth_log_level::debug1, "load_identity_file: Skipping key " + id.name + ": Invalid key length");
        return started::not_sent;
    case errc::io_error:
        log(id.user_provided ? auth_log_level::info : auth_log_level::debug3,
            "no such identity: " + id.name + ": No such file or directory");
        return started::not_sent;
    default:
        log(auth_log_level::error, "Load key \"" + id.name + "\": " + std::string(to_string(error)));
        return started::not_sent;
    }
}

} // namespace longhaul
