// The agent client against Debian's ssh-agent (started here on a private
// socket, keys added with ssh-add, killed by PID afterwards), and against
// a fake agent that misbehaves: oversized replies, silence, garbage.
#include "common/auth/agent_client.hpp"

#include "common/keys/key_file.hpp"
#include "common/random.hpp"
#include "common/wire.hpp"
#include "tests/auth/auth_harness.hpp"
#include "tests/skip.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

using namespace longhaul;
using namespace longhaul::test;

namespace {

std::optional<std::string> find_program(const char* name)
{
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    std::size_t pos = 0;
    while (pos <= dirs.size()) {
        auto colon = dirs.find(':', pos);
        std::string dir = dirs.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
        auto candidate = std::filesystem::path(dir) / name;
        if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
        if (colon == std::string::npos)
            break;
        pos = colon + 1;
    }
    return std::nullopt;
}

// Runs argv with stdout/stderr sent to /dev/null; returns the pid.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {})
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_store(extra_env);
    for (char** e = environ; *e != nullptr; ++e)
        if (std::string_view(*e).substr(0, 14) != "SSH_AUTH_SOCK=" && std::string_view(*e).substr(0, 10) != "DISPLAY=")
            env_store.emplace_back(*e);
    std::vector<char*> env;
    for (auto& e : env_store)
        env.push_back(e.data());
    env.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
}

int wait_exit(pid_t pid)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A private directory, removed at the end.
struct temp_dir {
    temp_dir()
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / "lh-agent-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~temp_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::filesystem::path path;
};

// ssh-agent -D on a socket in `dir`, killed by PID on destruction.
struct running_agent {
    running_agent(const std::string& program, const std::filesystem::path& dir) : socket((dir / "agent.sock").string())
    {
        pid = spawn({program, "-D", "-a", socket});
        REQUIRE(pid > 0);
        // Ready when it accepts a connection: the socket file appears at
        // bind(), before listen(), and a connect in between is refused.
        bool ready = false;
        for (int i = 0; i < 500 && !ready; ++i) {
            ready = accepts_connections();
            if (!ready)
                ::usleep(10000);
        }
        REQUIRE(ready);
    }
    bool accepts_connections() const
    {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        REQUIRE(fd >= 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, socket.c_str(), socket.size());
        const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
        ::close(fd);
        return ok;
    }
    ~running_agent()
    {
        if (pid > 0) {
            ::kill(pid, SIGTERM);
            wait_exit(pid);
        }
    }
    std::string socket;
    pid_t pid = -1;
};

// A one-connection fake agent answering every request with `reply` bytes
// (or keeping silent when empty).
struct fake_agent {
    fake_agent(const std::filesystem::path& dir, bytes reply_bytes) : socket((dir / "fake.sock").string())
    {
        listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
        REQUIRE(listener >= 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, socket.c_str(), socket.size());
        REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
        REQUIRE(::listen(listener, 1) == 0);
        thread = std::thread([this, reply = std::move(reply_bytes)] {
            const int c = ::accept(listener, nullptr, nullptr);
            if (c < 0)
                return;
            std::uint8_t buf[4096];
            if (::recv(c, buf, sizeof(buf), 0) > 0 && !reply.empty())
                (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
            while (!stop.load())
                ::usleep(1000);
            ::close(c);
        });
    }
    ~fake_agent()
    {
        stop = true;
        ::shutdown(listener, SHUT_RDWR);
        ::close(listener);
        thread.join();
    }
    std::string socket;
    int listener = -1;
    std::atomic<bool> stop{false};
    std::thread thread;
};

} // namespace

