// The server machine against hand-made requests: service requests,
// MaxAuthTries, invalid users, banners, a change of user, PermitRootLogin,
// malformed and out-of-place messages, and the log lines for each.
#include "common/auth/server_auth.hpp"

#include "common/wire.hpp"
#include "tests/auth/auth_harness.hpp"
#include "tests/auth/server_driver.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

bytes service(std::string_view name) { return service_request{std::string(name)}.encode(); }

bytes none_request(std::string user, std::string svc = "ssh-connection")
{
    return userauth_request{std::move(user), std::move(svc), "none", userauth_none_data{}}.encode();
}

bytes password_request(std::string user, std::string_view pw)
{
    return userauth_request{std::move(user), "ssh-connection", "password",
                            userauth_password_data{false, secret(pw), {}}}
        .encode();
}

bytes pubkey_query(std::string user, const public_key& key)
{
    userauth_publickey_data d;
    d.algorithm = std::string(key.type_name());
    d.key_blob = key.blob();
    return userauth_request{std::move(user), "ssh-connection", "publickey", d}.encode();
}

std::map<std::string, test_user> alice()
{
    std::map<std::string, test_user> u;
    u["alice"].password = "secret";
    return u;
}

} // namespace

TEST_CASE("service requests")
{
    server_driver d;
    // Before SERVICE_REQUEST, user authentication requests are out of place.
    d.feed(none_request("alice"));
    REQUIRE(d.unimplemented.size() == 1);
    CHECK(d.unimplemented[0] == 10);
    CHECK(d.sent.empty());

    d.feed(service("ssh-userauth"));
    REQUIRE(d.sent.size() == 1);
    auto acc = service_accept::decode(d.sent[0]);
    REQUIRE(acc.has_value());
    CHECK(acc->service == "ssh-userauth");

    server_driver e;
    e.feed(service("ssh-connection"));
    REQUIRE(e.disconnect);
    CHECK(e.disconnect->first == disconnect_reason::service_not_available);
    CHECK(e.disconnect->second == "bad service request ssh-connection");
    CHECK(e.logged("Disconnecting 192.0.2.7 port 40022: bad service request ssh-connection [preauth]"));
    CHECK(e.server->finished());
}

TEST_CASE("the first none is free, and lists the methods")
{
    server_driver d({}, alice());
    d.feed(service("ssh-userauth"));
    d.feed(none_request("alice"));
    REQUIRE(d.sent.size() == 2);
    auto f = userauth_failure::decode(d.sent[1]);
    REQUIRE(f.has_value());
    CHECK(f->methods == "publickey,password,keyboard-interactive");
    CHECK(!f->partial_success);
    CHECK(d.server->failures() == 0);
    // A second none counts (and "none" is no longer enabled).
    d.feed(none_request("alice"));
    CHECK(d.server->failures() == 1);

    server_auth_settings s;
    s.kbd_interactive_authentication = false;
    server_driver e(s, alice());
    e.feed(service("ssh-userauth"));
    e.feed(none_request("alice"));
    CHECK(userauth_failure::decode(e.sent[1])->methods == "publickey,password");
}

TEST_CASE("MaxAuthTries cuts the connection as sshd does")
{
    server_auth_settings s;
    s.max_auth_tries = 3;
    server_driver d(s, alice());
    d.feed(service("ssh-userauth"));
    d.feed(none_request("alice"));
    d.feed(password_request("alice", "a"));
    d.feed(password_request("alice", "b"));
    CHECK(!d.disconnect);
    CHECK(d.server->failures() == 2);
    d.feed(password_request("alice", "c"));
    REQUIRE(d.disconnect);
    CHECK(d.disconnect->first == disconnect_reason::protocol_error);
    CHECK(d.disconnect->second == "Too many authentication failures");
    CHECK(d.server->max_tries_exceeded());
    CHECK(d.logged("Failed password for alice from 192.0.2.7 port 40022 ssh2"));
    CHECK(d.logged("maximum authentication attempts exceeded for alice from 192.0.2.7 port 40022 ssh2 [preauth]"));
    CHECK(d.logged("Disconnecting authenticating user alice 192.0.2.7 port 40022: Too many authentication failures "
                   "[preauth]"));
    // The third failure got a DISCONNECT, not a FAILURE.
    std::size_t failures_sent = 0;
    for (const auto& m : d.sent)
        failures_sent += m[0] == msg::userauth_failure;
    CHECK(failures_sent == 3); // none + two passwords
    // Nothing more is processed.
    d.feed(password_request("alice", "secret"));
    CHECK(!d.authenticated);
}

