// The client machine against a hand-played server: method order and
// re-selection rules, and hostile or out-of-place messages ending in a
// clean disconnect.
#include "common/auth/client_auth.hpp"

#include "common/wire.hpp"
#include "tests/auth/auth_harness.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

struct client_driver {
    explicit client_driver(client_auth_config cfg = {})
    {
        cfg.user = "alice";
        cfg.host = "h";
        client = std::make_unique<client_auth>(std::move(cfg), client_auth_session{});
        client->start();
        drain();
    }
    void feed(const bytes& p)
    {
        client->handle(p, 0);
        drain();
    }
    void drain()
    {
        for (auto ev = client->poll(); ev.type != client_auth_event_type::none; ev = client->poll()) {
            switch (ev.type) {
            case client_auth_event_type::send: sent.push_back(to_bytes(ev.payload.span())); break;
            case client_auth_event_type::log: logs.push_back(ev.text); break;
            case client_auth_event_type::prompt: prompts.push_back(ev); break;
            case client_auth_event_type::disconnect: disconnect = ev.text; break;
            case client_auth_event_type::failed: failed = ev.text; break;
            default: break;
            }
        }
    }
    std::string last_method() const
    {
        auto r = userauth_request::decode(sent.back());
        return r ? r->method : std::string("?");
    }
    std::unique_ptr<client_auth> client;
    std::vector<bytes> sent;
    std::vector<std::string> logs;
    std::vector<client_auth_event> prompts;
    std::optional<std::string> disconnect, failed;
};

bytes accept() { return service_accept{"ssh-userauth"}.encode(); }
bytes failure(std::string list, bool partial = false) { return userauth_failure{std::move(list), partial}.encode(); }

} // namespace

TEST_CASE("the client starts with the service request and none")
{
    client_driver d;
    REQUIRE(d.sent.size() == 1);
    auto rq = service_request::decode(d.sent[0]);
    REQUIRE(rq.has_value());
    CHECK(rq->service == "ssh-userauth");
    d.feed(accept());
    REQUIRE(d.sent.size() == 2);
    auto none = userauth_request::decode(d.sent[1]);
    REQUIRE(none.has_value());
    CHECK(none->user == "alice");
    CHECK(none->service == "ssh-connection");
    CHECK(none->method == "none");
}

TEST_CASE("an old server's bare SERVICE_ACCEPT is tolerated")
{
    client_driver d;
    d.feed(bytes{6});
    CHECK(!d.disconnect);
    CHECK(d.last_method() == "none");
}

TEST_CASE("methods follow PreferredAuthentications, restarting when the server's list changes")
{
    client_auth_config cfg;
    cfg.preferred_authentications = "password,keyboard-interactive";
    client_driver d(cfg);
    d.feed(accept());
    d.feed(failure("keyboard-interactive,password"));
    // password first (our order), the prompt is out.
    REQUIRE(d.prompts.size() == 1);
    d.client->answer_prompt([] {
        std::vector<secret_bytes> v;
        v.push_back(secret("x"));
        return v;
    }());
    d.drain();
    CHECK(d.last_method() == "password");
    // A different list (partial success): selection starts over.
    d.feed(failure("keyboard-interactive", true));
    CHECK(d.last_method() == "keyboard-interactive");
    CHECK(std::find(d.logs.begin(), d.logs.end(), "Next authentication method: keyboard-interactive") != d.logs.end());
    // Methods we do not implement are passed over.
    client_driver e;
    e.feed(accept());
    e.feed(failure("gssapi-with-mic,hostbased"));
    REQUIRE(e.failed);
    CHECK(*e.failed == "alice@h: Permission denied (gssapi-with-mic,hostbased).");
}

