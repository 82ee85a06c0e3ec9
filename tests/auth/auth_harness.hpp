// In-memory wiring of a client_auth and a server_auth: payloads move
// between the two machines, scripted responders answer prompts, password
// checks, keyboard-interactive rounds and agent signatures (optionally a
// few rounds late, to exercise the asynchronous paths), and every event is
// recorded for the tests to inspect.
#pragma once

#include "common/auth/client_auth.hpp"
#include "common/auth/server_auth.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "tests/file_text.hpp"
#include "tests/secret_text.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::test {

inline const std::string test_ip = "127.0.0.1";
inline constexpr int test_port = 50000;

// One key of each type, generated once.
inline std::shared_ptr<const private_key> test_key(key_type t, int variant = 0)
{
    static std::map<std::pair<key_type, int>, std::shared_ptr<const private_key>> keys;
    auto& k = keys[{t, variant}];
    if (!k) {
        auto g = private_key::generate(t, t == key_type::rsa ? 2048 : 0);
        REQUIRE(g.has_value());
        k = std::make_shared<const private_key>(std::move(*g));
    }
    return k;
}

inline client_identity loaded_identity(std::shared_ptr<const private_key> k, std::string name)
{
    client_identity id;
    id.name = std::move(name);
    id.key = k->public_part();
    id.loaded = std::move(k);
    return id;
}

inline client_identity agent_identity(const std::shared_ptr<const private_key>& k, std::string comment)
{
    client_identity id;
    id.name = std::move(comment);
    id.agent = true;
    id.key = k->public_part();
    return id;
}

// tests/data/certs: host_ed25519 and its certificate, signed by ca_ed25519
// for host.example and 127.0.0.1.
struct host_certificate_fixture {
    std::shared_ptr<const private_key> key;
    std::shared_ptr<const certificate> cert;
};
inline host_certificate_fixture load_host_certificate_fixture()
{
    const std::string certs = std::string(LONGHAUL_TEST_DATA) + "/certs/";
    auto priv = load_private_key_file(certs + "host_ed25519", std::nullopt);
    REQUIRE(priv);
    auto cert = parse_certificate_line(read_whole_file(certs + "host_ed25519-cert.pub"));
    REQUIRE(cert);
    return {std::make_shared<const private_key>(std::move(*priv)), std::make_shared<const certificate>(*cert)};
}

// A client host's key allowed to log a user in from `host` as `user` there.
struct test_host_grant {
    public_key key;
    std::string host, user;
};

struct test_user {
    std::string password;
    std::vector<public_key> authorized;
    std::vector<test_host_grant> hosts; // hostbased
    bool is_root = false;
    std::optional<server_auth_settings> settings;
    bool forced_command = false;
    sk_requirements security_key; // what its security keys' signatures must show
    bool refused = false;         // the lookup refuses it (as DenyUsers would)
};

// The server policy both harnesses use: `users` (which must outlive the
// server) say who exists, is refused or is root, with which settings, and
// which keys each may use, with a forced command and what its security
// keys must show.
inline server_auth_policy user_table_policy(const std::map<std::string, test_user>& users)
{
    server_auth_policy policy;
    policy.lookup_user = [&users](std::string_view user) {
        user_lookup r;
        auto it = users.find(std::string(user));
        if (it == users.end())
            return r;
        if (it->second.refused) {
            r.status = user_status::refused;
            return r;
        }
        r.status = user_status::valid;
        r.is_root = it->second.is_root;
        r.settings = it->second.settings;
        return r;
    };
    policy.key_allowed = [&users](std::string_view user, const public_key& key, bool) {
        key_decision d;
        auto it = users.find(std::string(user));
        if (it == users.end())
            return d;
        for (const auto& k : it->second.authorized)
            d.allowed |= k == key;
        d.forced_command = it->second.forced_command;
        d.security_key = it->second.security_key;
        return d;
    };
    policy.host_allowed = [&users](std::string_view user, const public_key& key, const certificate*,
                                   std::string_view host, std::string_view client_user) {
        auto it = users.find(std::string(user));
        if (it == users.end())
            return false;
        return std::any_of(it->second.hosts.begin(), it->second.hosts.end(), [&](const test_host_grant& g) {
            return g.key == key && g.host == host && g.user == client_user;
        });
    };
    return policy;
}

class auth_pair {
public:
    auth_pair() { session_id = {0x5e, 0x55, 0x10, 0x4e, 0x1d}; }

