// User authentication for the ssh client: the client_auth configuration
// from ssh_config, identities in OpenSSH's order (agent keys, then files),
// passphrase and password prompts, agent signatures. The session layer
// drives the machine; this answers what only the program can.
#include "ssh/detail/ssh_client.hpp"

#include "common/auth/client_certificates.hpp"
#include "common/keys/key_file.hpp"
#include "common/local_name.hpp"
#include "common/text.hpp"
#include "ssh/client_agent_forwarding.hpp"
#include "ssh/prompt/prompt.hpp"
#include "ssh/tokens.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>

namespace longhaul::detail {

void ssh_client::log_algorithms()
{
    const auto& a = core_->algorithms();
    log_.debug("kex: algorithm: " + a.kex);
    log_.debug("kex: host key algorithm: " + a.host_key);
    log_.debug("kex: server->client cipher: " + a.cipher_s2c + " MAC: " + (a.mac_s2c.empty() ? "<implicit>" : a.mac_s2c) +
               " compression: " + a.compression_s2c);
    log_.debug("kex: client->server cipher: " + a.cipher_c2s + " MAC: " + (a.mac_c2s.empty() ? "<implicit>" : a.mac_c2s) +
               " compression: " + a.compression_c2s);
}

namespace {

// OpenSSH's key type numbers (sshkey.h's KEY_*), which its "certificate
// file PATH type N" debug line prints: -1 when nothing was read.
int openssh_cert_type_number(key_type t)
{
    switch (t) {
    case key_type::rsa: return 4;     // KEY_RSA_CERT
    case key_type::ed25519: return 7; // KEY_ED25519_CERT
    case key_type::sk_ecdsa_p256: return 11; // KEY_ECDSA_SK_CERT
    case key_type::sk_ed25519: return 13;    // KEY_ED25519_SK_CERT
    default: return 6;                // KEY_ECDSA_CERT
    }
}

// A user certificate from `path` (or `path`.pub), or nullopt with the reason
// at debug level (a CertificateFile's line as OpenSSH prints it; a missing
// "<identity>-cert.pub" is the usual case, not news). A host certificate
// is skipped as OpenSSH skips it.
std::optional<certificate> load_user_certificate(logger& log, const std::string& path, const std::string& name,
                                                 bool explicit_file)
{
    auto cert = load_certificate_file(path);
    if (explicit_file)
        log.debug("certificate file " + path + " type " +
                  std::to_string(cert ? openssh_cert_type_number(cert->key().type()) : -1));
    if (!cert) {
        if (cert.error() != errc::io_error)
            log.debug("load_public_identity_files: " + path + ": " + std::string(to_string(cert.error())) +
                      (cert.error() == errc::unsupported ? " (not a certificate)" : ""));
        return std::nullopt;
    }
    if (cert->kind() != cert_kind::user) {
        log.debug("pubkey_prepare: ignoring certificate " + name + ": not a user certificate");
        return std::nullopt;
    }
    return std::move(*cert);
}

} // namespace

agent_binding ssh_client::agent_binding_of() const
{
    agent_binding b;
    if (const auto& key = core_->server_host_key())
        b.host_key = key->blob();
    // A host certificate is what the host presented: OpenSSH binds the
    // agent to it (initial_hostkey), and an agent whose key is restricted to
    // hosts of a CA (ssh-add -h) signs only when it sees the certificate.
    if (const auto& cert = core_->server_host_certificate())
        b.host_key = cert->blob();
    const byte_span id = core_->session_id();
    b.session_id.assign(id.begin(), id.end());
    const byte_span sig = core_->server_signature();
    b.signature.assign(sig.begin(), sig.end());
    return b;
}

std::vector<client_identity> ssh_client::collect_identities()
{
    std::vector<client_identity> files;
    if (cfg_.pubkey_authentication.value_or(pubkey_authentication::all) == pubkey_authentication::no)
        return files;
    // CertificateFile entries come first, before agent keys, each signed by
    // the identity holding its key; without any, every identity file's
    // "<path>-cert.pub" is offered after the file's own key (OpenSSH's
    // load_public_identity_files and pubkey_prepare).
    // IdentityFile and CertificateFile expand alike; one that cannot is
    // logged and skipped.
    const auto expand = [this](const std::string& configured) -> std::optional<std::string> {
        try {
            return expand_identity_path(configured, cfg_, *inv_.env);
        } catch (const std::exception& e) {
            log_.error(e.what());
            return std::nullopt;
        }
    };
    const int required_rsa = cfg_.required_rsa_size.value_or(1024);
    std::vector<client_identity> certs;
    for (const auto& f : cfg_.certificate_files) {
        const auto path = expand(f.path);
        if (!path)
            continue;
        if (auto cert = load_user_certificate(log_, *path, *path, true))
            certs.push_back(identity_from_certificate(std::move(*cert), *path, f.user_provided, nullptr));
    }
    // PKCS11Provider's keys come before the identity files (OpenSSH's
    // load_public_identity_files).
    files = token_identities();
    for (const auto& f : cfg_.identity_files) {
        const auto expanded = expand(f.path);
        if (!expanded)
            continue;
        const std::string& path = *expanded;
        client_identity id = identity_from_key_file(path, f.user_provided);
        // RequiredRSASize: a public key too short is dropped, loudly (so the
        // private key is tried, and skipped, as OpenSSH does).
        if (id.key && !rsa_size_allowed(*id.key, required_rsa)) {
            log_.error("load pubkey \"" + path + "\": " + std::string(to_string(errc::key_length)));
            id.key.reset();
        }
        // As ssh: a private key others can read is refused, loudly.
        id.load = [inner = id.load, path, required_rsa,
                   this](std::optional<std::string_view> passphrase) -> result<private_key> {
            auto warning = private_key_permission_warning(path);
            if (!warning.empty()) {
                for (const auto& line : warning)
                    log_.error(line);
                return errc::bad_permissions;
            }
            auto key = inner(passphrase);
            if (key && !rsa_size_allowed(key->public_part(), required_rsa))
                return errc::key_length;
            if (key)
                maybe_add_key_to_agent(path, *key);
            return key;
        };
        id.load_security_key = [inner = id.load_security_key, path,
                                 this](std::optional<std::string_view> passphrase) -> result<openssh_security_key> {
            auto warning = private_key_permission_warning(path);
            if (!warning.empty()) {
                for (const auto& line : warning)
                    log_.error(line);
                return errc::bad_permissions;
            }
            return inner(passphrase);
        };
        auto load = id.load;
        auto load_sk = id.load_security_key;
        files.push_back(std::move(id));
        if (!cfg_.certificate_files.empty())
            continue;
        if (auto cert = load_user_certificate(log_, path + "-cert", path, false)) {
            // (A security-key certificate signs through its file's record
            // when no other identity holds the key.)
            auto cid = identity_from_certificate(std::move(*cert), path, f.user_provided, std::move(load));
            cid.load_security_key = std::move(load_sk);
            files.push_back(std::move(cid));
        }
    }
    // OpenSSH's pubkey_prepare: agent keys first (file keys the agent holds
    // are used through it), then the remaining files; IdentitiesOnly drops
    // agent keys that no IdentityFile names.
    std::vector<client_identity> out = std::move(certs);
    const std::string sock = agent_socket_path(cfg_);
    if (!sock.empty()) {
        auto a = agent_client::connect(sock);
        if (!a) {
            log_.debug("get_agent_identities: ssh_get_authentication_socket: " + std::string(to_string(a.error())));
        } else {
            agent_.emplace(std::move(*a));
            bind_agent(*agent_, agent_binding_of(), false, log_, "get_agent_identities");
            auto ids = agent_->request_identities();
            if (ids) {
                for (const auto& id : *ids) {
                    // Keys, and the user certificates ssh-add loaded with
                    // them; other types are skipped.
                    std::optional<client_identity> ci;
                    if (id.key)
                        ci = identity_from_agent(id);
                    else
                        ci = identity_from_agent_certificate(id);
                    if (!ci)
                        continue;
                    if (ci->key && !rsa_size_allowed(*ci->key, required_rsa)) {
                        log_.debug("pubkey_prepare: ignoring " +
                                   std::string(ci->cert ? ci->cert->type_name() : ci->key->type_name()) +
                                   " agent key: " + std::string(to_string(errc::key_length)));
                        continue;
                    }
                    // A certificate matches only itself, a key only the
                    // plain key (OpenSSH's sshkey_equal).
                    auto match = std::find_if(files.begin(), files.end(), [&](const client_identity& f) {
                        if (ci->cert)
                            return f.cert && f.cert->blob() == ci->cert->blob();
                        return !f.cert && f.key && *f.key == *ci->key;
                    });
                    if (match != files.end()) {
                        ci->name = match->name;
                        ci->user_provided = match->user_provided;
                        files.erase(match);
                        out.push_back(std::move(*ci));
                    } else if (!cfg_.identities_only.value_or(false)) {
                        out.push_back(std::move(*ci));
                    }
                }
            }
        }
    }
    for (auto& f : files)
        out.push_back(std::move(f));
    return out;
}

void ssh_client::on_first_kex()
{
    log_algorithms();
    client_auth_config ac;
    ac.user = cfg_.user.value_or(inv_.env->local_user);
    ac.host = host_;
    ac.host_key_alias = cfg_.host_key_alias.value_or("");
    ac.remote_ip = stream_.peer_address;
    ac.remote_port = port_;
    ac.via_proxy = stream_.proxy_pid > 0;
    ac.preferred_authentications = cfg_.preferred_authentications.value_or(ac.preferred_authentications);
    ac.pubkey_authentication =
        cfg_.pubkey_authentication.value_or(pubkey_authentication::all) != pubkey_authentication::no;
    ac.hostbound = cfg_.pubkey_authentication.value_or(pubkey_authentication::all) != pubkey_authentication::unbound;
    ac.password_authentication = cfg_.password_authentication.value_or(true);
    ac.kbd_interactive_authentication = cfg_.kbd_interactive_authentication.value_or(true);
    ac.kbd_interactive_devices = cfg_.kbd_interactive_devices.value_or("");
    ac.number_of_password_prompts = cfg_.number_of_password_prompts.value_or(3);
    ac.batch_mode = cfg_.batch_mode.value_or(false);
    if (cfg_.pubkey_accepted_algorithms)
        ac.pubkey_accepted_algorithms = *cfg_.pubkey_accepted_algorithms;
    ac.identities = collect_identities();
    ac.hostbased_authentication = cfg_.hostbased_authentication.value_or(false);
    if (ac.hostbased_authentication) {
        if (cfg_.hostbased_accepted_algorithms)
            ac.hostbased_accepted_algorithms = *cfg_.hostbased_accepted_algorithms;
        ac.host_keys = hostbased_keys();
        ac.local_host = local_host_name(stream_.fd);
        ac.local_user = inv_.env->local_user;
    }
    layer_->start_client_auth(std::move(ac));
}

void ssh_client::on_auth_event(const client_auth_event& ev)
{
    switch (ev.type) {
    case client_auth_event_type::log: log_.log(to_log_level(ev.level), ev.text); break;
    case client_auth_event_type::banner:
        if (log_.enabled(log_level::info)) {
            (void)!::write(STDERR_FILENO, ev.text.data(), ev.text.size());
        }
        break;
    case client_auth_event_type::prompt: answer_prompt(ev); break;
    case client_auth_event_type::keysign: sign_with_keysign(ev); break;
    case client_auth_event_type::sign:
        if (ev.security_key)
            sign_with_security_key(ev);
        else if (ev.identity != nullptr && ev.identity->token)
            sign_with_token(ev);
        else
            sign_with_agent(ev);
        break;
    case client_auth_event_type::failed:
        log_.error(ev.text);
        finish(255);
        break;
    case client_auth_event_type::disconnect: // the session layer told the transport
        log_.error(ev.text);
        finish(255);
        break;
    default: break;
    }
}

void ssh_client::answer_prompt(const client_auth_event& ev)
{
    if (ev.kind == prompt_kind::kbdint) {
        if (!ev.name.empty())
            std::cerr << ev.name << "\n";
        if (!ev.instruction.empty())
            std::cerr << ev.instruction << "\n";
    }
    std::vector<secret_bytes> answers;
    for (const auto& p : ev.prompts) {
        auto a = read_passphrase(p.text, p.echo ? prompt_echo::on : prompt_echo::off);
        if (!a) {
            layer_->client_auth_machine()->cancel_prompt();
            return;
        }
        answers.push_back(std::move(*a));
    }
    layer_->client_auth_machine()->answer_prompt(std::move(answers));
}

// OpenSSH's maybe_add_key_to_agent(): with AddKeysToAgent yes, confirm
// (each use confirmed by the agent) or ask (askpass asks first), a key
// loaded from its file goes to the agent, for AddKeysToAgent's lifetime.
void ssh_client::maybe_add_key_to_agent(const std::string& path, const private_key& key)
{
    const auto mode = cfg_.add_keys_to_agent.value_or(add_keys_to_agent::no);
    if (mode == add_keys_to_agent::no)
        return;
    const std::string sock = agent_socket_path(cfg_);
    auto agent = sock.empty() ? result<agent_client>(errc::io_error) : agent_client::connect(sock);
    if (!agent) {
        log_.debug3("no authentication agent, not adding key");
        return;
    }
    const std::string comment = key.comment().empty() ? path : key.comment();
    if (mode == add_keys_to_agent::ask && !ask_permission("Add key " + path + " (" + comment + ") to agent?")) {
        log_.debug3("user denied adding this key");
        return;
    }
    agent::key_constraints c;
    if (cfg_.add_keys_to_agent_lifespan > 0)
        c.lifetime_seconds = static_cast<std::uint32_t>(cfg_.add_keys_to_agent_lifespan);
    c.confirm = mode == add_keys_to_agent::confirm;
    if (auto r = agent->add_identity(key, nullptr, comment, c); r)
        log_.debug("identity added to agent: " + path);
    else
        log_.debug("could not add identity to agent: " + path + " (" + std::string(to_string(r.error())) + ")");
}

void ssh_client::sign_with_agent(const client_auth_event& ev)
{
    if (!agent_ || ev.identity == nullptr || !ev.identity->key) {
        layer_->client_auth_machine()->signature_failed("agent unavailable");
        return;
    }
    // A certificate the agent holds is named by its own blob: the agent
    // may hold it without the plain key (ssh-add -d of the key alone).
    const bytes& blob = ev.identity->cert ? ev.identity->cert->blob() : ev.identity->key->blob();
    auto sig = agent_->sign(blob, ev.data, ev.agent_flags);
    if (!sig) {
        layer_->client_auth_machine()->signature_failed(to_string(sig.error()));
        return;
    }
    layer_->client_auth_machine()->answer_signature(*sig);
}

} // namespace longhaul::detail

