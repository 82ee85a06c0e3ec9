// password and keyboard-interactive between the two machines: right and
// wrong passwords, NumberOfPasswordPrompts, password change requests,
// multi-round keyboard-interactive, partial success and
// AuthenticationMethods.
#include "tests/auth/auth_harness.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

auto answer_all(std::vector<std::string> answers)
{
    auto next = std::make_shared<std::size_t>(0);
    return [answers, next](const client_auth_event& ev) -> std::optional<std::vector<std::string>> {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < ev.prompts.size(); ++i)
            out.push_back(*next < answers.size() ? answers[(*next)++] : std::string("?"));
        return out;
    };
}

} // namespace

TEST_CASE("password: right at the first prompt")
{
    auth_pair p;
    p.users["alice"].password = "correct horse";
    p.client_config.preferred_authentications = "password";
    p.on_prompt = answer_all({"correct horse"});
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_authenticated);
    CHECK(p.client_method == "password");
    REQUIRE(p.prompts.size() == 1);
    CHECK(p.prompts[0].kind == prompt_kind::password);
    CHECK(p.prompts[0].prompts[0].text == "alice@testhost's password: ");
    CHECK(p.server_logged("Accepted password for alice from 127.0.0.1 port 50000 ssh2"));
    REQUIRE(p.password_checks.size() == 1);
    CHECK(p.password_checks[0].user_valid);
    CHECK(str(p.password_checks[0].password) == "correct horse");
}

TEST_CASE("password: retries up to NumberOfPasswordPrompts")
{
    SUBCASE("wrong twice, then right")
    {
        auth_pair p;
        p.users["alice"].password = "pw";
        p.on_prompt = answer_all({"a", "b", "pw"});
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(p.prompts.size() == 3);
        CHECK(p.server_logged("Failed password for alice from 127.0.0.1 port 50000 ssh2"));
        CHECK(p.server_level("Failed password for alice from 127.0.0.1 port 50000 ssh2") == auth_log_level::info);
        // The second and third prompts come after OpenSSH's complaint.
        int complaints = 0;
        for (const auto& [l, t] : p.client_log)
            if (t == "Permission denied, please try again." && l == auth_log_level::error)
                ++complaints;
        CHECK(complaints == 2);
        // Failure replies to non-none requests carry sshd's delay.
        CHECK(std::any_of(p.delays.begin(), p.delays.end(), [](auto d) { return d.count() >= 5000 && d.count() < 9300; }));
    }
    SUBCASE("three wrong answers end it")
    {
        auth_pair p;
        p.users["alice"].password = "pw";
        p.client_config.preferred_authentications = "password";
        p.on_prompt = answer_all({"a", "b", "c", "d"});
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.prompts.size() == 3);
        REQUIRE(p.client_failed);
        CHECK(*p.client_failed == "alice@testhost: Permission denied (publickey,password,keyboard-interactive).");
        CHECK(p.client_logged("No more authentication methods to try."));
    }
    SUBCASE("NumberOfPasswordPrompts 1")
    {
        auth_pair p;
        p.users["alice"].password = "pw";
        p.client_config.number_of_password_prompts = 1;
        p.client_config.preferred_authentications = "password";
        p.on_prompt = answer_all({"a", "pw"});
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.prompts.size() == 1);
    }
    SUBCASE("no answer (EOF) gives the method up")
    {
        auth_pair p;
        p.users["alice"].password = "pw";
        p.client_config.preferred_authentications = "password";
        p.on_prompt = [](const client_auth_event&) { return std::nullopt; };
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.password_checks.empty());
        CHECK(p.client_failed);
    }
}

