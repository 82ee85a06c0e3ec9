// sshd's "session" channel type (session_channels): each session hears of
// its own process's exit, also when its channel number is one that a
// session which just ended had, in the same batch of packets.
#include "sshd/session_channels.hpp"

#include "channel/messages.hpp"
#include "sshd/server_session.hpp"
#include "sshd/sshd_config.hpp"
#include "tests/channel/io/runner_endpoint.hpp"
#include "tests/transport/harness.hpp"

#include <boost/asio/io_context.hpp>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

// The client's end of a session channel: execs `command` once the server
// confirms the open, and records the exit status and the server's CLOSE.
struct exec_handler : channel_handler {
    explicit exec_handler(std::string c) : command(std::move(c)) {}
    std::string command;
    std::optional<std::uint32_t> exit_status;
    bool closed = false;
    void on_open_confirmed(byte_span) override
    {
        runner->conn().send_request(id, "exec", false, string_request{command}.encode());
        runner->flush();
    }
    void on_data(byte_span d, std::uint32_t) override { runner->consumed(id, d.size()); }
    void on_request(std::string_view name, bool, byte_span data) override
    {
        if (name == "exit-status")
            if (auto e = exit_status_request::decode(data))
                exit_status = e->status;
    }
    // The test closes our side itself, when it chooses.
    void on_close() override { closed = true; }
};

} // namespace

TEST_CASE("session_channels: a session on a reused channel number still hears of its process's exit")
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    boost::asio::io_context io;
    test::seeded_random rc(11), rs(12);
    transport_config cc, sc;
    sc.role = transport_role::server;
    sc.host_keys = test::host_keys();
    test::runner_endpoint client(io, sv[0], cc, rc), server(io, sv[1], sc, rs);

    // The sessions run as whoever runs the test, with /bin/sh.
    user_account user;
    user.name = "test";
    user.uid = ::getuid();
    user.gid = ::getgid();
    user.home = "/nonexistent-longhaul-test-home"; // no ~/.ssh/rc; the session starts in /
    user.shell = "/bin/sh";
    server_config config;
    logger log("sshd", log_level::error);
    session_environment env;
    env.user = &user;
    env.config = &config;
    env.log = &log;
    session_channels sessions(io, server.runner, env);
    sessions.register_in(server.channel_types);

    bool kex_done = false;
    client.driver.start(
        [&](const transport_event& ev) {
            if (ev.type == transport_event_type::host_key)
                client.core.accept_host_key();
            if (ev.type == transport_event_type::kex_complete)
                kex_done = true;
            if (ev.type == transport_event_type::payload)
                client.handle_payload(ev.payload);
        },
        [](std::error_code) {});
    server.driver.start(
        [&](const transport_event& ev) {
            if (ev.type == transport_event_type::payload)
                server.handle_payload(ev.payload);
        },
        [](std::error_code) {});

    // What sshd's SIGCHLD handler does: reap, and tell the sessions.
    auto run_until = [&](auto done) {
        for (int i = 0; i < 250 && !done(); ++i) {
            io.run_for(std::chrono::milliseconds(20));
            int status = 0;
            pid_t pid;
            while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0)
                sessions.child_exited(pid, status);
        }
        return done();
    };
    auto open_exec = [&](const std::shared_ptr<exec_handler>& h) {
        auto id = client.conn.open("session");
        REQUIRE(id.has_value());
        client.runner.attach(*id, h);
        return *id;
    };

    REQUIRE(run_until([&] { return kex_done; }));
    auto first = std::make_shared<exec_handler>("exit 3");
    const channel_id first_id = open_exec(first);
    client.driver.flush();
    REQUIRE(run_until([&] { return first->closed; }));
    CHECK(first->exit_status == 3u);

    // The client's CLOSE and its next open go out in one write, so the
    // server handles both in one turn: the first session finishes and the
    // new channel gets its number (the lowest free one) at once.
    client.conn.close(first_id);
    auto second = std::make_shared<exec_handler>("exit 4");
    open_exec(second);
    client.driver.flush();

    // The second session's process exits: exit-status, EOF and CLOSE.
    CHECK(run_until([&] { return second->closed; }));
    CHECK(second->exit_status == 4u);
    ::close(sv[0]);
}
