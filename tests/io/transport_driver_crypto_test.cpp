// The Asio driver with crypto engines (issue 13): a client and a server
// transport joined by a socketpair, CryptoThreads 2 on both sides, bulk data
// from a pipe through a channel into a pipe, byte exact, with the packets
// sealed and opened on the engines' pools after authentication.
#include "common/io/transport_driver.hpp"

#include "channel/io/fd_pump.hpp"
#include "common/crypto/crypto_engine.hpp"
#include "tests/channel/io/pipe_transfer.hpp"
#include "tests/transport/harness.hpp"

#include <boost/asio/io_context.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

using namespace longhaul;

using crypto_endpoint = test::runner_endpoint;

TEST_CASE("transport_driver with CryptoThreads 2: 24 MiB through a channel, byte exact, on the pools")
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    int in_pipe[2], out_pipe[2];
    REQUIRE(pipe(in_pipe) == 0);
    REQUIRE(pipe(out_pipe) == 0);

    boost::asio::io_context io;
    test::seeded_random rc(11), rs(12);
    transport_config cc, sc;
    cc.crypto_threads = sc.crypto_threads = 2;
    sc.role = transport_role::server;
    sc.host_keys = test::host_keys();
    crypto_endpoint client(io, sv[0], cc, rc), server(io, sv[1], sc, rs);
    REQUIRE(client.driver.crypto() != nullptr);
    CHECK(client.driver.crypto()->threads() == 2);

    auto src = std::make_shared<test::pipe_source_handler>();
    auto snk = std::make_shared<test::pipe_sink_handler>();
    bool sink_done = false;
    auto on_event = [&](crypto_endpoint& ep, bool is_client) {
        return [&ep, is_client, &src, &in_pipe](const transport_event& ev) {
            if (ev.type == transport_event_type::host_key)
                ep.core.accept_host_key();
            if (ev.type == transport_event_type::kex_complete) {
                // No user authentication layer here: both sides call it
                // themselves, which is when the engines come into use.
                ep.core.user_authenticated();
                if (!is_client || src->source)
                    return;
                test::open_pipe_source(ep, in_pipe[0], src);
            }
            if (ev.type == transport_event_type::payload)
                ep.handle_payload(ev.payload);
        };
    };
    test::accept_pipe_sink(server, out_pipe[1], snk, [&] { sink_done = true; });
    client.driver.start(on_event(client, true), [](std::error_code) {});
    server.driver.start(on_event(server, false), [](std::error_code) {});

    const std::size_t total = 24u << 20;
    std::string sent_hash, got_hash;
    std::size_t received = 0;
    std::thread writer = test::hashed_pipe_writer(in_pipe[1], total, 5, sent_hash);
    std::thread reader = test::hashed_pipe_reader(out_pipe[0], 65536, 0, received, got_hash);
    for (int i = 0; i < 1200 && !sink_done; ++i)
        io.run_for(std::chrono::milliseconds(100));
    ::close(out_pipe[1]);
    writer.join();
    reader.join();
    ::close(in_pipe[0]);
    ::close(out_pipe[0]);
    CHECK(received == total);
    CHECK(sent_hash == got_hash);
    // The data went through the pools: sealed at the client, opened at the server.
    CHECK(client.driver.crypto()->stats(crypto_direction::seal).pooled_packets > 0);
    CHECK(server.driver.crypto()->stats(crypto_direction::open).pooled_packets > 0);
}
