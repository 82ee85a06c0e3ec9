#include "ssh/agent/agent_core.hpp"

#include "common/auth/agent_key_blob.hpp"
#include "common/auth/agent_protocol.hpp"
#include "common/text.hpp"
#include "common/wire.hpp"
#include "ssh/agent/agent_constraints.hpp"

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
        h[add_smartcard_key] = &agent_core::on_smartcard;
        h[remove_smartcard_key] = &agent_core::on_smartcard;
        h[add_smartcard_key_constrained] = &agent_core::on_smartcard;
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
    return key_fingerprint(id.key.public_part(), settings_.hash);
}

void agent_core::on_request_identities(request& q)
{
    if (!q.r.finish()) {
        q.reply.body = status(false);
        return;
    }
    wire_writer w(q.reply.body);
    w.u8(identities_answer).u32(static_cast<std::uint32_t>(keys_.size()));
    for (const auto& id : keys_.identities())
        w.string(id.blob()).string(id.comment);
}

void agent_core::on_sign_request(request& q)
{
    q.reply.body = status(false);
    const byte_span blob = q.r.string();
    const byte_span data = q.r.string();
    const std::uint32_t flags = q.r.u32();
    if (!q.r.finish()) {
        log_.error("process_sign_request: parse");
        return;
    }
    stored_identity* id = keys_.find(blob);
    if (!id) {
        log_.verbose("process_sign_request: key not found");
        return;
    }
    if (id->confirm) {
        const std::string prompt =
            "Allow use of key " + printable(id->comment) + "?\nKey fingerprint " + fingerprint(*id) + ".";
        if (!confirm_ || !confirm_(prompt)) {
            log_.verbose("process_sign_request: user refused key");
            return;
        }
    }
    // A certificate signs with its key: the signature is the plain key's.
    auto sig = id->key.sign(signature_algorithm(id->key.type(), flags), data);
    if (!sig) {
        log_.error("process_sign_request: sshkey_sign: " + std::string(to_string(sig.error())));
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

void agent_core::add(request& q, bool constrained)
{
    q.reply.body = status(false);
    auto decoded = decode_private_key(q.r);
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
    stored_identity id{std::move(decoded->key), std::move(decoded->cert), std::string(comment), std::nullopt,
                       c.confirm};
    // A lifetime constraint wins, even 0 (gone at the next request, as in
    // OpenSSH); without one, ssh-agent -t's default applies.
    std::uint32_t life = 0;
    if (c.lifetime)
        life = *c.lifetime;
    else if (settings_.default_lifetime.count() > 0)
        life = static_cast<std::uint32_t>(settings_.default_lifetime.count());
    if (c.lifetime || life > 0)
        id.deadline = q.now + std::chrono::seconds(life);
    const std::string line = "add " + std::string(id.cert ? id.cert->type_name() : id.key.public_part().type_name()) +
                             " " + fingerprint(id) + " \"" + printable(id.comment.substr(0, 100)) +
                             "\" (life: " + std::to_string(life) + ") (confirm: " + (id.confirm ? "1" : "0") +
                             ") (provider: none) (destination constraints: 0)";
    if (!keys_.add(std::move(id))) {
        log_.error("process_add_identity: too many keys (" + std::to_string(keystore::max_keys) + ")");
        return;
    }
    log_.debug(line);
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
    if (!keys_.remove(blob)) {
        log_.debug("process_remove_identity: key not found");
        return;
    }
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

void agent_core::on_smartcard(request& q)
{
    log_.error("PKCS#11 providers (smartcard keys) are not supported yet");
    q.reply.body = status(false);
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
