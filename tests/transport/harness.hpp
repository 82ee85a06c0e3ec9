// In-memory wiring of a client and a server transport core, for tests: bytes
// move between the two cores with no socket, and every event is recorded.
#pragma once

#include "common/keys/private_key.hpp"
#include "common/transport/transport.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace longhaul::test {

// A deterministic random source (the cores take randomness from outside).
class seeded_random final : public random_source {
public:
    explicit seeded_random(std::uint64_t seed) : gen_(seed) {}
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = static_cast<std::uint8_t>(gen_());
    }

private:
    std::mt19937_64 gen_;
};

// One key of every type, generated once per test run.
inline const std::vector<std::shared_ptr<const private_key>>& host_keys()
{
    static const std::vector<std::shared_ptr<const private_key>> keys = [] {
        std::vector<std::shared_ptr<const private_key>> v;
        for (auto [t, bits] : {std::pair{key_type::ed25519, 0}, {key_type::ecdsa_p256, 256},
                               {key_type::ecdsa_p384, 384}, {key_type::ecdsa_p521, 521}, {key_type::rsa, 2048}}) {
            auto k = private_key::generate(t, bits);
            REQUIRE(k.has_value());
            v.push_back(std::make_shared<const private_key>(std::move(*k)));
        }
        return v;
    }();
    return keys;
}

struct peer_log {
    int kex_completed = 0;
    int host_key_events = 0;
    bool disconnected = false;
    bool disconnect_local = false;
    disconnect_reason reason{};
    errc error = errc::ok;
    std::string disconnect_text;
    std::vector<bytes> payloads; // copies of payload events
    std::vector<std::uint32_t> unimplemented;
    std::vector<std::string> banners;
};

class transport_pair {
public:
    transport_pair(transport_config client_cfg, transport_config server_cfg, std::uint64_t seed = 1)
        : client_rng_(seed), server_rng_(seed + 1000)
    {
        client_cfg.role = transport_role::client;
        server_cfg.role = transport_role::server;
        if (server_cfg.host_keys.empty())
            server_cfg.host_keys = host_keys();
        client = std::make_unique<transport>(std::move(client_cfg), client_rng_, now);
        server = std::make_unique<transport>(std::move(server_cfg), server_rng_, now);
    }

    // Moves bytes both ways and handles events until neither side makes
    // progress. `chunk` limits the bytes moved per step (split-point tests).
    void run(std::size_t chunk = SIZE_MAX)
    {
        for (int guard = 0; guard < 1000000; ++guard) {
            bool progress = false;
            progress |= pump(*client, *server, server_log, chunk, &server_eof_sent_);
            progress |= pump(*server, *client, client_log, chunk, &client_eof_sent_);
            progress |= drain(*client, client_log, true);
            progress |= drain(*server, server_log, false);
            if (!progress)
                return;
        }
        FAIL("transport pair did not settle");
    }

    // Bytes in flight from `from` to `to` may be altered by a test before delivery.
    std::function<void(bool to_server, bytes& chunk)> tamper;
    // Called for payload events (after logging); may send replies.
    std::function<void(bool at_server, const transport_event&)> on_payload;
    bool auto_accept_host_key = true;
    bool keep_payloads = true;

    std::unique_ptr<transport> client, server;
    peer_log client_log, server_log;
    steady_time now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);

private:
    bool pump(transport& from, transport& to, peer_log& to_log, std::size_t chunk, bool* eof_sent)
    {
        auto out = from.output();
        if (out.empty()) {
            // A closed sender's stream ends once its last bytes are delivered.
            if (from.closed() && !*eof_sent && !to.closed()) {
                *eof_sent = true;
                to.input_eof();
                return true;
            }
            return false;
        }
        std::size_t n = std::min(out.size(), chunk);
        bytes piece(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
        from.consume_output(n);
        if (tamper)
            tamper(&to == server.get(), piece);
        if (!to.closed())
            to.feed(piece);
        (void)to_log;
        return true;
    }

    bool drain(transport& t, peer_log& log, bool is_client)
    {
        bool progress = false;
        for (;;) {
            transport_event ev = t.poll();
            if (ev.type == transport_event_type::none)
                return progress;
            progress = true;
            switch (ev.type) {
            case transport_event_type::host_key:
                ++log.host_key_events;
                if (auto_accept_host_key)
                    t.accept_host_key();
                break;
            case transport_event_type::kex_complete: ++log.kex_completed; break;
            case transport_event_type::payload:
                if (keep_payloads)
                    log.payloads.emplace_back(ev.payload.begin(), ev.payload.end());
                if (on_payload)
                    on_payload(!is_client, ev);
                break;
            case transport_event_type::unimplemented: log.unimplemented.push_back(ev.seq); break;
            case transport_event_type::banner_line: log.banners.emplace_back(ev.text); break;
            case transport_event_type::disconnected:
                log.disconnected = true;
                log.disconnect_local = ev.local;
                log.reason = ev.reason;
                log.error = ev.error;
                log.disconnect_text = std::string(ev.text);
                break;
            default: break;
            }
        }
    }

    test::seeded_random client_rng_, server_rng_;
    bool server_eof_sent_ = false, client_eof_sent_ = false;
};

} // namespace longhaul::test