TEST_CASE("password change request")
{
    // sshd never asks for a new password, so the server is played by hand.
    client_auth_config cfg;
    cfg.user = "alice";
    cfg.host = "testhost";
    cfg.preferred_authentications = "password";
    client_auth c(cfg, client_auth_session{});
    std::vector<std::string> prompt_texts, infos;
    std::vector<bytes> sent;
    int retypes = 0;
    auto drain = [&] {
        for (auto ev = c.poll(); ev.type != client_auth_event_type::none; ev = c.poll()) {
            if (ev.type == client_auth_event_type::send)
                sent.push_back(to_bytes(ev.payload.span()));
            if (ev.type == client_auth_event_type::log && ev.level == auth_log_level::info)
                infos.push_back(ev.text);
            if (ev.type != client_auth_event_type::prompt)
                continue;
            prompt_texts.push_back(ev.prompts[0].text);
            std::string answer = "old";
            if (ev.kind == prompt_kind::new_password)
                answer = "new";
            if (ev.kind == prompt_kind::retype_new_password)
                answer = ++retypes == 1 ? "nwe" : "new";
            std::vector<secret_bytes> r;
            r.push_back(secret(answer));
            c.answer_prompt(std::move(r));
        }
    };
    c.start();
    drain();
    c.handle(service_accept{"ssh-userauth"}.encode());
    drain();
    c.handle(userauth_failure{"password", false}.encode());
    drain();
    c.handle(userauth_passwd_changereq{"Your password has expired.", ""}.encode());
    drain();
    CHECK(std::find(infos.begin(), infos.end(), "Your password has expired.") != infos.end());
    CHECK(std::find(infos.begin(), infos.end(), "Mismatch; try again, EOF to quit.") != infos.end());
    REQUIRE(prompt_texts.size() == 6);
    CHECK(prompt_texts[0] == "alice@testhost's password: ");
    CHECK(prompt_texts[1] == "Enter alice@testhost's old password: ");
    CHECK(prompt_texts[2] == "Enter alice@testhost's new password: ");
    CHECK(prompt_texts[3] == "Retype alice@testhost's new password: ");
    CHECK(prompt_texts[4] == "Enter alice@testhost's new password: ");
    CHECK(prompt_texts[5] == "Retype alice@testhost's new password: ");
    // The last request carries both passwords.
    REQUIRE(!sent.empty());
    auto last = userauth_request::decode(sent.back());
    REQUIRE(last.has_value());
    auto* pw = std::get_if<userauth_password_data>(&last->data);
    REQUIRE(pw != nullptr);
    CHECK(pw->change);
    CHECK(str(pw->password) == "old");
    CHECK(str(pw->new_password) == "new");
    c.handle(userauth_success{}.encode());
    drain();
    CHECK(c.authenticated());
    CHECK(c.method() == "password");
}

TEST_CASE("the server refuses password changes")
{
    auth_pair p;
    p.users["alice"].password = "pw";
    p.start();
    p.run();
    userauth_request req{"alice", "ssh-connection", "password", userauth_password_data{true, secret("pw"), secret("x")}};
    p.inject_to_server(req.encode());
    p.run();
    CHECK(p.server_logged("password change not supported [preauth]"));
    CHECK(!p.server_authenticated);
    CHECK(p.password_checks.empty());
}

TEST_CASE("keyboard-interactive: several rounds, answered late")
{
    for (int delay : {0, 2}) {
        CAPTURE(delay);
        auth_pair p;
        p.answer_delay = delay;
        p.users["alice"];
        p.client_config.preferred_authentications = "keyboard-interactive";
        int round = 0;
        p.on_kbdint = [&](const server_auth_event& ev) {
            kbdint_reply r;
            if (ev.type == server_auth_event_type::kbdint_start) {
                CHECK(ev.user == "alice");
                CHECK(ev.user_valid);
                r.result = kbdint_reply::kind::prompts;
                r.name = "PAM authentication";
                r.instruction = "Two factors\x1b[31m";
                r.prompts = {{"Password: ", false}, {"Token: ", true}};
                return r;
            }
            ++round;
            if (round == 1) {
                REQUIRE(ev.responses.size() == 2);
                CHECK(str(ev.responses[0]) == "pw");
                CHECK(str(ev.responses[1]) == "123456");
                r.result = kbdint_reply::kind::prompts;
                r.prompts = {{"Again: ", false}};
                return r;
            }
            if (round == 2) {
                REQUIRE(ev.responses.size() == 1);
                CHECK(str(ev.responses[0]) == "again");
                // PAM's last empty round, as sshd sends it.
                r.result = kbdint_reply::kind::prompts;
                return r;
            }
            CHECK(ev.responses.empty());
            r.result = kbdint_reply::kind::success;
            return r;
        };
        p.on_prompt = answer_all({"pw", "123456", "again"});
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(p.client_method == "keyboard-interactive");
        REQUIRE(p.prompts.size() == 2);
        CHECK(p.prompts[0].kind == prompt_kind::kbdint);
        REQUIRE(p.prompts[0].prompts.size() == 2);
        CHECK(p.prompts[0].prompts[0].text == "(alice@testhost) Password: ");
        CHECK(!p.prompts[0].prompts[0].echo);
        CHECK(p.prompts[0].prompts[1].text == "(alice@testhost) Token: ");
        CHECK(p.prompts[0].prompts[1].echo);
        CHECK(p.client_logged("PAM authentication"));
        CHECK(p.client_logged("Two factors\\033[31m"));
        CHECK(p.server_logged("Postponed keyboard-interactive for alice from 127.0.0.1 port 50000 ssh2 [preauth]"));
        CHECK(p.server_logged(
            "Postponed keyboard-interactive/pam for alice from 127.0.0.1 port 50000 ssh2 [preauth]"));
        CHECK(p.server_logged("Accepted keyboard-interactive/pam for alice from 127.0.0.1 port 50000 ssh2"));
    }
}

