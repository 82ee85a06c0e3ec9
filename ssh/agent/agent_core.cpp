#include "ssh/agent/agent_core.hpp"

#include "common/auth/agent_key_blob.hpp"
#include "common/auth/agent_protocol.hpp"
#include "common/keys/certificate.hpp"
#include "common/match.hpp"
#include "common/text.hpp"
#include "common/wire.hpp"
#include "ssh/agent/agent_constraints.hpp"

#include <strings.h>

namespace longhaul::agent {

namespace {

bytes status(bool ok)
{
    return bytes{ok ? success : failure};
}

// The signature algorithm for a SIGN_REQUEST (OpenSSH's agent_decode_alg):
// RSA keys follow the flags, SHA-256 first, and default to ssh-rsa; other
// keys have one algorithm.
std::string_view signature_algorithm(key_type t, std::uint32_t flags)
{
    if (t == key_type::rsa) {
        if (flags & rsa_sha2_256)
            return "rsa-sha2-256";
        if (flags & rsa_sha2_512)
            return "rsa-sha2-512";
        return "ssh-rsa";
    }
    return signature_algorithms_for(t).front();
}

// The identity's key: a private key, or a security key with its provider
// (none: it was added without one).
decltype(stored_identity::key)
private_key_or_security_key(std::variant<private_key, openssh_security_key> key, const std::optional<std::string>& provider)
{
    if (auto* k = std::get_if<private_key>(&key))
        return std::move(*k);
    return security_key_identity{std::move(std::get<openssh_security_key>(key)), provider.value_or(std::string())};
}

// Host certificates in session bindings are checked against the wall
// clock, as OpenSSH does (the core's own clock is monotonic).
std::uint64_t wall_now()
{
    const auto t = std::chrono::system_clock::now().time_since_epoch();
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(t).count());
}

} // namespace

agent_core::agent_core(agent_settings settings, random_source& random, confirm_fn confirm, logger& log)
    : settings_(settings), random_(random), confirm_(std::move(confirm)), log_(log)
{
}

const std::array<agent_core::handler, 256>& agent_core::table()
{
    static const std::array<handler, 256> t = [] {
        std::array<handler, 256> h{};
        h[request_identities] = &agent_core::on_request_identities;
        h[sign_request] = &agent_core::on_sign_request;
        h[add_identity] = &agent_core::on_add_identity;
        h[add_id_constrained] = &agent_core::on_add_id_constrained;
        h[remove_identity] = &agent_core::on_remove_identity;
        h[remove_all_identities] = &agent_core::on_remove_all_identities;
        h[agent::lock] = &agent_core::on_lock;
        h[agent::unlock] = &agent_core::on_unlock;
        h[add_smartcard_key] = &agent_core::on_add_smartcard;
        h[remove_smartcard_key] = &agent_core::on_remove_smartcard;
        h[add_smartcard_key_constrained] = &agent_core::on_add_smartcard;
        h[agent::extension] = &agent_core::on_extension;
        return h;
    }();
    return t;
}

std::optional<agent_clock::time_point> agent_core::expire(agent_clock::time_point now)
{
    if (std::size_t n = keys_.expire(now))
        log_.debug("expired " + std::to_string(n) + " key(s)");
    return keys_.next_deadline();
}

agent_reply agent_core::handle(byte_span body, connection_state& conn, agent_clock::time_point now)
{
    agent_reply reply;
    expire(now);
    wire_reader r(body);
    const std::uint8_t type = r.u8();
    if (!r.ok()) {
        log_.error("process_message: parse: empty message");
        reply.close = true;
        return reply;
    }
    log_.debug("process_message: type " + std::to_string(type));
    // A locked agent answers only UNLOCK, and lists no identities.
    if (lock_.locked() && type != agent::unlock) {
        if (type == request_identities)
            wire_writer(reply.body).u8(identities_answer).u32(0);
        else
            reply.body = status(false);
        return reply;
    }
    handler h = table()[type];
    if (!h) {
        log_.error("Unknown message " + std::to_string(type));
        reply.body = status(false);
        return reply;
    }
    request q{r, conn, now, reply};
    (this->*h)(q);
    return reply;
}

std::string agent_core::fingerprint(const stored_identity& id) const
{
    return key_fingerprint(id.public_part(), settings_.hash);
}

void agent_core::on_request_identities(request& q)
{
    if (!q.r.finish()) {
        q.reply.body = status(false);
        return;
    }
    // Keys whose destination constraints do not allow this connection
    // are left out (OpenSSH 9.2's process_request_identities).
    bytes listed;
    wire_writer l(listed);
    std::uint32_t n = 0;
    for (const auto& id : keys_.identities()) {
        if (!usable(id, q.conn, nullptr))
            continue;
        l.string(id.blob()).string(id.comment);
        ++n;
    }
    wire_writer(q.reply.body).u8(identities_answer).u32(n).raw(listed);
}

