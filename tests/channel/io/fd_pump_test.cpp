// fd_source/fd_sink over real sockets and pipes: a client and a server
// transport joined by a socketpair in one io_context, a channel between
// them, bytes from a pipe on one side to a pipe on the other.
#include "channel/io/fd_pump.hpp"

#include "common/crypto/hash.hpp"
#include "tests/channel/io/runner_endpoint.hpp"
#include "tests/transport/harness.hpp"

#include <boost/asio/io_context.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

using namespace longhaul;

namespace {

using endpoint = test::runner_endpoint;

struct sink_handler : channel_handler {
    std::shared_ptr<fd_sink> sink;
    bool closed = false;
    void on_data(byte_span d, std::uint32_t) override { sink->write(d); }
    void on_eof() override { sink->eof(); }
    void on_close() override { closed = true; }
};

struct source_handler : channel_handler {
    std::shared_ptr<fd_source> source;
    void on_data(byte_span, std::uint32_t) override {}
    void on_open_confirmed(byte_span) override { source->start(); }
    void on_writable() override { source->pump(); }
};

} // namespace

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

    auto src = std::make_shared<source_handler>();
    auto snk = std::make_shared<sink_handler>();
    std::shared_ptr<fd_source> source;
    bool done = false;

    auto on_event = [&](endpoint& ep, bool is_client) {
        return [&ep, is_client, &src, &snk, &source, &out_pipe, &in_pipe, &done](const transport_event& ev) {
            if (ev.type == transport_event_type::host_key)
                ep.core.accept_host_key();
            if (ev.type == transport_event_type::kex_complete && is_client && !source) {
                auto id = ep.conn.open("session");
                REQUIRE(id.has_value());
                source = std::make_shared<fd_source>(ep.runner, *id, private_nonblocking_fd(in_pipe[0], false), 0, true);
                source->on_eof = [&ep, id = *id](int) { ep.conn.send_eof(id); ep.driver.flush(); };
                src->source = source;
                ep.runner.attach(*id, src);
            }
            if (ev.type == transport_event_type::payload)
                ep.handle_payload(ev.payload);
            (void)done;
        };
    };
    server.channel_types.add("session", [&](connection&, channel_id id, std::string_view, byte_span) {
        server.conn.accept(id);
        snk->sink = std::make_shared<fd_sink>(server.runner, id, private_nonblocking_fd(out_pipe[1], true), true);
        snk->sink->on_drained = [&] {
            server.conn.close(id);
            server.driver.flush();
        };
        server.runner.attach(id, snk);
    });
    client.driver.start(on_event(client, true), [](std::error_code) {});
    server.driver.start(on_event(server, false), [](std::error_code) {});

    const std::size_t total = 32u << 20;
    std::string sent_hash, got_hash;
    std::thread writer([&] {
        hasher h(hash_alg::sha256);
        std::mt19937_64 gen(3);
        std::vector<std::uint8_t> buf(65536);
        for (std::size_t off = 0; off < total; off += buf.size()) {
            for (auto& b : buf)
                b = static_cast<std::uint8_t>(gen());
            h.update(buf);
            REQUIRE(::write(in_pipe[1], buf.data(), buf.size()) == static_cast<ssize_t>(buf.size()));
        }
        ::close(in_pipe[1]);
        sent_hash = to_hex(h.finish());
    });
    std::size_t received = 0;
    std::thread reader([&] {
        hasher h(hash_alg::sha256);
        std::vector<std::uint8_t> buf(16384);
        for (;;) {
            ssize_t n = ::read(out_pipe[0], buf.data(), buf.size());
            if (n <= 0)
                break;
            received += static_cast<std::size_t>(n);
            h.update(byte_span(buf.data(), static_cast<std::size_t>(n)));
            if (received < (1u << 20))
                std::this_thread::sleep_for(std::chrono::microseconds(200)); // a slow start
        }
        got_hash = to_hex(h.finish());
    });
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
