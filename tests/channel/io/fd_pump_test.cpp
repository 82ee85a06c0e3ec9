// fd_source/fd_sink over real sockets and pipes: a client and a server
// transport joined by a socketpair in one io_context, a channel between
// them, bytes from a pipe on one side to a pipe on the other.
#include "channel/io/fd_pump.hpp"

#include "tests/channel/io/pipe_transfer.hpp"
#include "tests/transport/harness.hpp"

#include <boost/asio/io_context.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

using namespace longhaul;

using endpoint = test::runner_endpoint;

TEST_CASE("fd_pump: 32 MiB from a pipe through a channel into a slow pipe reader, byte exact")
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    int in_pipe[2], out_pipe[2];
    REQUIRE(pipe(in_pipe) == 0);
    REQUIRE(pipe(out_pipe) == 0);

    boost::asio::io_context io;
    test::seeded_random rc(1), rs(2);
    transport_config cc;
    transport_config sc;
    sc.role = transport_role::server;
    sc.host_keys = test::host_keys();
    endpoint client(io, sv[0], cc, rc), server(io, sv[1], sc, rs);

    auto src = std::make_shared<test::pipe_source_handler>();
    auto snk = std::make_shared<test::pipe_sink_handler>();

    auto on_event = [&](endpoint& ep, bool is_client) {
        return [&ep, is_client, &src, &in_pipe](const transport_event& ev) {
            if (ev.type == transport_event_type::host_key)
                ep.core.accept_host_key();
            if (ev.type == transport_event_type::kex_complete && is_client && !src->source)
                test::open_pipe_source(ep, in_pipe[0], src);
            if (ev.type == transport_event_type::payload)
                ep.handle_payload(ev.payload);
        };
    };
    test::accept_pipe_sink(server, out_pipe[1], snk);
    client.driver.start(on_event(client, true), [](std::error_code) {});
    server.driver.start(on_event(server, false), [](std::error_code) {});

    const std::size_t total = 32u << 20;
    std::string sent_hash, got_hash;
    std::size_t received = 0;
    std::thread writer = test::hashed_pipe_writer(in_pipe[1], total, 3, sent_hash);
    // 16 KiB reads, slow for the first MiB.
    std::thread reader = test::hashed_pipe_reader(out_pipe[0], 16384, 1u << 20, received, got_hash);
    // Runs until the sink closed its end and everything drained.
    for (int i = 0; i < 600 && !(snk->sink && snk->sink->closed()); ++i)
        io.run_for(std::chrono::milliseconds(100));
    ::close(out_pipe[1]);
    writer.join();
    reader.join();
    ::close(in_pipe[0]);
    ::close(out_pipe[0]);
    CHECK(received == total);
    CHECK(sent_hash == got_hash);
    CHECK(client.core.stats().bytes_out > total);
}