bool agent_core::usable(const stored_identity& id, const connection_state& conn, const std::string* user)
{
    auto no = identity_permitted(id.destinations, conn, user, wall_now());
    if (!no)
        return true;
    std::string m = no->message;
    if (no->level == log_level::debug2)
        m = "permitted_by_dest_constraints: " + std::string(id.public_part().type_name()) + " identity \"" +
            printable(id.comment) + "\" " + m;
    log_.log(no->level, m);
    return false;
}

bool agent_core::constrained_sign_allowed(const stored_identity& id, byte_span data, const connection_state& conn,
                                          std::string& dest)
{
    const std::string what = "process_sign_request2: ";
    if (conn.bindings.empty()) {
        log_.info(what + "refusing use of destination-constrained key to sign on unbound connection");
        return false;
    }
    auto ua = parse_userauth_request(data, id.blob());
    if (!ua) {
        log_.info(what + "refusing use of destination-constrained key to sign an unidentified signature");
        return false;
    }
    const std::string fp = fingerprint(id);
    log_.debug(what + fp + " user=" + printable(ua->user));
    if (!usable(id, conn, &ua->user))
        return false;
    // ssh binds the session immediately before userauth: the request must
    // be for the most recent binding.
    const session_binding& last = conn.bindings.back();
    if (ua->session_id != last.session_id) {
        log_.error(what + "unexpected session ID (" + std::to_string(conn.bindings.size()) +
                   " listed) on signature request for target user " + printable(ua->user) + " with key " +
                   std::string(id.public_part().type_name()) + " " + fp);
        return false;
    }
    // The host key in the request must be the bound one; only the first
    // hop may use plain "publickey" (no host key named).
    if (conn.bindings.size() > 1 && !ua->host_key_blob) {
        log_.error(what + "refusing use of destination-constrained key: no hostkey recorded in signature for "
                          "forwarded connection");
        return false;
    }
    if (ua->host_key_blob && *ua->host_key_blob != last.host_key_blob) {
        log_.error(what + "refusing use of destination-constrained key: mismatch between hostkey in request and "
                          "most recently bound session");
        return false;
    }
    dest = "public key authentication request for user \"" + printable(ua->user) + "\" to listed host";
    return true;
}

namespace {

// sshkey_type() of a key blob for a log line: "ED25519", "ECDSA-SK-CERT";
// "unknown" for a name this build does not know.
std::string blob_type_name(byte_span blob)
{
    wire_reader r(blob);
    const std::string_view name = r.text(128);
    if (!r.ok())
        return "unknown";
    if (auto t = key_type_from_name(name))
        return std::string(key_type_short_name(*t));
    if (auto t = certificate_key_type(name))
        return std::string(key_type_short_name(*t)) + "-CERT";
    return "unknown";
}

} // namespace

void agent_core::on_sign_request(request& q)
{
    // OpenSSH's debug lines around a signature; the second comes before
    // the reply whatever it is ("good signature" on a failure too).
    log_.debug("process_sign_request2: entering");
    struct at_exit {
        logger& log;
        ~at_exit() { log.debug("process_sign_request2: good signature"); }
    } done{log_};
    q.reply.body = status(false);
    const byte_span blob = q.r.string();
    const byte_span data = q.r.string();
    const std::uint32_t flags = q.r.u32();
    if (!q.r.finish()) {
        log_.error("process_sign_request2: parse");
        return;
    }
    stored_identity* id = keys_.find(blob);
    if (!id) {
        log_.verbose("process_sign_request2: " + blob_type_name(blob) + " key not found");
        return;
    }
    std::string dest;
    if (!id->destinations.empty() && !constrained_sign_allowed(*id, data, q.conn, dest))
        return;
    if (id->confirm) {
        const std::string prompt = "Allow use of key " + printable(id->comment) + "?\nKey fingerprint " +
                                   fingerprint(*id) + "." + (dest.empty() ? "" : "\n" + dest);
        if (!confirm_ || !confirm_(prompt)) {
            log_.verbose("process_sign_request2: user refused key");
            return;
        }
    }
    if (id->security_key()) {
        auto blob = sign_with_security_key(*id, data, dest);
        if (!blob)
            return;
        q.reply.body.clear();
        wire_writer(q.reply.body).u8(sign_response).string(*blob);
        return;
    }
    if (const auto* t = id->token()) {
        std::optional<bytes> blob;
        if (pkcs11_hooks_.sign)
            blob = pkcs11_hooks_.sign(t->provider, t->key, signature_algorithm(t->key.type(), flags), data);
        if (!blob) {
            log_.error("process_sign_request2: sshkey_sign: error in libcrypto");
            return;
        }
        q.reply.body.clear();
        wire_writer(q.reply.body).u8(sign_response).string(*blob);
        return;
    }
    // A certificate signs with its key: the signature is the plain key's.
    const auto& key = std::get<private_key>(id->key);
    auto sig = key.sign(signature_algorithm(key.type(), flags), data);
    if (!sig) {
        log_.error("process_sign_request2: sshkey_sign: " + std::string(to_string(sig.error())));
        return;
    }
    q.reply.body.clear();
    wire_writer(q.reply.body).u8(sign_response).string(*sig);
}

