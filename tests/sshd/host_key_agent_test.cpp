// HostKeyAgent: the SSH_AUTH_SOCK rule, which of a HostKey's halves serves
// it, where its public half is read from, the keyword in sshd_config, the
// agent keys in the connection processes' state, and the signer against a
// fake agent (the flags it is sent, what it answers).
#include "sshd/host_key_agent.hpp"

#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "common/wire.hpp"
#include "sshd/rexec_state.hpp"
#include "tests/sshd/sshd_config_fixtures.hpp"

#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>
#include <thread>

using namespace longhaul;

namespace {

// A one-connection agent on `path`: answers each SIGN_REQUEST with a
// signature by `key` made with `answer_alg` (or the flags' algorithm when
// empty), recording the flags it was sent.
class fake_agent {
public:
    fake_agent(const std::string& path, const private_key& key, std::string answer_alg)
        : key_(key), answer_alg_(std::move(answer_alg))
    {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(fd_, 4) == 0);
        thread_ = std::thread([this] { serve(); });
    }
    ~fake_agent()
    {
        ::shutdown(fd_, SHUT_RDWR);
        thread_.join();
        ::close(fd_);
    }
    fake_agent(const fake_agent&) = delete;
    fake_agent& operator=(const fake_agent&) = delete;

    std::vector<std::uint32_t> flags_seen;
    int connections = 0;

private:
    static bool read_all(int fd, std::uint8_t* p, std::size_t n)
    {
        while (n > 0) {
            const ssize_t r = ::read(fd, p, n);
            if (r <= 0)
                return false;
            p += r;
            n -= static_cast<std::size_t>(r);
        }
        return true;
    }
    void serve()
    {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0)
            return;
        ++connections;
        for (;;) {
            std::uint8_t len[4];
            if (!read_all(c, len, 4))
                break;
            bytes body((std::size_t(len[0]) << 24) | (std::size_t(len[1]) << 16) | (std::size_t(len[2]) << 8) | len[3]);
            if (!read_all(c, body.data(), body.size()))
                break;
            wire_reader r(body);
            (void)r.u8();
            (void)r.string();
            const byte_span data = r.string();
            const std::uint32_t flags = r.u32();
            flags_seen.push_back(flags);
            std::string alg = answer_alg_;
            if (alg.empty())
                alg = flags == agent::rsa_sha2_512 ? "rsa-sha2-512"
                      : flags == agent::rsa_sha2_256 ? "rsa-sha2-256"
                                                     : std::string(signature_algorithms_for(key_.type()).back());
            auto sig = key_.sign(alg, data);
            bytes reply;
            wire_writer w(reply);
            w.u32(static_cast<std::uint32_t>(1 + 4 + sig->size())).u8(agent::sign_response).string(*sig);
            if (::write(c, reply.data(), reply.size()) != static_cast<ssize_t>(reply.size()))
                break;
        }
        ::close(c);
    }

    const private_key& key_;
    std::string answer_alg_;
    int fd_ = -1;
    std::thread thread_;
};

} // namespace

TEST_CASE("HostKeyAgent: SSH_AUTH_SOCK names the environment's socket")
{
    CHECK(host_key_agent_socket("/run/agent.sock", "/tmp/other") == "/run/agent.sock");
    CHECK(host_key_agent_socket("SSH_AUTH_SOCK", "/tmp/agent.1") == "/tmp/agent.1");
    CHECK(host_key_agent_socket("SSH_AUTH_SOCK", nullptr).empty());
    // Only the exact spelling: anything else is a socket path.
    CHECK(host_key_agent_socket("ssh_auth_sock", "/tmp/agent.1") == "ssh_auth_sock");
    CHECK(host_key_agent_socket("", "/tmp/agent.1").empty());
}

TEST_CASE("HostKeyAgent: a private key that loads is used directly, else the agent")
{
    using s = host_key_source;
    CHECK(choose_host_key_source(true, false, false) == s::private_key);
    CHECK(choose_host_key_source(true, true, true) == s::private_key);
    CHECK(choose_host_key_source(false, true, true) == s::agent);
    CHECK(choose_host_key_source(false, true, false) == s::unusable); // no agent reached at start-up
    CHECK(choose_host_key_source(false, false, true) == s::unusable); // no public half
    CHECK(choose_host_key_source(false, false, false) == s::unusable);
}