TEST_CASE("agent protocol codec")
{
    bytes req = agent::encode_request_identities();
    CHECK(req == bytes{0, 0, 0, 1, 11});
    bytes sreq = agent::encode_sign_request(bytes{1, 2}, bytes{3}, agent::rsa_sha2_512);
    CHECK(sreq == bytes{0, 0, 0, 16, 13, 0, 0, 0, 2, 1, 2, 0, 0, 0, 1, 3, 0, 0, 0, 4});
    CHECK(agent::sign_flags_for("rsa-sha2-256") == 2);
    CHECK(agent::sign_flags_for("rsa-sha2-512") == 4);
    CHECK(agent::sign_flags_for("ssh-ed25519") == 0);

    auto key = test_key(key_type::ed25519);
    bytes ans;
    wire_writer(ans).u8(12).u32(2).string(key->public_part().blob()).string("mine").string(bytes{0, 0, 0, 3, 'x', 'y', 'z'}).string("odd");
    auto ids = agent::decode_identities_answer(ans);
    REQUIRE(ids.has_value());
    REQUIRE(ids->size() == 2);
    CHECK((*ids)[0].key == key->public_part());
    CHECK((*ids)[0].comment == "mine");
    CHECK(!(*ids)[1].key.has_value());

    CHECK(agent::decode_identities_answer(bytes{5}).error() == errc::unsupported);
    CHECK(agent::decode_sign_response(bytes{30}).error() == errc::unsupported);
    bytes huge;
    wire_writer(huge).u8(12).u32(0xffffff);
    CHECK(agent::decode_identities_answer(huge).error() == errc::too_large);
    bytes trailing;
    wire_writer(trailing).u8(14).string("sig").u8(0);
    CHECK(!agent::decode_sign_response(trailing).has_value());

    // session-bind@openssh.com: type 27, the name, key, session id,
    // signature, and the forwarding flag.
    bytes bind = agent::encode_session_bind(bytes{1}, bytes{2, 3}, bytes{4}, true);
    bytes want_bind;
    wire_writer(want_bind).u8(27).string("session-bind@openssh.com").string(bytes{1}).string(bytes{2, 3}).string(bytes{4}).u8(1);
    REQUIRE(bind.size() == want_bind.size() + 4);
    CHECK(bytes(bind.begin() + 4, bind.end()) == want_bind);
    CHECK(agent::encode_session_bind({}, {}, {}, false).back() == 0);
    CHECK(agent::decode_success(bytes{6}).has_value());
    CHECK(agent::decode_success(bytes{5}).error() == errc::unsupported);
    CHECK(agent::decode_success(bytes{28}).error() == errc::unsupported);
    CHECK(!agent::decode_success(bytes{14}).has_value());
    CHECK(!agent::decode_success(bytes{6, 0}).has_value());
}

