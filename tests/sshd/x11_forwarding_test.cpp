// sshd's X11 forwarding (x11_forwarding, through the session channel):
// x11-req granted once per session with DISPLAY=localhost:N.0 (N from
// X11DisplayOffset up), each connection to the display an "x11" open to
// the client with its originator, a single-connection display closed after
// its first connection; and the refusals (X11Forwarding no,
// DisableForwarding, the key's options, no xauth program, a cookie or
// protocol outside xauth's character set, a malformed request).
#include "sshd/x11_forwarding.hpp"

#include "channel/forward/x11_messages.hpp"
#include "channel/messages.hpp"
#include "sshd/server_session.hpp"
#include "sshd/session_channels.hpp"
#include "sshd/sshd_config.hpp"
#include "tests/channel/io/runner_endpoint.hpp"
#include "tests/transport/harness.hpp"

#include <boost/asio/io_context.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

// The client's end of a session: its requests (each wanting a reply),
// then `command` if any; records the replies and the output.
struct x11_test_session : channel_handler {
    std::vector<bytes> x11_requests;
    std::string command;
    std::vector<bool> replies;
    std::string out;
    bool closed = false;
    void on_open_confirmed(byte_span) override
    {
        for (const auto& r : x11_requests)
            runner->conn().send_request(id, forward::x11_request_name, true, r);
        if (!command.empty())
            runner->conn().send_request(id, "exec", false, string_request{command}.encode());
        runner->flush();
    }
    void on_data(byte_span d, std::uint32_t extended) override
    {
        if (extended == 0) // not "Could not chdir to home directory"
            out.append(d.begin(), d.end());
        runner->consumed(id, d.size());
    }
    void on_request_reply(bool ok) override { replies.push_back(ok); }
    void on_close() override { closed = true; }
};

int x11_test_connect(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

const std::string x11_test_cookie = "00112233445566778899aabbccddeeff";

} // namespace

TEST_CASE("sshd x11-req: a display per session, x11 opens, single connection, refusals")
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    boost::asio::io_context io;
    test::seeded_random rc(21), rs(22);
    transport_config cc, sc;
    sc.role = transport_role::server;
    sc.host_keys = test::host_keys();
    test::runner_endpoint client(io, sv[0], cc, rc), server(io, sv[1], sc, rs);

    user_account user;
    user.name = "test";
    user.uid = ::getuid();
    user.gid = ::getgid();
    user.home = "/nonexistent-longhaul-test-home"; // no ~/.ssh/rc
    user.shell = "/bin/sh";
    server_config config;
    config.x11_forwarding = true;
    config.xauth_location = "/bin/true"; // exists; fed the cookie, does nothing
    auto key = std::make_shared<authorized_key_match>();
    logger log("sshd", log_level::quiet);
    session_environment env;
    env.user = &user;
    env.config = &config;
    env.key = key;
    env.log = &log;
    x11_forwarding x11(io, server.runner, env);
    env.x11 = &x11;
    session_channels sessions(io, server.runner, env);
    sessions.register_in(server.channel_types);

    std::vector<forward::x11_open> opens;
    client.channel_types.add(std::string(forward::x11_channel_type),
                             [&](connection& conn, channel_id id, std::string_view, byte_span data) {
                                 if (auto o = forward::x11_open::decode(data))
                                     opens.push_back(*o);
                                 conn.reject(id, open_failure_reason::administratively_prohibited, "test");
                                 client.runner.flush();
                             });

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
    REQUIRE(run_until([&] { return kex_done; }));
    auto open_session = [&](std::vector<bytes> requests, std::string command) {
        auto h = std::make_shared<x11_test_session>();
        h->x11_requests = std::move(requests);
        h->command = std::move(command);
        auto id = client.conn.open("session");
        REQUIRE(id.has_value());
        client.runner.attach(*id, h);
        client.driver.flush();
        return h;
    };
    const bytes good = forward::x11_request{true, "MIT-MAGIC-COOKIE-1", x11_test_cookie, 0}.encode();

    SUBCASE("granted once; DISPLAY set; one connection, then the listener is gone")
    {
        auto s = open_session({good, good}, "echo \"$DISPLAY\"; sleep 1");
        REQUIRE(run_until([&] { return s->out.find('\n') != std::string::npos; }));
        CHECK(s->replies == std::vector<bool>{true, false}); // once per session
        const std::string display = s->out.substr(0, s->out.find('\n'));
        CAPTURE(display);
        REQUIRE(display.rfind("localhost:", 0) == 0);
        const int n = std::stoi(display.substr(10));
        CHECK(n >= config.x11_display_offset);
        CHECK(display == "localhost:" + std::to_string(n) + ".0");
        const int first = x11_test_connect(forward::x11_base_port + n);
        REQUIRE(first >= 0);
        REQUIRE(run_until([&] { return !opens.empty(); }));
        CHECK(opens[0].originator == "127.0.0.1");
        CHECK(opens[0].originator_port != 0);
        // Single connection: nothing listens any more.
        const int second = x11_test_connect(forward::x11_base_port + n);
        CHECK(second < 0);
        if (second >= 0)
            ::close(second);
        ::close(first);
        CHECK(run_until([&] { return s->closed; }));
    }
    SUBCASE("the listeners close with the session")
    {
        const bytes multi = forward::x11_request{false, "MIT-MAGIC-COOKIE-1", x11_test_cookie, 3}.encode();
        auto s = open_session({multi}, "echo \"$DISPLAY\"");
        REQUIRE(run_until([&] { return s->closed; }));
        CHECK(s->replies == std::vector<bool>{true});
        const std::string display = s->out.substr(0, s->out.find('\n'));
        CAPTURE(display);
        REQUIRE(display.rfind("localhost:", 0) == 0);
        CHECK(display.substr(display.size() - 2) == ".3");
        const int n = std::stoi(display.substr(10));
        client.conn.close(s->id);
        client.driver.flush();
        // The session is released on a later turn of the loop.
        CHECK(run_until([&] {
            const int fd = x11_test_connect(forward::x11_base_port + n);
            if (fd < 0)
                return true;
            ::close(fd);
            return false;
        }));
    }
    SUBCASE("refusals")
    {
        auto refused = [&](const bytes& request) {
            auto s = open_session({request}, "");
            REQUIRE(run_until([&] { return !s->replies.empty(); }));
            client.conn.close(s->id);
            client.driver.flush();
            return !s->replies[0];
        };
        CHECK(refused(forward::x11_request{false, "MIT-MAGIC-COOKIE-1", "00 11", 0}.encode()));
        CHECK(refused(forward::x11_request{false, "MIT;true", x11_test_cookie, 0}.encode()));
        CHECK(refused(forward::x11_request{false, "MIT", "ab\nadd unix:0 x y", 0}.encode()));
        CHECK(refused(bytes{0, 0, 0}));
        config.x11_forwarding = false;
        CHECK(refused(good));
        config.x11_forwarding = true;
        config.disable_forwarding = true;
        CHECK(refused(good));
        config.disable_forwarding = false;
        key->options.permit_x11_forwarding = false; // no-X11-forwarding, restrict
        CHECK(refused(good));
        key->options.permit_x11_forwarding = true;
        config.xauth_location = "/nonexistent/xauth";
        CHECK(refused(good));
        config.xauth_location = "/bin/true";
        CHECK_FALSE(refused(good));
    }
    ::close(sv[0]);
}
