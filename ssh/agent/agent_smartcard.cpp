// ssh-agent's PKCS#11 requests (ssh-add -s / -e), as OpenSSH 9.2's agent
// answers them: the module named by its canonical path, allowed by -P and
// not over a forwarded agent unless -O allow-remote-pkcs11, its keys added
// with their labels as comments (the module's path when a key has none)
// and the request's constraints; removal takes every key of the module
// and unloads it. The modules themselves are the program's (pkcs11_hooks).
#include "ssh/agent/agent_core.hpp"

#include "common/auth/agent_protocol.hpp"
#include "common/match.hpp"
#include "common/text.hpp"
#include "common/wire.hpp"
#include "ssh/agent/agent_constraints.hpp"

namespace longhaul::agent {

namespace {

// The module's path as OpenSSH's sshbuf_get_cstring reads it: bounded, no
// NUL inside; nullopt (logged as a parse error of `where`) otherwise.
std::optional<std::string> read_module_path(wire_reader& r, const char* where, logger& log)
{
    const std::string_view path = r.text(max_provider_path);
    if (!r.ok() || path.find('\0') != std::string_view::npos) {
        log.error(std::string(where) + ": parse: invalid format");
        return std::nullopt;
    }
    return std::string(path);
}

} // namespace

std::optional<std::string> agent_core::accepted_module(const std::string& provider, const connection_state& conn,
                                                       bool adding)
{
    const std::string shown = printable(provider.substr(0, 100));
    if (adding && !conn.bindings.empty() && !settings_.allow_remote_providers) {
        log_.verbose("failed PKCS#11 add of \"" + shown + "\": remote provider loading is disabled");
        return std::nullopt;
    }
    std::string error = "not supported";
    std::optional<std::string> canonical;
    if (sk_hooks_.canonical_path)
        canonical = sk_hooks_.canonical_path(provider, error);
    if (!canonical) {
        // (OpenSSH's remove says "add" here too.)
        log_.verbose("failed PKCS#11 add of \"" + shown + "\": realpath: " + error);
        return std::nullopt;
    }
    if (adding && match_pattern_list(*canonical, settings_.allowed_providers, false) != list_match::positive) {
        log_.verbose("refusing PKCS#11 add of \"" + printable(canonical->substr(0, 100)) + "\": provider not allowed");
        return std::nullopt;
    }
    log_.debug(std::string(adding ? "process_add_smartcard_key: add " : "process_remove_smartcard_key: remove ") +
               printable(canonical->substr(0, 100)));
    return canonical;
}

void agent_core::on_add_smartcard(request& q)
{
    q.reply.body = bytes{failure};
    const auto provider = read_module_path(q.r, "process_add_smartcard_key", log_);
    if (!provider)
        return;
    const secret_bytes pin(q.r.string());
    if (!q.r.ok()) {
        log_.error("process_add_smartcard_key: parse: " + std::string(to_string(q.r.error())));
        return;
    }
    // Constraints follow in the constrained form; the plain one has none,
    // and an sk-provider constraint means nothing for a token.
    std::string why;
    auto c = parse_key_constraints(q.r, why);
    if (!c || c->sk_provider) {
        log_.error("process_add_smartcard_key: failed to parse constraints");
        return;
    }
    auto canonical = accepted_module(*provider, q.conn, true);
    if (!canonical)
        return;
    std::optional<std::vector<token_key>> keys;
    if (pkcs11_hooks_.load)
        keys = pkcs11_hooks_.load(*canonical, pin);
    if (!keys)
        return;
    std::optional<agent_clock::time_point> deadline;
    if (c->lifetime)
        deadline = q.now + std::chrono::seconds(*c->lifetime);
    else if (settings_.default_lifetime.count() > 0)
        deadline = q.now + settings_.default_lifetime;
    bool added = false;
    for (auto& k : *keys) {
        // A key the agent holds already keeps its entry (OpenSSH's
        // lookup_identity).
        if (keys_.find(k.key.blob()) != nullptr)
            continue;
        std::string comment = k.label.empty() ? *canonical : std::move(k.label);
        stored_identity id{token_identity{std::move(k.key), *canonical}, std::nullopt, std::move(comment), deadline,
                           c->confirm, c->destinations};
        if (!keys_.add(std::move(id))) {
            log_.error("process_add_smartcard_key: too many keys (" + std::to_string(keystore::max_keys) + ")");
            break;
        }
        added = true;
    }
    q.reply.body = bytes{added ? success : failure};
}

void agent_core::on_remove_smartcard(request& q)
{
    q.reply.body = bytes{failure};
    const auto provider = read_module_path(q.r, "process_remove_smartcard_key", log_);
    if (!provider)
        return;
    (void)q.r.string(); // the PIN, unused
    if (!q.r.finish()) {
        log_.error("process_remove_smartcard_key: parse");
        return;
    }
    auto canonical = accepted_module(*provider, q.conn, false);
    if (!canonical)
        return;
    keys_.remove_provider(*canonical);
    if (pkcs11_hooks_.unload && pkcs11_hooks_.unload(*canonical))
        q.reply.body = bytes{success};
    else
        log_.error("process_remove_smartcard_key: pkcs11_del_provider failed");
}

} // namespace longhaul::agent