TEST_CASE("MaxAuthTries counts rejected publickey queries")
{
    std::map<std::string, test_user> u = alice();
    server_driver d({}, u);
    d.feed(service("ssh-userauth"));
    d.feed(none_request("alice"));
    for (int i = 0; i < 6; ++i)
        d.feed(pubkey_query("alice", test_key(key_type::ed25519, 10 + i)->public_part()));
    REQUIRE(d.disconnect);
    CHECK(d.disconnect->second == "Too many authentication failures");
    // Failures reached half of MaxAuthTries: the later ones are logged at info.
    CHECK(d.logged("Failed publickey for alice from 192.0.2.7 port 40022 ssh2: " +
                   describe_key(test_key(key_type::ed25519, 15)->public_part())));
}

TEST_CASE("invalid users go through the motions")
{
    auto key = test_key(key_type::ed25519);
    std::map<std::string, test_user> u = alice();
    u["alice"].authorized.push_back(key->public_part());

    server_driver valid({}, u), invalid({}, u);
    for (auto* d : {&valid, &invalid}) {
        const std::string user = d == &valid ? "alice" : "mallory";
        d->feed(service("ssh-userauth"));
        d->feed(none_request(user));
        d->feed(pubkey_query(user, test_key(key_type::ecdsa_p256)->public_part()));
        d->feed(password_request(user, "guess"));
    }
    CHECK(invalid.logged("Invalid user mallory from 192.0.2.7 port 40022"));
    CHECK(invalid.logged("Failed password for invalid user mallory from 192.0.2.7 port 40022 ssh2"));
    // The password backend was still asked (timing), with the user marked invalid.
    CHECK(invalid.checks == std::vector<std::string>{"mallory"});
    // Byte for byte the same replies as a valid user with a wrong key and password.
    CHECK(valid.sent == invalid.sent);
    CHECK(invalid.server->connection_id() == "invalid user mallory 192.0.2.7 port 40022");
    CHECK(invalid.server->connection_closed_line() ==
          "Connection closed by invalid user mallory 192.0.2.7 port 40022 [preauth]");
    CHECK(valid.server->connection_closed_line() ==
          "Connection closed by authenticating user alice 192.0.2.7 port 40022 [preauth]");

    // A key authorised for someone else gets no PK_OK for an invalid user.
    invalid.feed(pubkey_query("mallory", key->public_part()));
    CHECK(invalid.sent.back()[0] == msg::userauth_failure);

    // Even the right password of nobody fails.
    server_driver refused({}, u);
    refused.users["denied"].password = "pw";
    refused.users["denied"].refused = true;
    refused.feed(service("ssh-userauth"));
    refused.feed(password_request("denied", "pw"));
    CHECK(!refused.authenticated);
    CHECK(!refused.logged("Invalid user denied from 192.0.2.7 port 40022"));
    CHECK(refused.logged("Failed password for invalid user denied from 192.0.2.7 port 40022 ssh2"));
}

TEST_CASE("banner once, before the first reply")
{
    server_auth_settings s;
    s.banner = "Authorised use only.\n";
    server_driver d(s, alice());
    d.feed(service("ssh-userauth"));
    d.feed(none_request("alice"));
    d.feed(password_request("alice", "x"));
    std::vector<std::uint8_t> types;
    for (const auto& m : d.sent)
        types.push_back(m[0]);
    CHECK(types == std::vector<std::uint8_t>{msg::service_accept, msg::userauth_banner, msg::userauth_failure,
                                             msg::userauth_failure});
    auto b = userauth_banner::decode(d.sent[1]);
    REQUIRE(b.has_value());
    CHECK(b->message == "Authorised use only.\n");

    // The client prints it sanitised.
    auth_pair p;
    p.server_config.settings.banner = "Hello\x1b]0;pwned\x07 world\n";
    p.users["alice"].password = "pw";
    p.on_prompt = [](const client_auth_event&) { return std::vector<std::string>{"pw"}; };
    p.start();
    p.run();
    REQUIRE(p.banners.size() == 1);
    CHECK(p.banners[0] == "Hello\\033]0;pwned\\007 world\n");
    CHECK(p.client_authenticated);
}