TEST_CASE("keyboard-interactive: failures are counted and retried")
{
    auth_pair p;
    p.users["alice"];
    p.client_config.preferred_authentications = "keyboard-interactive";
    int attempts = 0;
    p.on_kbdint = [&](const server_auth_event& ev) {
        kbdint_reply r;
        if (ev.type == server_auth_event_type::kbdint_start) {
            ++attempts;
            r.result = kbdint_reply::kind::prompts;
            r.prompts = {{"Password: ", false}};
        } else {
            r.result = str(ev.responses[0]) == "right" ? kbdint_reply::kind::success : kbdint_reply::kind::failure;
        }
        return r;
    };
    p.on_prompt = answer_all({"wrong", "right"});
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_authenticated);
    CHECK(attempts == 2);
    CHECK(p.server_logged("Failed keyboard-interactive/pam for alice from 127.0.0.1 port 50000 ssh2"));
    CHECK(p.server->failures() == 1);
}

TEST_CASE("keyboard-interactive: a server that never asks is given up after one try")
{
    auth_pair p;
    p.users["alice"].password = "pw";
    p.client_config.preferred_authentications = "keyboard-interactive,password";
    p.on_kbdint = [](const server_auth_event&) { return kbdint_reply{}; }; // failure at once
    p.on_prompt = answer_all({"pw"});
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_authenticated);
    CHECK(p.client_method == "password");
    CHECK(p.client_logged("userauth_kbdint: disable: no info_req_seen"));
}

TEST_CASE("keyboard-interactive: a new request abandons the conversation")
{
    auth_pair p;
    p.users["alice"].password = "pw";
    p.client_config.preferred_authentications = "keyboard-interactive,password";
    p.on_kbdint = [](const server_auth_event&) {
        kbdint_reply r;
        r.result = kbdint_reply::kind::prompts;
        r.prompts = {{"Password: ", false}};
        return r;
    };
    // The user gives up on the kbd-int prompt; password comes next.
    p.on_prompt = [](const client_auth_event& ev) -> std::optional<std::vector<std::string>> {
        if (ev.kind == prompt_kind::kbdint)
            return std::nullopt;
        return std::vector<std::string>{"pw"};
    };
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_authenticated);
    CHECK(std::any_of(p.kbdint_events.begin(), p.kbdint_events.end(),
                      [](const auto& e) { return e.type == server_auth_event_type::kbdint_abort; }));
}

