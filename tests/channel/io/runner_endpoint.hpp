// One side of a connection over a real socket for the channel/io tests: a
// transport core with its Asio driver, a connection core, its runner, and
// the channel types the peer may open (the session layer's routing of
// connection messages, without authentication).
#pragma once

#include "channel/channel_types.hpp"
#include "channel/io/connection_runner.hpp"
#include "common/io/transport_driver.hpp"

#include <chrono>

namespace longhaul::test {

struct runner_endpoint {
    runner_endpoint(boost::asio::io_context& io, int fd, transport_config cfg, random_source& rng,
                    connection_config conn_cfg = {})
        : core(cfg, rng, std::chrono::steady_clock::now()), driver(io, fd, core), conn(core, conn_cfg),
          runner(io, driver, conn)
    {
    }

    // A payload event: opens go to the table, the rest to the runner.
    void handle_payload(byte_span payload)
    {
        const auto e = conn.handle(payload, std::chrono::steady_clock::now());
        if (e.type == connection_event_type::open_request)
            channel_types.open(conn, e);
        else
            runner.dispatch(e);
    }

    transport core;
    transport_driver driver;
    connection conn;
    connection_runner runner;
    channel_type_table channel_types;
};

} // namespace longhaul::test