TEST_CASE("a change of user or service is refused")
{
    server_driver d({}, alice());
    d.feed(service("ssh-userauth"));
    d.feed(none_request("alice"));
    d.feed(none_request("bob"));
    REQUIRE(d.disconnect);
    CHECK(d.disconnect->first == disconnect_reason::protocol_error);
    CHECK(d.disconnect->second == "Change of username or service not allowed: (alice,ssh-connection) -> (bob,ssh-connection)");
    CHECK(d.logged("Disconnecting authenticating user alice 192.0.2.7 port 40022: Change of username or service not "
                   "allowed: (alice,ssh-connection) -> (bob,ssh-connection) [preauth]"));

    server_driver e({}, alice());
    e.feed(service("ssh-userauth"));
    e.feed(none_request("alice"));
    e.feed(none_request("alice", "other-service"));
    REQUIRE(e.disconnect);
    CHECK(e.disconnect->second ==
          "Change of username or service not allowed: (alice,ssh-connection) -> (alice,other-service)");
}

TEST_CASE("a service other than ssh-connection makes the user invalid")
{
    server_driver d({}, alice());
    d.feed(service("ssh-userauth"));
    d.feed(userauth_request{"alice", "sftp-magic", "password", userauth_password_data{false, secret("secret"), {}}}
               .encode());
    CHECK(!d.authenticated);
    CHECK(d.logged("Failed password for invalid user alice from 192.0.2.7 port 40022 ssh2"));
}

TEST_CASE("PermitRootLogin")
{
    auto key = test_key(key_type::ed25519);
    std::map<std::string, test_user> u;
    u["root"].password = "toor";
    u["root"].is_root = true;
    u["root"].authorized.push_back(key->public_part());

    auto run = [&](permit_root_login policy, bool use_key, bool forced = false) {
        server_auth_settings s;
        s.root_login = policy;
        auth_pair p;
        p.users = u;
        p.users["root"].forced_command = forced;
        p.server_config.settings = s;
        p.client_config.user = "root";
        if (use_key) {
            p.client_config.identities.push_back(loaded_identity(key, "k"));
            p.client_config.preferred_authentications = "publickey";
        } else {
            p.client_config.preferred_authentications = "password";
            p.on_prompt = [](const client_auth_event&) { return std::vector<std::string>{"toor"}; };
        }
        p.start();
        p.run();
        return p;
    };
    CHECK(run(permit_root_login::yes, false).client_authenticated);
    CHECK(run(permit_root_login::yes, true).client_authenticated);
    {
        auto p = run(permit_root_login::prohibit_password, false);
        CHECK(!p.client_authenticated);
        CHECK(p.server_logged("Failed password for root from 127.0.0.1 port 50000 ssh2"));
    }
    CHECK(run(permit_root_login::prohibit_password, true).client_authenticated);
    {
        auto p = run(permit_root_login::no, true);
        CHECK(!p.client_authenticated);
        CHECK(p.server_logged("ROOT LOGIN REFUSED FROM 127.0.0.1 port 50000"));
        CHECK(p.server_logged("Failed publickey for root from 127.0.0.1 port 50000 ssh2: " +
                              describe_key(key->public_part())));
    }
    CHECK(!run(permit_root_login::forced_commands_only, true).client_authenticated);
    {
        auto p = run(permit_root_login::forced_commands_only, true, true);
        CHECK(p.client_authenticated);
        CHECK(p.server_logged("Root login accepted for forced command."));
    }
}

TEST_CASE("account checks after a successful method")
{
    auth_pair p;
    p.users["alice"].password = "pw";
    p.account = account_decision{false, "Your account has expired; please contact your administrator\n"};
    p.client_config.preferred_authentications = "password";
    p.on_prompt = [](const client_auth_event&) { return std::vector<std::string>{"pw"}; };
    p.start();
    p.run();
    CHECK(!p.server_authenticated);
    CHECK(p.server_logged("Access denied for user alice by PAM account configuration [preauth]"));
    CHECK(p.server_logged("Failed password for alice from 127.0.0.1 port 50000 ssh2"));
    REQUIRE(p.banners.size() == 1);
    CHECK(p.banners[0] == "Your account has expired; please contact your administrator\n");
    REQUIRE(p.server_disconnect);
}