TEST_CASE("agent client against ssh-agent")
{
    auto agent_prog = find_program("ssh-agent");
    auto add_prog = find_program("ssh-add");
    if (!agent_prog || !add_prog)
        LONGHAUL_SKIP("ssh-agent or ssh-add not installed (openssh-client)");
    temp_dir dir;
    running_agent agent(*agent_prog, dir.path);

    // Keys written as ssh-keygen would, added with ssh-add.
    system_random rng;
    std::vector<std::shared_ptr<const private_key>> keys = {test_key(key_type::ed25519), test_key(key_type::ecdsa_p384),
                                                            test_key(key_type::rsa)};
    std::vector<std::string> argv = {*add_prog, "-q"};
    for (std::size_t i = 0; i < keys.size(); ++i) {
        auto text = write_private_key(*keys[i], private_key_format::openssh, "", rng);
        REQUIRE(text.has_value());
        const auto file = dir.path / ("key" + std::to_string(i));
        REQUIRE(write_private_key_file(file, *text).has_value());
        argv.push_back(file.string());
    }
    const pid_t add = spawn(argv, {"SSH_AUTH_SOCK=" + agent.socket, "SSH_ASKPASS=/bin/false"});
    REQUIRE(add > 0);
    REQUIRE(wait_exit(add) == 0);

    auto client = agent_client::connect(agent.socket, std::chrono::seconds(10));
    REQUIRE(client.has_value());
    auto ids = client->request_identities();
    REQUIRE(ids.has_value());
    REQUIRE(ids->size() == keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto& id = (*ids)[i];
        REQUIRE(id.key.has_value());
        CHECK(*id.key == keys[i]->public_part());
        // ssh-add uses the file's comment, which is empty: then the path.
        CHECK(!id.comment.empty());
        for (auto alg : signature_algorithms_for(keys[i]->type())) {
            if (alg == "ssh-rsa")
                continue;
            CAPTURE(alg);
            const bytes data = {'s', 'i', 'g', 'n', ' ', 'm', 'e'};
            auto sig = client->sign(id.key_blob, data, agent::sign_flags_for(alg));
            REQUIRE(sig.has_value());
            CHECK(id.key->verify(alg, data, *sig).has_value());
        }
    }
    // A key the agent does not hold.
    auto unknown = client->sign(test_key(key_type::ecdsa_p256)->public_part().blob(), bytes{1}, 0);
    REQUIRE(!unknown.has_value());
    CHECK(unknown.error() == errc::unsupported);
    // The connection is still usable after a refusal.
    CHECK(client->request_identities().has_value());

    // session-bind@openssh.com: the agent checks the host's signature of
    // the session id; a wrong one is refused, a right one accepted (on a
    // fresh connection: OpenSSH's agent binds a connection once per host).
    {
        auto host = test_key(key_type::ed25519);
        const bytes session_id(32, 0x5a);
        auto good = host->sign(host->public_part().type_name(), session_id);
        REQUIRE(good.has_value());
        auto bad = host->sign(host->public_part().type_name(), bytes(32, 0xa5));
        REQUIRE(bad.has_value());
        auto fresh = agent_client::connect(agent.socket, std::chrono::seconds(10));
        REQUIRE(fresh.has_value());
        CHECK(fresh->bind_session(host->public_part().blob(), session_id, *bad, false).error() == errc::unsupported);
        auto other = agent_client::connect(agent.socket, std::chrono::seconds(10));
        REQUIRE(other.has_value());
        CHECK(other->bind_session(host->public_part().blob(), session_id, *good, true).has_value());
        CHECK(other->request_identities().has_value());
    }

    SUBCASE("the client machine signs through the agent")
    {
        auth_pair p;
        p.session.server_sig_algs = "ssh-ed25519,rsa-sha2-512,rsa-sha2-256";
        p.users["alice"].authorized.push_back(keys[2]->public_part());
        for (const auto& id : *ids)
            p.client_config.identities.push_back(identity_from_agent(id));
        p.on_sign = [&](const client_auth_event& ev) -> std::optional<bytes> {
            auto s = client->sign(ev.identity->key->blob(), ev.data, ev.agent_flags);
            if (!s)
                return std::nullopt;
            return *s;
        };
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(p.server_logged("Accepted publickey for alice from 127.0.0.1 port 50000 ssh2: " +
                              describe_key(keys[2]->public_part())));
    }
}

TEST_CASE("agent client: unreachable, silent and hostile agents")
{
    temp_dir dir;
    auto none = agent_client::connect((dir.path / "nothing.sock").string());
    REQUIRE(!none.has_value());
    CHECK(none.error() == errc::io_error);
    CHECK(agent_client::connect("").error() == errc::invalid_argument);
    CHECK(agent_client::connect(std::string(200, 'x')).error() == errc::invalid_argument);

    {
        fake_agent silent(dir.path, {});
        auto c = agent_client::connect(silent.socket, std::chrono::milliseconds(200));
        REQUIRE(c.has_value());
        auto r = c->request_identities();
        REQUIRE(!r.has_value());
        CHECK(r.error() == errc::timeout);
    }
    std::filesystem::remove(dir.path / "fake.sock");
    {
        // A length beyond 256 KiB is refused before reading it.
        fake_agent big(dir.path, bytes{0, 4, 0, 1, 12});
        auto c = agent_client::connect(big.socket, std::chrono::seconds(5));
        REQUIRE(c.has_value());
        auto r = c->request_identities();
        REQUIRE(!r.has_value());
        CHECK(r.error() == errc::too_large);
        // The connection is closed after a broken exchange.
        CHECK(c->request_identities().error() == errc::connection_closed);
    }
    std::filesystem::remove(dir.path / "fake.sock");
    {
        fake_agent garbage(dir.path, bytes{0, 0, 0, 3, 12, 0, 0});
        auto c = agent_client::connect(garbage.socket, std::chrono::seconds(5));
        REQUIRE(c.has_value());
        CHECK(!c->request_identities().has_value());
    }
}

