// The driver delivers a large read in turns (issue 11): a handler that
// became ready while a read was being delivered runs after at most
// payload_per_turn bytes of it, not after the whole read, and nothing is
// lost or reordered by the turns.
#include "common/io/transport_driver.hpp"

#include "tests/transport/harness.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <unistd.h>

using namespace longhaul;

namespace {

// One side over a pair of pipes (as sshd -i): pipes take a whole 1 MiB
// write at once, so the reader finds it all in one readable event.
struct pipe_endpoint {
    pipe_endpoint(boost::asio::io_context& io, int read_fd, int write_fd, transport_config cfg, random_source& rng)
        : core(std::move(cfg), rng, std::chrono::steady_clock::now()), driver(io, read_fd, write_fd, core)
    {
    }
    transport core;
    transport_driver driver;
};

void big_pipe(int fds[2])
{
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    // 1 MiB is what an unprivileged process may ask for (fs.pipe-max-size).
    REQUIRE(::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20) >= (1 << 20));
}

} // namespace

TEST_CASE("transport_driver: a large read is delivered in turns, other handlers run in between, nothing reordered")
{
    int to_server[2], to_client[2];
    big_pipe(to_server);
    big_pipe(to_client);
    boost::asio::io_context io;
    test::seeded_random rc(21), rs(22);
    transport_config cc, sc;
    sc.role = transport_role::server;
    sc.host_keys = test::host_keys();
    pipe_endpoint client(io, to_client[0], to_server[1], cc, rc);
    pipe_endpoint server(io, to_server[0], to_client[1], sc, rs);

    // 28 messages of 32 KiB (896 KiB), sent at once after the key
    // exchange: one write into the pipe, found whole by the server's read.
    constexpr int messages = 28;
    constexpr std::size_t message_size = 32 * 1024;
    client.driver.start(
        [&](const transport_event& ev) {
            if (ev.type == transport_event_type::host_key)
                client.core.accept_host_key();
            if (ev.type != transport_event_type::kex_complete)
                return;
            for (int i = 0; i < messages; ++i) {
                bytes m(message_size, static_cast<std::uint8_t>(i));
                m[0] = 192; // a local-extension number: payload for the layer above
                REQUIRE(client.core.send(m));
            }
        },
        [](std::error_code) {});

    std::size_t delivered = 0;
    int next = 0;
    bool in_order = true;
    std::optional<std::size_t> delivered_when_other_ran;
    server.driver.start(
        [&](const transport_event& ev) {
            if (ev.type != transport_event_type::payload || ev.payload.empty() || ev.payload[0] != 192)
                return;
            in_order = in_order && ev.payload.size() == message_size && ev.payload[1] == next;
            ++next;
            if (delivered == 0)
                // Another handler becomes ready while the read is delivered.
                boost::asio::post(io, [&] { delivered_when_other_ran = delivered; });
            delivered += ev.payload.size();
        },
        [](std::error_code) {});

    for (int i = 0; i < 200 && next < messages; ++i)
        io.run_for(std::chrono::milliseconds(10));
    CHECK(next == messages);
    CHECK(in_order);
    REQUIRE(delivered_when_other_ran);
    // Delivered whole, the read would have run all 896 KiB first.
    CHECK(*delivered_when_other_ran <= transport_driver::payload_per_turn + message_size);
    CHECK(*delivered_when_other_ran < messages * message_size / 2);
}