TEST_CASE("hostile or out-of-place server messages")
{
    const auto ready = [] {
        auto d = std::make_unique<client_driver>();
        d->feed(accept());
        return d;
    };
    SUBCASE("USERAUTH messages before SERVICE_ACCEPT")
    {
        client_driver d;
        d.feed(userauth_success{}.encode());
        REQUIRE(d.disconnect);
        CHECK(*d.disconnect == "bad message during authentication: type 52");
    }
    SUBCASE("a second SERVICE_ACCEPT")
    {
        auto d = ready();
        d->feed(accept());
        REQUIRE(d->disconnect);
        CHECK(*d->disconnect == "bad message during authentication: type 6");
    }
    SUBCASE("message 60 while no method uses it")
    {
        auto d = ready();
        d->feed(userauth_pk_ok{"ssh-ed25519", {1}}.encode());
        REQUIRE(d->disconnect);
        CHECK(*d->disconnect == "bad message during authentication: type 60");
    }
    SUBCASE("message 61 to the client")
    {
        auto d = ready();
        d->feed(bytes{61, 0, 0, 0, 0});
        REQUIRE(d->disconnect);
    }
    SUBCASE("truncated FAILURE")
    {
        auto d = ready();
        bytes f = failure("publickey");
        f.pop_back();
        d->feed(f);
        REQUIRE(d->disconnect);
        CHECK(*d->disconnect == "invalid format");
    }
    SUBCASE("SUCCESS with trailing bytes")
    {
        auto d = ready();
        d->feed(bytes{52, 0});
        REQUIRE(d->disconnect);
        CHECK(!d->client->authenticated());
    }
    SUBCASE("a malformed banner")
    {
        auto d = ready();
        d->feed(bytes{53, 0, 0, 0, 9, 'x'});
        REQUIRE(d->disconnect);
    }
    SUBCASE("an INFO_REQUEST with a NUL in a prompt")
    {
        client_auth_config cfg;
        cfg.preferred_authentications = "keyboard-interactive";
        client_driver d(cfg);
        d.feed(accept());
        d.feed(failure("keyboard-interactive"));
        CHECK(d.last_method() == "keyboard-interactive");
        bytes ir;
        wire_writer(ir).u8(60).string("").string("").string("").u32(1).string(std::string_view("a\0b", 3)).u8(0);
        d.feed(ir);
        REQUIRE(d.disconnect);
    }
    SUBCASE("a PK_OK for a key never offered")
    {
        auto key = test_key(key_type::ed25519);
        client_auth_config cfg;
        cfg.identities.push_back(loaded_identity(key, "/mine"));
        client_driver d(cfg);
        d.feed(accept());
        d.feed(failure("publickey"));
        auto other = test_key(key_type::ed25519, 3)->public_part();
        d.feed(userauth_pk_ok{"ssh-ed25519", other.blob()}.encode());
        CHECK(!d.disconnect);
        CHECK(std::find(d.logs.begin(), d.logs.end(),
                        "input_userauth_pk_ok: server replied with unknown key: " + describe_key(other)) != d.logs.end());
        // The key list is exhausted: no more methods.
        REQUIRE(d.failed);
    }
    SUBCASE("messages are ignored once finished")
    {
        auto d = ready();
        d->feed(userauth_success{}.encode());
        CHECK(d->client->authenticated());
        const auto n = d->sent.size();
        d->feed(failure("password"));
        CHECK(d->sent.size() == n);
        CHECK(!d->disconnect);
    }
}

TEST_CASE("input waits while the user is being asked")
{
    client_auth_config cfg;
    cfg.preferred_authentications = "password";
    client_driver d(cfg);
    d.feed(accept());
    d.feed(failure("password"));
    REQUIRE(d.prompts.size() == 1);
    // A banner arriving now is held until the prompt is answered.
    d.feed(userauth_banner{"late banner", ""}.encode());
    std::vector<secret_bytes> v;
    v.push_back(secret("pw"));
    d.client->answer_prompt(std::move(v));
    d.drain();
    CHECK(d.last_method() == "password");
    // Too much held input is a protocol error.
    d.feed(failure("password"));
    REQUIRE(d.prompts.size() == 2);
    for (int i = 0; i < 70; ++i)
        d.feed(userauth_banner{"x", ""}.encode());
    REQUIRE(d.disconnect);
}