TEST_CASE("agent protocol: ssh-add's requests")
{
    const bytes fields = {0, 0, 0, 3, 'k', 'e', 'y'};
    SUBCASE("add identity without constraints")
    {
        secret_bytes m = agent::encode_add_identity(fields, "me", {});
        const bytes expected = {0, 0, 0, 14, agent::add_identity, 0, 0, 0, 3, 'k', 'e', 'y', 0, 0, 0, 2, 'm', 'e'};
        CHECK(bytes(m.span().begin(), m.span().end()) == expected);
    }
    SUBCASE("add identity with lifetime and confirm")
    {
        agent::key_constraints c;
        c.lifetime_seconds = 0x01020304;
        c.confirm = true;
        CHECK(!c.empty());
        secret_bytes m = agent::encode_add_identity(fields, "", c);
        const bytes expected = {0, 0, 0, 18, agent::add_id_constrained, 0, 0, 0, 3, 'k', 'e', 'y', 0, 0, 0, 0,
                                agent::constrain_lifetime, 1, 2, 3, 4, agent::constrain_confirm};
        CHECK(bytes(m.span().begin(), m.span().end()) == expected);
    }
    SUBCASE("confirm alone")
    {
        agent::key_constraints c;
        c.confirm = true;
        secret_bytes m = agent::encode_add_identity(fields, "", c);
        CHECK(m.size() == 4 + 1 + fields.size() + 4 + 1);
        CHECK(m.data()[4] == agent::add_id_constrained);
        CHECK(m.data()[m.size() - 1] == agent::constrain_confirm);
    }
    SUBCASE("destination constraints")
    {
        // One constraint: from the origin (no host) to host "h" for user
        // "u", known by one key blob; each hop and the constraint nested
        // in strings, as OpenSSH's encode_dest_constraint writes them.
        agent::key_constraints c;
        agent::destination_constraint d;
        d.to.user = "u";
        d.to.hostname = "h";
        d.to.keys.push_back({bytes{0xAB}, true});
        c.destinations.push_back(d);
        CHECK(!c.empty());
        secret_bytes m = agent::encode_add_identity(fields, "", c);
        bytes expected = {agent::add_id_constrained, 0, 0, 0, 3, 'k', 'e', 'y', 0, 0, 0, 0, agent::constrain_extension};
        wire_writer w(expected);
        w.string(agent::restrict_destination_extension);
        const bytes from_hop = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        const bytes to_hop = {0, 0, 0, 1, 'u', 0, 0, 0, 1, 'h', 0, 0, 0, 0, 0, 0, 0, 1, 0xAB, 1};
        bytes one;
        wire_writer(one).string(from_hop).string(to_hop).string(std::string_view{});
        bytes all;
        wire_writer(all).string(one);
        w.string(all);
        bytes framed;
        wire_writer(framed).u32(static_cast<std::uint32_t>(expected.size())).raw(expected);
        CHECK(to_hex(m.span()) == to_hex(framed));
    }
    CHECK(agent::encode_remove_identity(bytes{9, 8}) == bytes{0, 0, 0, 7, agent::remove_identity, 0, 0, 0, 2, 9, 8});
    CHECK(agent::encode_remove_all_identities() == bytes{0, 0, 0, 1, agent::remove_all_identities});
    CHECK(agent::encode_remove_all_rsa_identities() == bytes{0, 0, 0, 1, 9});
    {
        secret_bytes l = agent::encode_lock("pw", true);
        CHECK(bytes(l.span().begin(), l.span().end()) == bytes{0, 0, 0, 7, agent::lock, 0, 0, 0, 2, 'p', 'w'});
        secret_bytes u = agent::encode_lock("", false);
        CHECK(bytes(u.span().begin(), u.span().end()) == bytes{0, 0, 0, 5, agent::unlock, 0, 0, 0, 0});
    }
    CHECK(agent::encode_query() == bytes{0, 0, 0, 10, agent::extension, 0, 0, 0, 5, 'q', 'u', 'e', 'r', 'y'});
    CHECK(agent::encode_extension("x", bytes{7}) == bytes{0, 0, 0, 7, agent::extension, 0, 0, 0, 1, 'x', 7});

    SUBCASE("query answers")
    {
        auto names = agent::decode_query_answer(bytes{agent::success, 0, 0, 0, 1, 'a', 0, 0, 0, 2, 'b', 'c'});
        REQUIRE(names.has_value());
        CHECK(*names == std::vector<std::string>{"a", "bc"});
        auto response = agent::decode_query_answer(
            bytes{agent::extension_response, 0, 0, 0, 5, 'q', 'u', 'e', 'r', 'y', 0, 0, 0, 1, 'z'});
        REQUIRE(response.has_value());
        CHECK(*response == std::vector<std::string>{"z"});
        CHECK(agent::decode_query_answer(bytes{agent::failure}).error() == errc::unsupported);
        CHECK(agent::decode_query_answer(bytes{agent::extension_failure}).error() == errc::unsupported);
        CHECK(!agent::decode_query_answer(bytes{agent::success, 0, 0, 0, 9, 'a'}).has_value());
        CHECK(!agent::decode_query_answer(bytes{agent::sign_response}).has_value());
        CHECK(!agent::decode_query_answer(bytes{}).has_value());
    }
}