void agent_core::on_add_identity(request& q)
{
    add(q, false);
}

void agent_core::on_add_id_constrained(request& q)
{
    add(q, true);
}

// OpenSSH's check_websafe_message_contents: an SSH login request for
// this key, or SSHSIG data (magic, namespace, reserved, hash algorithm,
// hash, nothing after).
static bool websafe_message(byte_span data, byte_span key_blob, logger& log)
{
    if (parse_userauth_request(data, key_blob)) {
        log.debug("check_websafe_message_contents: signed data matches public key userauth request");
        return true;
    }
    static constexpr std::string_view magic = "SSHSIG";
    if (data.size() >= magic.size() && as_string_view(data.first(magic.size())) == magic) {
        wire_reader r(data.subspan(magic.size()));
        (void)r.text();
        (void)r.string();
        (void)r.text();
        (void)r.string();
        if (r.finish()) {
            log.debug("check_websafe_message_contents: signed data matches SSHSIG signature request");
            return true;
        }
    }
    return false;
}

std::optional<bytes> agent_core::sign_with_security_key(const stored_identity& id, byte_span data,
                                                        const std::string& dest)
{
    const security_key_identity& sk = *id.security_key();
    if (settings_.restrict_websafe && !sk.key.key.application().starts_with("ssh:") &&
        !websafe_message(data, id.blob(), log_)) {
        log_.error("web-origin key attempting to sign non-SSH message");
        return std::nullopt;
    }
    if (!sk_hooks_.sign) {
        log_.error("process_sign_request2: sshkey_sign: security keys are not supported by this agent");
        return std::nullopt;
    }
    auto r = sk_hooks_.sign(sk, data, dest.empty() ? std::string() : "\n" + dest);
    if (auto* why = std::get_if<std::string>(&r)) {
        log_.error("process_sign_request2: sshkey_sign: " + *why);
        return std::nullopt;
    }
    return std::move(std::get<bytes>(r));
}

std::optional<std::string> agent_core::accepted_provider(const std::string& provider, const public_key& key,
                                                         bool certified, const connection_state& conn)
{
    if (!is_security_key(key.type())) {
        log_.error("Cannot add provider: " + std::string(key_type_short_name(key.type())) + (certified ? "-CERT" : "") +
                   " is not an authenticator-hosted key");
        return std::nullopt;
    }
    if (strcasecmp(provider.c_str(), "internal") == 0) {
        log_.debug("process_add_identity: internal provider");
        return provider;
    }
    const std::string shown = printable(std::string_view(provider).substr(0, 100));
    if (!conn.bindings.empty() && !settings_.allow_remote_providers) {
        log_.verbose("failed add of SK provider \"" + shown + "\": remote addition of providers is disabled");
        return std::nullopt;
    }
    std::string error = "not supported by this agent";
    std::optional<std::string> canonical;
    if (sk_hooks_.canonical_path)
        canonical = sk_hooks_.canonical_path(provider, error);
    if (!canonical) {
        log_.verbose("failed provider \"" + shown + "\": realpath: " + error);
        return std::nullopt;
    }
    if (match_pattern_list(*canonical, settings_.allowed_providers, false) != list_match::positive) {
        log_.error("Refusing add key: provider " + printable(*canonical) + " not allowed");
        return std::nullopt;
    }
    return canonical;
}