TEST_CASE("AuthenticationMethods and partial success")
{
    auto ed = test_key(key_type::ed25519);
    auto ec = test_key(key_type::ecdsa_p256);
    SUBCASE("publickey,password")
    {
        auth_pair p;
        p.users["alice"].password = "pw";
        p.users["alice"].authorized.push_back(ed->public_part());
        p.server_config.settings.authentication_methods = {"publickey,password"};
        p.client_config.identities.push_back(loaded_identity(ed, "k"));
        p.on_prompt = answer_all({"pw"});
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(p.client_method == "password");
        CHECK(p.client_logged("Authenticated using \"publickey\" with partial success."));
        CHECK(p.client_logged("Authentications that can continue: publickey"));
        CHECK(p.client_logged("Authentications that can continue: password"));
        CHECK(p.server_logged("Partial publickey for alice from 127.0.0.1 port 50000 ssh2: " +
                              describe_key(ed->public_part())));
        CHECK(p.server_logged("Accepted password for alice from 127.0.0.1 port 50000 ssh2"));
        REQUIRE(p.server_methods.size() == 2);
        CHECK(p.server_methods[0].method == "publickey");
        CHECK(p.server_methods[1].method == "password");
        // The FAILURE after the key says partial success.
        bool partial_seen = false;
        for (const auto& m : p.to_client)
            if (auto f = userauth_failure::decode(m); f && f->partial_success)
                partial_seen = f->methods == "password";
        CHECK(partial_seen);
    }
    SUBCASE("password first is refused by the list")
    {
        auth_pair p;
        p.users["alice"].password = "pw";
        p.server_config.settings.authentication_methods = {"publickey,password"};
        p.client_config.preferred_authentications = "password";
        p.on_prompt = answer_all({"pw"});
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.password_checks.empty());
        REQUIRE(p.client_failed);
        CHECK(*p.client_failed == "alice@testhost: Permission denied (publickey).");
    }
    SUBCASE("publickey,publickey needs two different keys")
    {
        auth_pair p;
        p.users["alice"].authorized = {ed->public_part(), ec->public_part()};
        p.server_config.settings.authentication_methods = {"publickey,publickey"};
        // The same key twice, then the second key.
        p.client_config.identities.push_back(loaded_identity(ed, "one"));
        p.client_config.identities.push_back(loaded_identity(ec, "two"));
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        REQUIRE(p.server_methods.size() == 2);
        CHECK(p.server_methods[0].key == ed->public_part());
        CHECK(p.server_methods[1].key == ec->public_part());
        // After partial success the client offers the untried key first.
        const int partial = auth_pair::index_of(p.client_log, "Authenticated using \"publickey\" with partial success.");
        const int second = auth_pair::index_of(p.client_log, "Offering public key: two " + describe_key(ec->public_part()));
        CHECK(partial >= 0);
        CHECK(second > partial);
    }
    SUBCASE("the same key cannot count twice")
    {
        auth_pair p;
        p.users["alice"].authorized = {ed->public_part()};
        p.server_config.settings.authentication_methods = {"publickey,publickey"};
        p.client_config.identities.push_back(loaded_identity(ed, "one"));
        p.client_config.preferred_authentications = "publickey";
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.server_logged("refusing previously-used ED25519 key [preauth]"));
    }
    SUBCASE("publickey,password publickey,keyboard-interactive")
    {
        auth_pair p;
        p.users["alice"].authorized = {ed->public_part()};
        p.server_config.settings.authentication_methods = {"publickey,password", "publickey,keyboard-interactive"};
        p.server_config.settings.password_authentication = false;
        p.client_config.identities.push_back(loaded_identity(ed, "k"));
        p.on_kbdint = [](const server_auth_event& ev) {
            kbdint_reply r;
            if (ev.type == server_auth_event_type::kbdint_start) {
                r.result = kbdint_reply::kind::prompts;
                r.prompts = {{"Verification code: ", true}};
            } else {
                r.result = kbdint_reply::kind::success;
            }
            return r;
        };
        p.on_prompt = answer_all({"424242"});
        p.start();
        p.run();
        INFO(p.dump_logs());
        // The list naming the disabled password method was dropped.
        CHECK(p.server_logged(
            "Authentication methods list \"publickey,password\" contains disabled method, skipping [preauth]"));
        CHECK(p.client_authenticated);
        CHECK(p.client_method == "keyboard-interactive");
        CHECK(p.server_logged("Accepted keyboard-interactive/pam for alice from 127.0.0.1 port 50000 ssh2"));
    }
    SUBCASE("submethods: keyboard-interactive:pam")
    {
        auth_pair p;
        p.users["alice"].password = "pw";
        p.server_config.settings.authentication_methods = {"keyboard-interactive:pam,password"};
        p.on_kbdint = [](const server_auth_event& ev) {
            kbdint_reply r;
            r.result = ev.type == server_auth_event_type::kbdint_start ? kbdint_reply::kind::prompts
                                                                      : kbdint_reply::kind::success;
            if (ev.type == server_auth_event_type::kbdint_start)
                r.prompts = {{"Password: ", false}};
            return r;
        };
        p.on_prompt = answer_all({"x", "pw"});
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(p.server_logged("Partial keyboard-interactive/pam for alice from 127.0.0.1 port 50000 ssh2"));
        CHECK(p.server_logged("Accepted password for alice from 127.0.0.1 port 50000 ssh2"));
    }
}

TEST_CASE("PermitEmptyPasswords lets none succeed")
{
    auth_pair p;
    p.users["alice"].password = "";
    p.server_config.settings.permit_empty_passwords = true;
    p.start();
    p.run();
    CHECK(p.client_authenticated);
    CHECK(p.client_method == "none");
    CHECK(p.server_logged("Accepted none for alice from 127.0.0.1 port 50000 ssh2"));
    CHECK(p.client_logged("Authenticated to testhost ([127.0.0.1]:22) using \"none\"."));

    // Without it, an empty password is not even checked.
    auth_pair q;
    q.users["alice"].password = "";
    q.client_config.preferred_authentications = "password";
    q.on_prompt = answer_all({"", "", ""});
    q.start();
    q.run();
    CHECK(!q.client_authenticated);
    CHECK(q.password_checks.empty());
    CHECK(q.server_logged("Failed password for alice from 127.0.0.1 port 50000 ssh2"));
}

