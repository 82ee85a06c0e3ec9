// Which agent ssh uses and forwards (IdentityAgent, ForwardAgent,
// SSH_AUTH_SOCK), as OpenSSH 9.2 decides it.
#include "ssh/client_agent_forwarding.hpp"
#include "ssh/client_config.hpp"
#include "ssh_test_util.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace longhaul;

namespace {

// Sets (or unsets) a variable for one test, restoring it after.
class scoped_env {
public:
    scoped_env(const char* name, const char* value) : name_(name)
    {
        if (const char* old = std::getenv(name))
            old_ = old;
        if (value != nullptr)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~scoped_env()
    {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

// A listening Unix socket: an agent that answers a connect.
class listening_socket {
public:
    explicit listening_socket(const std::string& path) : path_(path)
    {
        sockaddr_un addr{};
        REQUIRE(path.size() < sizeof addr.sun_path);
        addr.sun_family = AF_UNIX;
        path.copy(addr.sun_path, path.size());
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd_ >= 0);
        REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(fd_, 4) == 0);
    }
    ~listening_socket()
    {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    listening_socket(const listening_socket&) = delete;
    listening_socket& operator=(const listening_socket&) = delete;

private:
    std::string path_;
    int fd_ = -1;
};

} // namespace

TEST_CASE("agent_socket_path: IdentityAgent decides, else SSH_AUTH_SOCK")
{
    scoped_env sock("SSH_AUTH_SOCK", "/run/agent.sock");
    scoped_env other("LH_TEST_AGENT", "/run/other.sock");
    client_config c;
    CHECK(agent_socket_path(c) == "/run/agent.sock");
    c.identity_agent = "SSH_AUTH_SOCK";
    CHECK(agent_socket_path(c) == "/run/agent.sock");
    c.identity_agent = "none";
    CHECK(agent_socket_path(c).empty());
    c.identity_agent = "/tmp/a.sock";
    CHECK(agent_socket_path(c) == "/tmp/a.sock");
    c.identity_agent = "$LH_TEST_AGENT";
    CHECK(agent_socket_path(c) == "/run/other.sock");
    c.identity_agent = "$LH_TEST_UNSET_VARIABLE";
    CHECK(agent_socket_path(c).empty());
    scoped_env gone("SSH_AUTH_SOCK", nullptr);
    c.identity_agent.reset();
    CHECK(agent_socket_path(c).empty());
}

TEST_CASE("agent_forwarding_socket: only when asked and the agent answers")
{
    test::scratch_dir dir;
    const std::string agent = dir / "agent.sock";
    const std::string other = dir / "other.sock";
    client_config c;
    scoped_env sock("SSH_AUTH_SOCK", agent.c_str());
    c.forward_agent = true;
    // Nothing listening: OpenSSH's check_agent_present turns it off.
    CHECK(agent_forwarding_socket(c).empty());
    listening_socket a(agent);
    CHECK(agent_forwarding_socket(c) == agent);
    c.forward_agent = false;
    CHECK(agent_forwarding_socket(c).empty());
    c.forward_agent.reset();
    CHECK(agent_forwarding_socket(c).empty());
    // ForwardAgent naming a socket: that one is forwarded, if the agent in
    // use answers.
    c.forward_agent = true;
    c.forward_agent_sock_path = other;
    CHECK(agent_forwarding_socket(c) == other);
    c.identity_agent = "none";
    CHECK(agent_forwarding_socket(c).empty());
}
