// Bulk data through a channel between two pipes, for the tests that check
// a byte-exact transfer over a real socket (fd_pump, the driver's crypto
// engines): the channel handlers that join fd_source and fd_sink to a
// channel, and the threads that feed the input pipe with seeded random
// bytes and drain the output pipe, each hashing what it saw.
#pragma once

#include "channel/io/fd_pump.hpp"
#include "common/crypto/hash.hpp"
#include "tests/channel/io/runner_endpoint.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

namespace longhaul::test {

// The receiving side: channel data into the sink.
struct pipe_sink_handler : channel_handler {
    std::shared_ptr<fd_sink> sink;
    bool closed = false;
    void on_data(byte_span d, std::uint32_t) override { sink->write(d); }
    void on_eof() override { sink->eof(); }
    void on_close() override { closed = true; }
};

// The sending side: the source starts once the peer confirmed the open
// and reads on whenever the channel can take more.
struct pipe_source_handler : channel_handler {
    std::shared_ptr<fd_source> source;
    void on_data(byte_span, std::uint32_t) override {}
    void on_open_confirmed(byte_span) override { source->start(); }
    void on_writable() override { source->pump(); }
};

// At the client: opens a session channel whose data comes from `fd` (the
// source owns it), with EOF sent when the pipe ends.
inline void open_pipe_source(runner_endpoint& ep, int fd, const std::shared_ptr<pipe_source_handler>& handler)
{
    auto id = ep.conn.open("session");
    REQUIRE(id.has_value());
    handler->source = std::make_shared<fd_source>(ep.runner, *id, private_nonblocking_fd(fd, false), 0, true);
    handler->source->on_eof = [&ep, id = *id](int) {
        ep.conn.send_eof(id);
        ep.driver.flush();
    };
    ep.runner.attach(*id, handler);
}

// At the server: accepts a session channel and writes its data into `fd`
// (the sink owns it); once everything is written after EOF, `on_drained`
// runs and the channel is closed.
inline void accept_pipe_sink(runner_endpoint& ep, int fd, const std::shared_ptr<pipe_sink_handler>& handler,
                             std::function<void()> on_drained = {})
{
    ep.channel_types.add("session", [&ep, fd, handler, on_drained](connection&, channel_id id, std::string_view,
                                                                   byte_span) {
        ep.conn.accept(id);
        handler->sink = std::make_shared<fd_sink>(ep.runner, id, private_nonblocking_fd(fd, true), true);
        handler->sink->on_drained = [&ep, id, on_drained] {
            if (on_drained)
                on_drained();
            ep.conn.close(id);
            ep.driver.flush();
        };
        ep.runner.attach(id, handler);
    });
}

// Writes `total` bytes from a generator seeded with `seed` into `fd` in
// 64 KiB writes, closes it, and leaves their SHA-256 (hex) in `hash`.
inline std::thread hashed_pipe_writer(int fd, std::size_t total, std::uint64_t seed, std::string& hash)
{
    return std::thread([fd, total, seed, &hash] {
        hasher h(hash_alg::sha256);
        std::mt19937_64 gen(seed);
        std::vector<std::uint8_t> buf(65536);
        for (std::size_t off = 0; off < total; off += buf.size()) {
            for (auto& b : buf)
                b = static_cast<std::uint8_t>(gen());
            h.update(buf);
            REQUIRE(::write(fd, buf.data(), buf.size()) == static_cast<ssize_t>(buf.size()));
        }
        ::close(fd);
        hash = to_hex(h.finish());
    });
}

// Reads `fd` to its end in reads of `chunk` bytes, counting them in
// `received` and leaving their SHA-256 (hex) in `hash`. Below `slow_until`
// bytes it pauses after each read: a slow reader, so the sink backs up.
inline std::thread hashed_pipe_reader(int fd, std::size_t chunk, std::size_t slow_until, std::size_t& received,
                                      std::string& hash)
{
    return std::thread([fd, chunk, slow_until, &received, &hash] {
        hasher h(hash_alg::sha256);
        std::vector<std::uint8_t> buf(chunk);
        for (;;) {
            ssize_t n = ::read(fd, buf.data(), buf.size());
            if (n <= 0)
                break;
            received += static_cast<std::size_t>(n);
            h.update(byte_span(buf.data(), static_cast<std::size_t>(n)));
            if (received < slow_until)
                std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        hash = to_hex(h.finish());
    });
}

} // namespace longhaul::test