TEST_CASE("prompts name HostKeyAlias, messages the host")
{
    auth_pair p;
    p.users["alice"].password = "pw";
    p.client_config.host_key_alias = "alias.example";
    p.client_config.preferred_authentications = "keyboard-interactive,password";
    p.server_config.settings.max_auth_tries = 10;
    p.on_kbdint = [](const server_auth_event& ev) {
        kbdint_reply r;
        if (ev.type == server_auth_event_type::kbdint_start) {
            r.result = kbdint_reply::kind::prompts;
            r.prompts = {{"Password: ", false}};
        }
        return r;
    };
    p.on_prompt = answer_all({"a", "b", "c", "d", "e", "f"});
    p.start();
    p.run();
    REQUIRE(p.prompts.size() >= 2);
    CHECK(p.prompts[0].prompts[0].text == "(alice@alias.example) Password: ");
    CHECK(p.prompts.back().prompts[0].text == "alice@alias.example's password: ");
    REQUIRE(p.client_failed);
    CHECK(*p.client_failed == "alice@testhost: Permission denied (publickey,password,keyboard-interactive).");
}

TEST_CASE("keyboard-interactive for an invalid user runs the device and fails")
{
    auth_pair p;
    p.client_config.user = "bob";
    p.client_config.preferred_authentications = "keyboard-interactive";
    p.client_config.number_of_password_prompts = 1;
    p.on_kbdint = [](const server_auth_event& ev) {
        kbdint_reply r;
        CHECK(!ev.user_valid);
        if (ev.type == server_auth_event_type::kbdint_start) {
            r.result = kbdint_reply::kind::prompts;
            r.prompts = {{"Password: ", false}};
        } else {
            // Even a device that says yes cannot log in a user that does not exist.
            r.result = kbdint_reply::kind::success;
        }
        return r;
    };
    p.on_prompt = answer_all({"pw"});
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(!p.server_authenticated);
    CHECK(p.server_logged("Invalid user bob from 127.0.0.1 port 50000"));
    CHECK(p.server_logged("Postponed keyboard-interactive for invalid user bob from 127.0.0.1 port 50000 ssh2 [preauth]"));
    CHECK(p.server_logged("Failed keyboard-interactive/pam for invalid user bob from 127.0.0.1 port 50000 ssh2"));
    CHECK(p.prompts.size() == 1);
}

// Issue 12, defect 4: PAM's verdict and failure delay must not reveal the
// password of a user who cannot log in by password (OpenSSH's fake_password()).
TEST_CASE("the backend never sees the password of root under prohibit-password or of an invalid user")
{
    const std::string typed = "the-real-password";
    auto run = [&](std::string user, bool root, permit_root_login policy, const char* method) {
        auth_pair p;
        p.users[user].password = typed;
        p.users[user].is_root = root;
        if (user == "nobody-here")
            p.users.clear();
        p.server_config.settings.root_login = policy;
        p.client_config.user = user;
        p.client_config.preferred_authentications = method;
        p.client_config.number_of_password_prompts = 1;
        p.on_prompt = answer_all({typed});
        p.on_kbdint = [](const server_auth_event& ev) {
            kbdint_reply r;
            r.result = ev.type == server_auth_event_type::kbdint_start ? kbdint_reply::kind::prompts
                                                                        : kbdint_reply::kind::failure;
            r.prompts = {{"Password: ", false}};
            return r;
        };
        p.start();
        p.run();
        std::vector<std::string> seen;
        for (const auto& ev : p.password_checks)
            seen.push_back(str(ev.password));
        for (const auto& ev : p.kbdint_events)
            for (const auto& r : ev.responses)
                seen.push_back(str(r));
        return seen;
    };
    for (const char* method : {"password", "keyboard-interactive"}) {
        CAPTURE(method);
        // The positive control: an ordinary user's password reaches the backend.
        CHECK(run("alice", false, permit_root_login::prohibit_password, method) == std::vector<std::string>{typed});
        CHECK(run("root", true, permit_root_login::yes, method) == std::vector<std::string>{typed});
        for (auto policy : {permit_root_login::prohibit_password, permit_root_login::forced_commands_only,
                            permit_root_login::no}) {
            auto seen = run("root", true, policy, method);
            REQUIRE(seen.size() == 1);
            CHECK(seen[0] != typed);
            CHECK(seen[0].size() == typed.size()); // same work for the backend
        }
        auto seen = run("nobody-here", false, permit_root_login::yes, method);
        REQUIRE(seen.size() == 1);
        CHECK(seen[0] != typed);
    }
}
