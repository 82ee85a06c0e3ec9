#include "agent_test_util.hpp"

#include "ssh/agent/agent_server.hpp"

#include <atomic>
#include <cstdlib>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

using namespace agent_test;

namespace {

// An agent_server on a socket in a temporary directory, run on a thread.
struct running_server {
    harness h;
    std::string dir;
    std::string path;
    int listen_fd = -1;
    volatile std::sig_atomic_t stop = 0;
    agent_server server; // after the members make_listener sets
    std::thread thread;

    running_server() : server(h.core, h.log, make_listener(), -1)
    {
        sigset_t none;
        sigemptyset(&none);
        thread = std::thread([this, none] { server.run(stop, none); });
    }
    ~running_server()
    {
        stop = 1;
        ::close(connect_client()); // wakes the poll
        thread.join();
        ::close(listen_fd);
        ::unlink(path.c_str());
        ::rmdir(dir.c_str());
    }
    int make_listener()
    {
        char tmpl[] = "/tmp/agent-test-XXXXXX";
        REQUIRE(::mkdtemp(tmpl));
        dir = tmpl;
        path = dir + "/s";
        listen_fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un sun{};
        sun.sun_family = AF_UNIX;
        std::snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path.c_str());
        REQUIRE(::bind(listen_fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) == 0);
        REQUIRE(::listen(listen_fd, 8) == 0);
        return listen_fd;
    }
    int connect_client() const
    {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un sun{};
        sun.sun_family = AF_UNIX;
        std::snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path.c_str());
        REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) == 0);
        return fd;
    }
};

bytes frame(const bytes& body)
{
    bytes b(4);
    store_u32(b.data(), static_cast<std::uint32_t>(body.size()));
    b.insert(b.end(), body.begin(), body.end());
    return b;
}

void send_all(int fd, const bytes& b)
{
    REQUIRE(::send(fd, b.data(), b.size(), MSG_NOSIGNAL) == ssize_t(b.size()));
}

// One reply body; empty when the agent closed the connection.
bytes read_reply(int fd)
{
    std::uint8_t len[4];
    if (::recv(fd, len, 4, MSG_WAITALL) != 4)
        return {};
    bytes body(load_u32(len));
    REQUIRE(::recv(fd, body.data(), body.size(), MSG_WAITALL) == ssize_t(body.size()));
    return body;
}

} // namespace

TEST_CASE("agent server: pipelined and split requests, oversized ones close")
{
    running_server s;
    const int fd = s.connect_client();
    // Two requests in one write: two answers, in order.
    bytes two = frame(bytes{request_identities});
    bytes sign = frame(sign_req(test_key(key_type::ed25519).public_part().blob(), "d", 0));
    two.insert(two.end(), sign.begin(), sign.end());
    send_all(fd, two);
    CHECK(read_reply(fd) == bytes{identities_answer, 0, 0, 0, 0});
    CHECK(read_reply(fd) == bytes{failure});
    // A request split across writes.
    bytes add = frame(add_request(test_key(key_type::ed25519), nullptr, "split"));
    send_all(fd, bytes(add.begin(), add.begin() + 3));
    send_all(fd, bytes(add.begin() + 3, add.end()));
    CHECK(read_reply(fd) == bytes{success});
    // A length over agent::max_message: the connection is dropped.
    bytes huge(4);
    store_u32(huge.data(), static_cast<std::uint32_t>(max_message + 1));
    send_all(fd, huge);
    CHECK(read_reply(fd).empty());
    ::close(fd);
    // Other clients are unaffected, and the key is still there.
    const int fd2 = s.connect_client();
    send_all(fd2, frame(bytes{request_identities}));
    const bytes ids = read_reply(fd2);
    REQUIRE(ids.size() > 5);
    CHECK(ids[4] == 1);
    // An empty message closes that connection (OpenSSH: parse error).
    send_all(fd2, frame(bytes{}));
    CHECK(read_reply(fd2).empty());
    ::close(fd2);
}