    // --- set up before start() ---
    client_auth_config client_config;
    server_auth_config server_config;
    client_auth_session session; // session_id filled from session_id below
    bytes session_id;
    std::map<std::string, test_user> users;
    std::optional<account_decision> account; // account_check result when set

    // Responders. prompt: answers or nullopt (cancel). The others default
    // to "check against users" and "sign with agent_keys".
    std::function<std::optional<std::vector<std::string>>(const client_auth_event&)> on_prompt;
    std::function<kbdint_reply(const server_auth_event&)> on_kbdint;
    std::map<bytes, std::shared_ptr<const private_key>> agent_keys;
    std::function<std::optional<bytes>(const client_auth_event&)> on_sign;
    // ssh-keysign: the client host's private keys, by plain key blob; a
    // key not here fails the signature. Each keysign event is recorded.
    std::map<bytes, std::shared_ptr<const private_key>> host_private_keys;
    std::vector<client_auth_event> keysigns;
    // Rounds to wait before answering asynchronous questions.
    int answer_delay = 0;

    // --- results ---
    std::vector<std::pair<auth_log_level, std::string>> client_log, server_log;
    std::vector<std::string> banners;
    std::vector<client_auth_event> prompts;
    std::vector<server_auth_event> password_checks, kbdint_events;
    std::vector<bytes> to_server, to_client; // payloads, in order
    std::vector<std::uint32_t> unimplemented;
    bool client_authenticated = false, server_authenticated = false;
    std::string client_method;
    std::vector<authenticated_method> server_methods;
    std::optional<std::string> client_failed;
    std::optional<std::pair<disconnect_reason, std::string>> client_disconnect, server_disconnect;
    std::vector<std::chrono::microseconds> delays;

    std::unique_ptr<client_auth> client;
    std::unique_ptr<server_auth> server;

    void start()
    {
        session.session_id = session_id;
        server_config.session_id = session_id;
        if (client_config.user.empty())
            client_config.user = "alice";
        if (client_config.host.empty())
            client_config.host = "testhost";
        client_config.remote_ip = test_ip;
        server_config.remote_ip = test_ip;
        server_config.remote_port = test_port;
        server_auth_policy policy = user_table_policy(users);
        if (account)
            policy.account_check = [this](std::string_view) { return *account; };
        client = std::make_unique<client_auth>(client_config, session);
        server = std::make_unique<server_auth>(server_config, std::move(policy));
        client->start();
    }

    // Hands a payload to the server as if the client had sent it.
    void inject_to_server(const bytes& p) { server->handle(p, seq_++); }
    void inject_to_client(const bytes& p) { client->handle(p, 0); }

    void run()
    {
        for (int guard = 0; guard < 100000; ++guard) {
            bool progress = drain_client();
            progress |= drain_server();
            progress |= answer_pending();
            if (!progress)
                return;
        }
        FAIL("auth pair did not settle");
    }

    bool client_logged(std::string_view text) const { return has(client_log, text); }
    bool server_logged(std::string_view text) const { return has(server_log, text); }
    std::optional<auth_log_level> server_level(std::string_view text) const
    {
        for (const auto& [l, t] : server_log)
            if (t == text)
                return l;
        return std::nullopt;
    }
    // Index of a log line (for ordering checks), or -1.
    static int index_of(const std::vector<std::pair<auth_log_level, std::string>>& log, std::string_view text)
    {
        for (std::size_t i = 0; i < log.size(); ++i)
            if (log[i].second == text)
                return static_cast<int>(i);
        return -1;
    }
    std::string dump_logs() const
    {
        std::string s = "client:\n";
        for (const auto& [l, t] : client_log)
            s += "  " + std::string(to_string(l)) + ": " + t + "\n";
        s += "server:\n";
        for (const auto& [l, t] : server_log)
            s += "  " + std::string(to_string(l)) + ": " + t + "\n";
        return s;
    }

private:
    static bool has(const std::vector<std::pair<auth_log_level, std::string>>& log, std::string_view text)
    {
        return std::any_of(log.begin(), log.end(), [&](const auto& e) { return e.second == text; });
    }

    struct pending {
        int wait;
        std::function<void()> answer;
    };

    void later(std::function<void()> f) { pending_.push_back({answer_delay, std::move(f)}); }

