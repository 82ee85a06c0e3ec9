// A server_auth machine driven by hand-made requests, for the server's
// unit tests: passwords answered from a table of users, keys allowed by
// their `authorized` lists, every event recorded.
#pragma once

#include "common/auth/server_auth.hpp"
#include "tests/auth/auth_harness.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::test {

// Drives a server_auth directly: feeds payloads, answers password checks
// from a table, records everything.
struct server_driver {
    explicit server_driver(server_auth_settings settings = {}, std::map<std::string, test_user> u = {},
                           bool monitor_logs_verdicts = false)
        : users(std::move(u))
    {
        server_auth_config cfg;
        cfg.settings = std::move(settings);
        cfg.verdicts_logged_by_monitor = monitor_logs_verdicts;
        cfg.remote_ip = "192.0.2.7";
        cfg.remote_port = 40022;
        cfg.session_id = {1, 2, 3, 4};
        server_auth_policy policy = user_table_policy(users);
        server = std::make_unique<server_auth>(cfg, std::move(policy));
    }

    void feed(const bytes& payload)
    {
        server->handle(payload, seq++);
        drain();
    }

    void drain()
    {
        for (auto ev = server->poll(); ev.type != server_auth_event_type::none; ev = server->poll()) {
            switch (ev.type) {
            case server_auth_event_type::send: sent.push_back(ev.payload); break;
            case server_auth_event_type::log: logs.push_back(ev.text); break;
            case server_auth_event_type::check_password: {
                auto it = users.find(ev.user);
                checks.push_back(ev.user);
                pending_password = ev.user_valid && it != users.end() && it->second.password == str(ev.password);
                if (!hold_answers) {
                    server->answer_password(*pending_password);
                    pending_password.reset();
                }
                break;
            }
            case server_auth_event_type::unimplemented: unimplemented.push_back(ev.seq); break;
            case server_auth_event_type::authenticated: authenticated = true; break;
            case server_auth_event_type::disconnect: disconnect = {ev.reason, ev.text}; break;
            default: break;
            }
        }
    }

    void answer_held()
    {
        REQUIRE(pending_password.has_value());
        bool ok = *pending_password;
        pending_password.reset();
        server->answer_password(ok);
        drain();
    }

    bool logged(std::string_view line) const { return std::find(logs.begin(), logs.end(), line) != logs.end(); }

    std::map<std::string, test_user> users;
    std::unique_ptr<server_auth> server;
    std::uint32_t seq = 10;
    std::vector<bytes> sent;
    std::vector<std::string> logs, checks;
    std::vector<std::uint32_t> unimplemented;
    bool authenticated = false;
    bool hold_answers = false;
    std::optional<bool> pending_password;
    std::optional<std::pair<disconnect_reason, std::string>> disconnect;
};

} // namespace longhaul::test