TEST_CASE("malformed and out-of-place messages end in a clean disconnect")
{
    const auto fresh = [] {
        auto d = std::make_unique<server_driver>(server_auth_settings{}, alice());
        d->feed(service("ssh-userauth"));
        return d;
    };
    SUBCASE("truncated request")
    {
        auto d = fresh();
        bytes p = password_request("alice", "secret");
        p.resize(p.size() - 2);
        d->feed(p);
        REQUIRE(d->disconnect);
        CHECK(d->disconnect->first == disconnect_reason::protocol_error);
        CHECK(d->disconnect->second == "invalid format");
        CHECK(d->logged("ssh_dispatch_run_fatal: Connection from 192.0.2.7 port 40022: invalid format [preauth]"));
    }
    SUBCASE("trailing bytes")
    {
        auto d = fresh();
        bytes p = none_request("alice");
        p.push_back(0);
        d->feed(p);
        REQUIRE(d->disconnect);
        CHECK(d->disconnect->second == "invalid format");
    }
    SUBCASE("NUL in the user name")
    {
        auto d = fresh();
        bytes p;
        wire_writer(p).u8(50).string(std::string_view("alice\0root", 10)).string("ssh-connection").string("none");
        d->feed(p);
        REQUIRE(d->disconnect);
    }
    SUBCASE("empty payload")
    {
        auto d = fresh();
        d->feed(bytes{});
        REQUIRE(d->disconnect);
    }
    SUBCASE("garbage service request")
    {
        server_driver d;
        d.feed(bytes{5, 0, 0, 0, 9, 'x'});
        REQUIRE(d.disconnect);
        CHECK(d.disconnect->second == "invalid format");
    }
    SUBCASE("INFO_RESPONSE without a conversation, and client-only messages")
    {
        auto d = fresh();
        d->feed(bytes{61, 0, 0, 0, 0});
        d->feed(userauth_success{}.encode());
        d->feed(bytes{79});
        CHECK(d->unimplemented.size() == 3);
        CHECK(!d->disconnect);
    }
    SUBCASE("INFO_RESPONSE with the wrong number of answers")
    {
        server_auth_config cfg;
        cfg.remote_ip = "192.0.2.7";
        cfg.remote_port = 1;
        server_auth_policy pol;
        pol.lookup_user = [](std::string_view) { return user_lookup{user_status::valid, false, std::nullopt}; };
        server_auth s(cfg, pol);
        s.handle(service("ssh-userauth"));
        s.handle(userauth_request{"alice", "ssh-connection", "keyboard-interactive", userauth_kbdint_data{}}.encode());
        kbdint_reply r;
        r.result = kbdint_reply::kind::prompts;
        r.prompts = {{"Password: ", false}};
        s.answer_kbdint(r);
        userauth_info_response resp;
        resp.responses.push_back(secret("a"));
        resp.responses.push_back(secret("b"));
        s.handle(resp.encode().span());
        bool disconnected = false;
        for (auto ev = s.poll(); ev.type != server_auth_event_type::none; ev = s.poll())
            if (ev.type == server_auth_event_type::disconnect) {
                disconnected = true;
                CHECK(ev.text == "wrong number of replies");
            }
        CHECK(disconnected);
    }
}

TEST_CASE("requests that arrive while a password is being checked wait their turn")
{
    server_driver d({}, alice());
    d.hold_answers = true;
    d.feed(service("ssh-userauth"));
    d.feed(none_request("alice"));
    d.feed(password_request("alice", "wrong"));
    d.feed(password_request("alice", "secret"));
    // Only one check is out; the second request is queued.
    CHECK(d.checks.size() == 1);
    d.answer_held();
    CHECK(d.checks.size() == 2);
    CHECK(!d.authenticated);
    d.answer_held();
    CHECK(d.authenticated);
    CHECK(d.logged("Accepted password for alice from 192.0.2.7 port 40022 ssh2"));
    // Requests after success are ignored; other messages are unimplemented.
    const auto before = d.sent.size();
    d.feed(password_request("alice", "secret"));
    CHECK(d.sent.size() == before);
    d.feed(bytes{60});
    CHECK(d.unimplemented.size() == 1);
}

TEST_CASE("over-long passwords are refused without asking the backend")
{
    server_driver d({}, alice());
    d.feed(service("ssh-userauth"));
    d.feed(password_request("alice", std::string(1025, 'x')));
    CHECK(d.checks.empty());
    CHECK(d.logged("Failed password for alice from 192.0.2.7 port 40022 ssh2"));
}

