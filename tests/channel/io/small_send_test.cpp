// Request/response latency under bulk load (issue 11): with the output
// queue past its mark, a bulk source waits for its round-robin turn, but a
// source that had emptied its descriptor (a request, a keystroke) sends its
// few bytes at once, and the queue never grows past twice the mark.
#include "channel/io/fd_pump.hpp"

#include "tests/channel/io/pipe_transfer.hpp"
#include "tests/transport/harness.hpp"

#include <boost/asio/io_context.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

using namespace longhaul;

namespace {

// Counts what arrives on a channel, and gives the window back.
struct counting_handler : channel_handler {
    counting_handler(connection_runner& r, channel_id i) : runner(r), id(i) {}
    connection_runner& runner;
    channel_id id;
    std::size_t bytes = 0;
    void on_data(byte_span d, std::uint32_t) override
    {
        bytes += d.size();
        runner.consumed(id, d.size());
    }
};

} // namespace

TEST_CASE("fd_source: past the output mark, an idle source's request goes out; bulk waits its turn")
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    int bulk_pipe[2], small_pipe[2];
    REQUIRE(pipe(bulk_pipe) == 0);
    REQUIRE(pipe(small_pipe) == 0);

    boost::asio::io_context io;
    test::seeded_random rc(5), rs(6);
    transport_config cc, sc;
    sc.role = transport_role::server;
    sc.host_keys = test::host_keys();
    // The server's window is far larger than the socket's buffer, so that
    // the client's queue, not the window, stops the bulk source.
    connection_config big_window;
    big_window.window.initial_window = 16u << 20;
    test::runner_endpoint client(io, sv[0], cc, rc), server(io, sv[1], sc, rs, big_window);

    auto bulk = std::make_shared<test::pipe_source_handler>();
    auto small = std::make_shared<test::pipe_source_handler>();
    std::vector<std::shared_ptr<counting_handler>> received;
    server.channel_types.add("session", [&](connection&, channel_id id, std::string_view, byte_span) {
        server.conn.accept(id);
        received.push_back(std::make_shared<counting_handler>(server.runner, id));
        server.runner.attach(id, received.back());
    });
    auto on_event = [&](test::runner_endpoint& ep, bool is_client) {
        return [&, is_client](const transport_event& ev) {
            if (ev.type == transport_event_type::host_key)
                ep.core.accept_host_key();
            if (ev.type == transport_event_type::kex_complete && is_client && !bulk->source) {
                test::open_pipe_source(ep, bulk_pipe[0], bulk);
                test::open_pipe_source(ep, small_pipe[0], small);
            }
            if (ev.type == transport_event_type::payload)
                ep.handle_payload(ev.payload);
        };
    };
    client.driver.start(on_event(client, true), [](std::error_code) {});
    server.driver.start(on_event(server, false), [](std::error_code) {});

    const std::size_t total = 24u << 20;
    std::string bulk_hash;
    std::thread writer = test::hashed_pipe_writer(bulk_pipe[1], total, 7, bulk_hash);
    for (int i = 0; i < 100 && received.size() < 2; ++i)
        io.run_for(std::chrono::milliseconds(20));
    REQUIRE(received.size() == 2);

    // The server stops reading: the socket fills, the bulk source stops
    // at the mark and waits for the queue to drain. Then a burst on the
    // bulk channel (as a source's last turn leaves it) holds the queue
    // past the mark.
    server.driver.pause_reading(true);
    io.run_for(std::chrono::milliseconds(300));
    // The burst tops the queue up to just past the mark (the source's
    // last read may have left it past the mark already).
    const std::size_t mark = client.runner.output_high_water();
    const std::size_t queued = client.core.queued_size();
    const bytes burst(queued > mark ? 0 : mark - queued + 4096, 0x42);
    if (!burst.empty()) {
        REQUIRE(client.conn.send_capacity(0) >= burst.size());
        REQUIRE(client.conn.send_data(0, burst));
        client.driver.flush();
    }
    io.run_for(std::chrono::milliseconds(50));
    REQUIRE(client.runner.congested());
    const std::uint64_t bulk_before = bulk->source->bytes_read();
    CHECK(client.core.queued_size() <= 2 * mark);

    // A 100-byte request on the idle channel goes out now.
    const std::string request(100, 'r');
    REQUIRE(::write(small_pipe[1], request.data(), request.size()) == ssize_t(request.size()));
    io.run_for(std::chrono::milliseconds(200));
    CHECK(small->source->bytes_read() == request.size());
    // The bulk source did not move, and the queue stays within twice the mark.
    CHECK(bulk->source->bytes_read() == bulk_before);
    CHECK(client.core.queued_size() <= 2 * mark);

    // Everything arrives once the server reads again.
    server.driver.pause_reading(false);
    ::close(small_pipe[1]);
    for (int i = 0; i < 500 && received[0]->bytes + received[1]->bytes < total + burst.size() + request.size(); ++i)
        io.run_for(std::chrono::milliseconds(20));
    writer.join();
    CHECK(received[0]->bytes == total + burst.size());
    CHECK(received[1]->bytes == request.size());
    ::close(bulk_pipe[0]);
    ::close(small_pipe[0]);
}