    bool answer_pending()
    {
        bool progress = false;
        std::vector<pending> keep;
        auto work = std::move(pending_);
        pending_.clear();
        for (auto& p : work) {
            if (p.wait-- > 0) {
                keep.push_back(std::move(p));
                progress = true;
                continue;
            }
            p.answer();
            progress = true;
        }
        for (auto& p : keep)
            pending_.push_back(std::move(p));
        return progress;
    }

    bool drain_client()
    {
        bool progress = false;
        for (;;) {
            client_auth_event ev = client->poll();
            if (ev.type == client_auth_event_type::none)
                return progress;
            progress = true;
            switch (ev.type) {
            case client_auth_event_type::send: {
                bytes p = to_bytes(ev.payload.span());
                to_server.push_back(p);
                if (!server_closed_)
                    server->handle(p, seq_++);
                break;
            }
            case client_auth_event_type::log: client_log.emplace_back(ev.level, ev.text); break;
            case client_auth_event_type::banner: banners.push_back(ev.text); break;
            case client_auth_event_type::prompt: {
                prompts.push_back(ev);
                std::optional<std::vector<std::string>> answer;
                if (on_prompt)
                    answer = on_prompt(ev);
                later([this, answer] {
                    if (!answer) {
                        client->cancel_prompt();
                        return;
                    }
                    std::vector<secret_bytes> r;
                    for (const auto& a : *answer)
                        r.push_back(secret(a));
                    client->answer_prompt(std::move(r));
                });
                break;
            }
            case client_auth_event_type::sign: {
                std::optional<bytes> sig;
                if (on_sign) {
                    sig = on_sign(ev);
                } else if (auto it = agent_keys.find(ev.identity->key->blob()); it != agent_keys.end()) {
                    if (auto s = it->second->sign(ev.algorithm, ev.data))
                        sig = *s;
                }
                later([this, sig] {
                    if (sig)
                        client->answer_signature(*sig);
                    else
                        client->signature_failed("agent refused operation");
                });
                break;
            }
            case client_auth_event_type::keysign: {
                keysigns.push_back(ev);
                std::optional<bytes> sig;
                if (auto it = host_private_keys.find(ev.host_key->key.blob()); it != host_private_keys.end()) {
                    if (auto s = it->second->sign(host_key_signature_algorithm(ev.algorithm), ev.data))
                        sig = *s;
                }
                later([this, sig] {
                    if (sig)
                        client->answer_host_signature(*sig);
                    else
                        client->host_signature_failed();
                });
                break;
            }
            case client_auth_event_type::authenticated:
                client_authenticated = true;
                client_method = ev.method;
                break;
            case client_auth_event_type::failed: client_failed = ev.text; break;
            case client_auth_event_type::disconnect: client_disconnect = {ev.reason, ev.text}; break;
            case client_auth_event_type::none: break;
            }
        }
    }

    bool drain_server()
    {
        bool progress = false;
        for (;;) {
            server_auth_event ev = server->poll();
            if (ev.type == server_auth_event_type::none)
                return progress;
            progress = true;
            switch (ev.type) {
            case server_auth_event_type::send:
                delays.push_back(ev.min_elapsed);
                to_client.push_back(ev.payload);
                client->handle(ev.payload, 0);
                break;
            case server_auth_event_type::log: server_log.emplace_back(ev.level, ev.text); break;
            case server_auth_event_type::check_password: {
                password_checks.push_back(ev);
                bool ok = false;
                if (auto it = users.find(ev.user); it != users.end())
                    ok = it->second.password == str(ev.password);
                later([this, ok] { server->answer_password(ok); });
                break;
            }
            case server_auth_event_type::kbdint_start:
            case server_auth_event_type::kbdint_respond: {
                kbdint_events.push_back(ev);
                kbdint_reply r;
                if (on_kbdint)
                    r = on_kbdint(ev);
                later([this, r] { server->answer_kbdint(r); });
                break;
            }
            case server_auth_event_type::kbdint_abort: kbdint_events.push_back(ev); break;
            case server_auth_event_type::unimplemented: unimplemented.push_back(ev.seq); break;
            case server_auth_event_type::authenticated:
                server_authenticated = true;
                server_methods = ev.methods;
                break;
            case server_auth_event_type::disconnect:
                delays.push_back(ev.min_elapsed);
                server_disconnect = {ev.reason, ev.text};
                server_closed_ = true;
                break;
            case server_auth_event_type::none: break;
            }
        }
    }

    std::uint32_t seq_ = 3;
    bool server_closed_ = false;
    std::vector<pending> pending_;
};

} // namespace longhaul::test