namespace longhaul::detail {

void ssh_client::sign_with_security_key(const client_auth_event& ev)
{
    if (!sk_signer_)
        sk_signer_.emplace(resolve_sk_provider(cfg_.security_key_provider, log_), cfg_.batch_mode.value_or(false),
                           cfg_.fingerprint_hash.value_or(key_fingerprint_hash::sha256), log_);
    const std::string file = ev.identity != nullptr ? ev.identity->name : std::string();
    auto sig = sk_signer_->sign(*ev.security_key, file, ev.data);
    if (auto* why = std::get_if<std::string>(&sig)) {
        layer_->client_auth_machine()->signature_failed(*why);
        return;
    }
    layer_->client_auth_machine()->answer_signature(std::get<bytes>(sig));
}


// PKCS11Provider (-I): the module's keys, named by their labels, as
// OpenSSH's ssh loads them (a PIN asked only when a signature or a token
// that hides its keys needs one, never in batch mode).
std::vector<client_identity> ssh_client::token_identities()
{
    std::vector<client_identity> ids;
    if (!cfg_.pkcs11_provider)
        return ids;
    // Loaded once per connection; the identities are listed again from it.
    if (!pkcs11_) {
        pkcs11_provider::options opt;
        opt.interactive = !cfg_.batch_mode.value_or(false);
        opt.read_pin = [](const std::string& prompt) { return read_passphrase(prompt, prompt_echo::off); };
        pkcs11_ = pkcs11_provider::load(*cfg_.pkcs11_provider, std::move(opt), log_);
    }
    if (!pkcs11_)
        return ids;
    for (const auto& k : pkcs11_->keys()) {
        client_identity id;
        id.name = k.label;
        id.token = true;
        id.key = k.key;
        ids.push_back(std::move(id));
    }
    return ids;
}

void ssh_client::sign_with_token(const client_auth_event& ev)
{
    const pkcs11_key* key = nullptr;
    if (pkcs11_ && ev.identity->key)
        for (const auto& k : pkcs11_->keys())
            if (k.key == *ev.identity->key)
                key = &k;
    auto sig = key != nullptr ? pkcs11_->sign(*key, ev.algorithm, ev.data) : std::nullopt;
    if (!sig) {
        // OpenSSH's words: its token signatures fail inside libcrypto's
        // RSA/EC methods.
        layer_->client_auth_machine()->signature_failed("error in libcrypto");
        return;
    }
    layer_->client_auth_machine()->answer_signature(*sig);
}

} // namespace longhaul::detail