void agent_core::add(request& q, bool constrained)
{
    q.reply.body = status(false);
    auto decoded = decode_identity(q.r);
    const std::string_view comment = q.r.text();
    if (!decoded || !q.r.ok()) {
        log_.error("process_add_identity: parse: " +
                   std::string(to_string(decoded ? q.r.error() : decoded.error())));
        return;
    }
    add_constraints c;
    if (constrained) {
        std::string why;
        auto parsed = parse_key_constraints(q.r, why);
        if (!parsed) {
            log_.error("process_add_identity: " + why);
            return;
        }
        c = *parsed;
    } else if (!q.r.finish()) {
        log_.error("process_add_identity: parse: trailing data");
        return;
    }
    std::optional<std::string> provider;
    if (c.sk_provider) {
        const public_key& pk = std::holds_alternative<private_key>(decoded->key)
                                   ? std::get<private_key>(decoded->key).public_part()
                                   : std::get<openssh_security_key>(decoded->key).key;
        provider = accepted_provider(*c.sk_provider, pk, decoded->cert.has_value(), q.conn);
        if (!provider)
            return;
    }
    stored_identity id{private_key_or_security_key(std::move(decoded->key), provider), std::move(decoded->cert),
                       std::string(comment), std::nullopt, c.confirm, std::move(c.destinations)};
    // A lifetime constraint wins, even 0 (gone at the next request, as in
    // OpenSSH); without one, ssh-agent -t's default applies.
    std::uint32_t life = 0;
    if (c.lifetime)
        life = *c.lifetime;
    else if (settings_.default_lifetime.count() > 0)
        life = static_cast<std::uint32_t>(settings_.default_lifetime.count());
    if (c.lifetime || life > 0)
        id.deadline = q.now + std::chrono::seconds(life);
    const std::string line = "add " + std::string(id.cert ? id.cert->type_name() : id.public_part().type_name()) +
                             " " + fingerprint(id) + " \"" + printable(id.comment.substr(0, 100)) +
                             "\" (life: " + std::to_string(life) + ") (confirm: " + (id.confirm ? "1" : "0") +
                             ") (provider: " + (provider ? printable(*provider) : std::string("none")) +
                             ") (destination constraints: " +
                             std::to_string(id.destinations.size()) + ")";
    for (const auto& d : id.destinations)
        log_.debug2("process_add_identity: constraint " + printable(describe(d)));
    if (!keys_.add(std::move(id))) {
        log_.error("process_add_identity: too many keys (" + std::to_string(keystore::max_keys) + ")");
        return;
    }
    log_.debug("process_add_identity: " + line);
    q.reply.body = status(true);
}

void agent_core::on_remove_identity(request& q)
{
    q.reply.body = status(false);
    const byte_span blob = q.r.string();
    if (!q.r.finish()) {
        log_.error("process_remove_identity: parse");
        return;
    }
    const stored_identity* id = keys_.find(blob);
    if (!id) {
        log_.debug("process_remove_identity: key not found");
        return;
    }
    // A key this connection may not see cannot be removed through it.
    if (!usable(*id, q.conn, nullptr))
        return;
    keys_.remove(blob);
    q.reply.body = status(true);
}

void agent_core::on_remove_all_identities(request& q)
{
    if (!q.r.finish()) {
        q.reply.body = status(false);
        return;
    }
    keys_.clear();
    q.reply.body = status(true);
}

void agent_core::on_lock(request& q)
{
    lock_or_unlock(q, true);
}

void agent_core::on_unlock(request& q)
{
    lock_or_unlock(q, false);
}

void agent_core::lock_or_unlock(request& q, bool want_lock)
{
    q.reply.body = status(false);
    const byte_span passphrase = q.r.string();
    if (!q.r.finish()) {
        log_.error("process_lock_agent: parse");
        return;
    }
    if (passphrase.empty()) {
        log_.debug("empty password not supported");
        return;
    }
    if (want_lock) {
        if (lock_.lock(passphrase, random_)) {
            log_.debug("Locking agent");
            q.reply.body = status(true);
        }
        return;
    }
    if (!lock_.locked())
        return;
    if (lock_.unlock(passphrase)) {
        log_.debug("agent unlocked");
        q.reply.body = status(true);
        return;
    }
    q.reply.delay = lock_.delay();
    log_.debug("unlock failed, delaying " + std::to_string(q.reply.delay.count()) + " ms");
}

void agent_core::on_extension(request& q)
{
    q.reply.body = status(false);
    const std::string_view name = q.r.text(1024);
    if (!q.r.ok()) {
        log_.error("process_extension: parse");
        return;
    }
    if (name == session_bind_extension) {
        q.conn.bind_attempted = true;
        std::string why;
        auto b = parse_session_bind(q.r, why);
        if (b) {
            const std::string what = std::string(b->host_key.type_name()) + " " +
                                     key_fingerprint(b->host_key, settings_.hash) +
                                     " (forwarded: " + (b->forwarded ? "yes" : "no") + ")";
            if (record_session_bind(q.conn, std::move(*b), why)) {
                log_.debug("process_ext_session_bind: recorded " + what);
                q.reply.body = status(true);
                return;
            }
        }
        log_.error("process_ext_session_bind: " + why);
        return;
    }
    if (name == query_extension) {
        // draft-miller-ssh-agent "query": SUCCESS, then the names.
        if (!q.r.finish())
            return;
        q.reply.body.clear();
        wire_writer(q.reply.body).u8(success).string(query_extension).string(session_bind_extension);
        return;
    }
    log_.debug("process_extension: unsupported extension \"" + printable(name) + "\"");
}

} // namespace longhaul::agent