TEST_CASE("the per-user failure delay")
{
    auth_pair p;
    p.users["alice"].password = "pw";
    p.client_config.preferred_authentications = "password";
    p.on_prompt = [](const client_auth_event&) { return std::vector<std::string>{"x"}; };
    p.start();
    p.run();
    // The first (none) failure has no delay; password failures 5..9.3 ms,
    // the same for every failure of one user.
    REQUIRE(p.delays.size() >= 3);
    CHECK(p.delays[1].count() == 0);
    const auto d = p.delays.back();
    CHECK(d.count() >= 5000);
    CHECK(d.count() <= 9295);
    CHECK(p.delays[p.delays.size() - 2] == d);
}

TEST_CASE("log lines escape what the client chose")
{
    server_driver d({}, alice());
    d.feed(service("ssh-userauth"));
    d.feed(none_request("eve\nAccepted password for root"));
    CHECK(d.logged("Invalid user eve\\012Accepted password for root from 192.0.2.7 port 40022"));
}

TEST_CASE("sshd's hard limit of 1024 requests")
{
    server_auth_settings s;
    s.max_auth_tries = 100000;
    server_driver d(s, alice());
    d.feed(service("ssh-userauth"));
    for (int i = 0; i < 1024; ++i)
        d.feed(password_request("alice", "x"));
    CHECK(!d.disconnect);
    d.feed(password_request("alice", "x"));
    REQUIRE(d.disconnect);
    CHECK(d.disconnect->second == "Too many authentication failures");
    CHECK(d.server->max_tries_exceeded());
}

TEST_CASE("AuthenticationMethods naming only disabled methods")
{
    server_auth_settings s;
    s.password_authentication = false;
    s.authentication_methods = {"password", "publickey,password"};
    server_driver d(s, alice());
    d.feed(service("ssh-userauth"));
    d.feed(none_request("alice"));
    REQUIRE(d.disconnect);
    CHECK(d.disconnect->second == "no authentication methods enabled");
    CHECK(d.logged("No AuthenticationMethods left after eliminating disabled methods [preauth]"));
}

TEST_CASE("methods list helpers")
{
    CHECK(list_starts_with("publickey,password", "publickey", "") == method_match::method);
    CHECK(list_starts_with("publickeyx,password", "publickey", "") == method_match::none);
    CHECK(list_starts_with("keyboard-interactive:pam,password", "keyboard-interactive", "") == method_match::partial);
    CHECK(list_starts_with("keyboard-interactive:pam,password", "keyboard-interactive", "pam") == method_match::both);
    CHECK(list_starts_with("keyboard-interactive:bsdauth", "keyboard-interactive", "pam") == method_match::none);
    std::string l = "keyboard-interactive:pam,password";
    CHECK(remove_leading_method(l, "keyboard-interactive", "pam"));
    CHECK(l == "password");
    CHECK(!remove_leading_method(l, "publickey", ""));
    CHECK(remove_leading_method(l, "password", ""));
    CHECK(l.empty());
    CHECK(check_methods_list("publickey,password").empty());
    CHECK(check_methods_list("publickey,passwd") == "Unknown authentication method \"passwd\" in list");
    CHECK(check_methods_list("") == "empty authentication method list");
    CHECK(check_methods_list("publickey,password", [](std::string_view m) { return m != "password"; }) ==
          "Disabled method \"password\" in AuthenticationMethods list \"publickey,password\"");
}

TEST_CASE("under sshd's monitor the machine leaves the verdicts to it")
{
    // sshd's pre-authentication child: the monitor writes Accepted, Failed,
    // Invalid user and the root refusals from its own decisions
    // (sshd/monitor_verdicts.hpp); the child's machine must not, or a
    // compromised child's lines would read as the monitor's.
    for (const bool monitor : {false, true}) {
        CAPTURE(monitor);
        server_driver d({}, alice(), monitor);
        d.feed(service("ssh-userauth"));
        d.feed(none_request("alice"));
        d.feed(password_request("alice", "wrong"));
        d.feed(password_request("alice", "secret"));
        CHECK(d.authenticated);
        CHECK(d.logged("Failed password for alice from 192.0.2.7 port 40022 ssh2") == !monitor);
        CHECK(d.logged("Accepted password for alice from 192.0.2.7 port 40022 ssh2") == !monitor);
        server_driver invalid({}, alice(), monitor);
        invalid.feed(service("ssh-userauth"));
        invalid.feed(none_request("mallory"));
        CHECK(invalid.logged("Invalid user mallory from 192.0.2.7 port 40022") == !monitor);
    }
}
