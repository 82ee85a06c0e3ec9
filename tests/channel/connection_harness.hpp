// Two connection cores over an in-memory transport pair, recording events.
#pragma once

#include "channel/connection.hpp"
#include "tests/transport/harness.hpp"

#include <optional>

namespace longhaul::test {

struct recorded_event {
    connection_event_type type;
    channel_id channel;
    std::string name;
    bytes data;
    std::uint32_t code;
    std::string text;
    bool want_reply, success;
};

class connection_pair {
public:
    // The server gets `server_cfg` when given (limits tested from one side);
    // the transports' configurations set what each side says it is.
    explicit connection_pair(connection_config cfg = {}, std::optional<connection_config> server_cfg = {},
                             transport_config client_transport = {}, transport_config server_transport = {})
        : tp(std::move(client_transport), std::move(server_transport))
    {
        tp.run();
        REQUIRE(tp.client->established());
        tp.client->user_authenticated();
        tp.server->user_authenticated();
        client = std::make_unique<connection>(*tp.client, cfg);
        server = std::make_unique<connection>(*tp.server, server_cfg.value_or(cfg));
        tp.keep_payloads = false;
        tp.on_payload = [this](bool at_server, const transport_event& ev) {
            connection& c = at_server ? *server : *client;
            auto e = c.handle(ev.payload, tp.now);
            if (e.type == connection_event_type::none)
                return;
            auto& log = at_server ? server_events : client_events;
            log.push_back({e.type, e.channel, std::string(e.name), to_bytes(e.data), e.code, std::string(e.text),
                           e.want_reply, e.success});
            if (e.type == connection_event_type::data) {
                (at_server ? server_received : client_received)[e.channel].insert(
                    (at_server ? server_received : client_received)[e.channel].end(), e.data.begin(), e.data.end());
                if (auto_consume)
                    c.consumed(e.channel, e.data.size(), tp.now);
            }
            if (on_event)
                on_event(at_server, e);
        };
    }

    void run() { tp.run(); }

    // Opens a channel from the client and accepts it at the server.
    std::pair<channel_id, channel_id> open_session()
    {
        auto id = client->open("session");
        REQUIRE(id.has_value());
        run();
        REQUIRE(!server_events.empty());
        auto req = server_events.back();
        REQUIRE(req.type == connection_event_type::open_request);
        server->accept(req.channel);
        run();
        REQUIRE(client_events.back().type == connection_event_type::open_confirmed);
        return {*id, req.channel};
    }

    std::size_t count(const std::vector<recorded_event>& log, connection_event_type t) const
    {
        std::size_t n = 0;
        for (const auto& e : log)
            n += e.type == t;
        return n;
    }

    transport_pair tp;
    std::unique_ptr<connection> client, server;
    std::vector<recorded_event> client_events, server_events;
    std::map<channel_id, bytes> client_received, server_received;
    bool auto_consume = true;
    std::function<void(bool at_server, const connection_event&)> on_event;
};

} // namespace longhaul::test
