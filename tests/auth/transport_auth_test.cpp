// The two authentication machines over two real transport cores (the
// in-memory pair from tests/transport): session id, server-sig-algs and the
// hostbound extension come from the key exchange, messages travel
// encrypted, and user_authenticated() turns on delayed compression.
#include "common/auth/client_auth.hpp"
#include "common/auth/server_auth.hpp"

#include "tests/transport/harness.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

struct wired {
    explicit wired(transport_config ccfg = {}, transport_config scfg = {}) : pair(std::move(ccfg), std::move(scfg)) {}

    transport_pair pair;
    std::unique_ptr<client_auth> client;
    std::unique_ptr<server_auth> server;
    std::vector<std::string> client_log, server_log;
    std::string password = "swordfish";
    std::optional<std::string> failed;
    bool client_done = false, server_done = false;

    void pump()
    {
        for (bool more = true; more;) {
            more = false;
            for (auto ev = client->poll(); ev.type != client_auth_event_type::none; ev = client->poll()) {
                more = true;
                switch (ev.type) {
                case client_auth_event_type::send: REQUIRE(pair.client->send(ev.payload).has_value()); break;
                case client_auth_event_type::log: client_log.push_back(ev.text); break;
                case client_auth_event_type::prompt: {
                    std::vector<secret_bytes> r;
                    r.emplace_back(as_bytes(password));
                    client->answer_prompt(std::move(r));
                    break;
                }
                case client_auth_event_type::authenticated:
                    pair.client->user_authenticated();
                    client_done = true;
                    break;
                case client_auth_event_type::failed: failed = ev.text; break;
                default: break;
                }
            }
            for (auto ev = server->poll(); ev.type != server_auth_event_type::none; ev = server->poll()) {
                more = true;
                switch (ev.type) {
                case server_auth_event_type::send: REQUIRE(pair.server->send(ev.payload).has_value()); break;
                case server_auth_event_type::log: server_log.push_back(ev.text); break;
                case server_auth_event_type::check_password:
                    server->answer_password(as_string_view(ev.password.span()) == "swordfish");
                    break;
                case server_auth_event_type::unimplemented: pair.server->send_unimplemented(ev.seq); break;
                case server_auth_event_type::authenticated:
                    pair.server->user_authenticated();
                    server_done = true;
                    break;
                case server_auth_event_type::disconnect: pair.server->disconnect(ev.reason, ev.text); break;
                default: break;
                }
            }
        }
    }

    void start(client_auth_config ccfg, const std::vector<public_key>& authorized)
    {
        pair.run();
        REQUIRE(pair.client->established());
        ccfg.user = "alice";
        ccfg.host = "localhost";
        ccfg.remote_ip = "127.0.0.1";
        client = std::make_unique<client_auth>(std::move(ccfg), client_auth_session_from(*pair.client));

        server_auth_config scfg;
        scfg.remote_ip = "127.0.0.1";
        scfg.remote_port = 41000;
        scfg.session_id = to_bytes(pair.server->session_id());
        scfg.host_key_blob = server_host_key_blob(*pair.server);
        server_auth_policy policy;
        policy.lookup_user = [](std::string_view u) {
            return user_lookup{u == "alice" ? user_status::valid : user_status::unknown, false, std::nullopt};
        };
        policy.key_allowed = [authorized](std::string_view, const public_key& k, bool) {
            key_decision d;
            d.allowed = std::find(authorized.begin(), authorized.end(), k) != authorized.end();
            return d;
        };
        server = std::make_unique<server_auth>(std::move(scfg), std::move(policy));

        pair.on_payload = [this](bool at_server, const transport_event& ev) {
            if (at_server)
                server->handle(ev.payload, ev.seq);
            else
                client->handle(ev.payload, ev.seq);
            pump();
        };
        client->start();
        pump();
        pair.run();
    }
};

} // namespace

TEST_CASE("authentication over two transport cores")
{
    auto rsa = private_key::generate(key_type::rsa, 2048);
    REQUIRE(rsa.has_value());
    auto key = std::make_shared<const private_key>(std::move(*rsa));

    transport_config ccfg;
    ccfg.compression = "zlib@openssh.com,none";
    transport_config scfg;
    scfg.compression = "zlib@openssh.com,none";
    scfg.server_sig_algs = "ssh-ed25519,rsa-sha2-256,rsa-sha2-512";
    scfg.extra_extensions = {{"publickey-hostbound@openssh.com", "0"}};
    wired w(ccfg, scfg);

    client_auth_config cfg;
    client_identity id;
    id.name = "/home/alice/.ssh/id_rsa";
    id.key = key->public_part();
    id.loaded = key;
    cfg.identities.push_back(std::move(id));
    // The server lists rsa-sha2-256 first, but the client's preference rules.
    w.start(cfg, {key->public_part()});

    INFO(w.client_log.size());
    CHECK(w.client_done);
    CHECK(w.server_done);
    CHECK(w.client->method() == "publickey");
    CHECK(std::find(w.server_log.begin(), w.server_log.end(),
                    "Accepted publickey for alice from 127.0.0.1 port 41000 ssh2: " + describe_key(key->public_part())) !=
          w.server_log.end());
    CHECK(std::find(w.client_log.begin(), w.client_log.end(),
                    "Authenticated to localhost ([127.0.0.1]:22) using \"publickey\".") != w.client_log.end());
    // The signed request was host-bound: the server checked its own host key in it.
    CHECK(std::find(w.server_log.begin(), w.server_log.end(),
                    "userauth-request for user alice service ssh-connection method "
                    "publickey-hostbound-v00@openssh.com [preauth]") != w.server_log.end());
    // The client saw the server's extensions through the transport.
    auto session = client_auth_session_from(*w.pair.client);
    REQUIRE(session.server_sig_algs.has_value());
    CHECK(session.hostbound_offered);
    CHECK(session.host_key_blob == server_host_key_blob(*w.pair.server));
    // Data still flows after authentication (delayed compression on).
    const bytes data = {94, 1, 2, 3};
    std::vector<bytes> got;
    w.pair.on_payload = [&](bool at_server, const transport_event& ev) {
        if (at_server)
            got.emplace_back(ev.payload.begin(), ev.payload.end());
    };
    REQUIRE(w.pair.client->send(data).has_value());
    w.pair.run();
    REQUIRE(got.size() == 1);
    CHECK(got[0] == data);
    CHECK(!w.pair.client_log.disconnected);
}

TEST_CASE("password over two transport cores, and a wrong one")
{
    wired w;
    client_auth_config cfg;
    cfg.preferred_authentications = "password";
    w.start(cfg, {});
    CHECK(w.client_done);
    CHECK(w.server_done);

    wired bad;
    bad.password = "nope";
    bad.start(cfg, {});
    CHECK(!bad.client_done);
    REQUIRE(bad.failed.has_value());
    CHECK(*bad.failed == "alice@localhost: Permission denied (publickey,password,keyboard-interactive).");
    CHECK(std::count(bad.server_log.begin(), bad.server_log.end(),
                     "Failed password for alice from 127.0.0.1 port 41000 ssh2") == 3);
}