TEST_CASE("HostKeyAgent: the public half is the HostKey file itself, else FILE.pub")
{
    longhaul::test::temp_dir dir;
    auto key = private_key::generate(key_type::ed25519);
    REQUIRE(key);
    const std::string line = format_public_key_line(key->public_part(), "c") + "\n";
    longhaul::test::write_file(dir.file("k.pub"), line);
    longhaul::test::write_file(dir.file("k"), "-----BEGIN OPENSSH PRIVATE KEY-----\nnot read\n", 0600);
    auto a = load_host_public_key(dir.file("k.pub"));
    REQUIRE(a);
    CHECK(a->blob() == key->public_part().blob());
    auto b = load_host_public_key(dir.file("k")); // a private file: k.pub
    REQUIRE(b);
    CHECK(b->blob() == key->public_part().blob());
    CHECK_FALSE(load_host_public_key(dir.file("absent")));
    longhaul::test::write_file(dir.file("lonely"), "-----BEGIN OPENSSH PRIVATE KEY-----\n", 0600);
    CHECK_FALSE(load_host_public_key(dir.file("lonely")));
}

TEST_CASE("HostKeyAgent in sshd_config: first value wins, paths made absolute, SSH_AUTH_SOCK kept")
{
    CHECK(parse("HostKeyAgent /run/a.sock\nHostKeyAgent /run/b.sock\n").global().host_key_agent == "/run/a.sock");
    CHECK(parse("HostKeyAgent SSH_AUTH_SOCK\n").global().host_key_agent == "SSH_AUTH_SOCK");
    // Relative to the working directory, as OpenSSH's derelativise_path.
    CHECK(parse("HostKeyAgent agent.sock\n").global().host_key_agent ==
          (std::filesystem::current_path() / "agent.sock").string());
    CHECK(parse("").global().host_key_agent.empty());
    CHECK(error_of("HostKeyAgent\n").starts_with("test.cfg line 1: no argument after keyword \"HostKeyAgent\""));
}

TEST_CASE("HostKeyAgent: the agent's keys reach the connection processes")
{
    rexec_state s;
    s.agent_host_keys = {bytes{1, 2, 3}, bytes{4}};
    auto encoded = encode_rexec_state(s);
    REQUIRE(encoded);
    auto back = decode_rexec_state(encoded->span());
    REQUIRE(back);
    CHECK(back->agent_host_keys == s.agent_host_keys);
    s.agent_host_keys.assign(rexec_max_keys + 1, bytes{1});
    CHECK_FALSE(encode_rexec_state(s));
}

TEST_CASE("HostKeyAgent: the signer asks with rsa-sha2 flags, keeps one connection, checks the algorithm")
{
    longhaul::test::temp_dir dir;
    auto rsa = private_key::generate(key_type::rsa, 2048);
    REQUIRE(rsa);
    const bytes data(32, 7);
    std::string error;
    {
        fake_agent agent(dir.file("a.sock"), *rsa, "");
        host_key_agent_signer signer(dir.file("a.sock"));
        for (const char* alg : {"rsa-sha2-256", "rsa-sha2-512"}) {
            auto sig = signer.sign(rsa->public_part(), alg, data, error);
            REQUIRE(sig);
            CHECK(rsa->public_part().verify(alg, data, *sig));
        }
        signer.forget();
        ::unlink(dir.file("a.sock").c_str());
        CHECK(agent.flags_seen == std::vector<std::uint32_t>{agent::rsa_sha2_256, agent::rsa_sha2_512});
        CHECK(agent.connections == 1);
    }
    {
        // An agent that ignores the flags: refused here, with the reason.
        fake_agent agent(dir.file("b.sock"), *rsa, "ssh-rsa");
        host_key_agent_signer signer(dir.file("b.sock"));
        CHECK_FALSE(signer.sign(rsa->public_part(), "rsa-sha2-512", data, error));
        CHECK(error == "agent sign: the agent signed with ssh-rsa instead of rsa-sha2-512");
        signer.forget();
    }
    host_key_agent_signer nowhere(dir.file("none.sock"));
    CHECK_FALSE(nowhere.sign(rsa->public_part(), "rsa-sha2-256", data, error));
    CHECK(error == "Unable to get agent socket: No such file or directory");
    host_key_agent_signer unset("");
    CHECK_FALSE(unset.sign(rsa->public_part(), "rsa-sha2-256", data, error));
    CHECK(error == "Unable to get agent socket: agent not present");
}