TEST_CASE("agent client adds, removes and locks keys in ssh-agent")
{
    auto agent_prog = find_program("ssh-agent");
    if (!agent_prog)
        LONGHAUL_SKIP("ssh-agent not installed (openssh-client)");
    temp_dir dir;
    running_agent agent(*agent_prog, dir.path);
    auto client = agent_client::connect(agent.socket, std::chrono::seconds(10));
    REQUIRE(client.has_value());

    system_random rng;
    auto ed = test_key(key_type::ed25519);
    auto ec = test_key(key_type::ecdsa_p256);
    auto rsa = test_key(key_type::rsa);
    REQUIRE(client->add_identity(*ed, nullptr, "ed").has_value());
    agent::key_constraints confirm_later;
    confirm_later.lifetime_seconds = 3600;
    REQUIRE(client->add_identity(*ec, nullptr, "ec", confirm_later).has_value());
    REQUIRE(client->add_identity(*rsa, nullptr, "rsa").has_value());

    // A user certificate of the Ed25519 key, signed by the RSA key.
    certificate_fields fields;
    fields.key_id = "cert-id";
    fields.principals = {"alice"};
    fields.extensions = default_user_extensions();
    auto cert = certificate::sign(fields, ed->public_part(), *rsa, rng);
    REQUIRE(cert.has_value());
    REQUIRE(client->add_identity(*ed, &*cert, "ed-cert").has_value());
    // A certificate that does not certify the key is refused here.
    CHECK(!client->add_identity(*ec, &*cert, "wrong").has_value());

    auto ids = client->request_identities();
    REQUIRE(ids.has_value());
    REQUIRE(ids->size() == 4);
    CHECK((*ids)[0].comment == "ed");
    CHECK((*ids)[1].comment == "ec");
    CHECK((*ids)[3].key_blob == cert->blob());
    CHECK(!(*ids)[3].key.has_value());
    // The agent signs with the certified key for the certificate.
    const bytes data = {'d', 'a', 't', 'a'};
    auto sig = client->sign(cert->blob(), data, 0);
    REQUIRE(sig.has_value());
    CHECK(ed->public_part().verify("ssh-ed25519", data, *sig).has_value());

    // Removing one; removing it again is refused.
    CHECK(client->remove_identity(ec->public_part().blob()).has_value());
    CHECK(client->remove_identity(ec->public_part().blob()).error() == errc::unsupported);
    CHECK(client->request_identities()->size() == 3);

    // Locked: no identities, wrong password refused, right one unlocks.
    REQUIRE(client->lock("secret", true).has_value());
    CHECK(client->request_identities()->empty());
    CHECK(client->lock("wrong", false).error() == errc::unsupported);
    REQUIRE(client->lock("secret", false).has_value());
    CHECK(client->request_identities()->size() == 3);

    // OpenSSH 9.2's agent does not know "query".
    CHECK(client->query_extensions().error() == errc::unsupported);

    CHECK(client->remove_all_identities().has_value());
    CHECK(client->request_identities()->empty());
    // Still usable after the SSH1 request that the agent refused.
    CHECK(client->add_identity(*ed, nullptr, "again").has_value());
}
