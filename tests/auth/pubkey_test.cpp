// publickey between the client and server machines: every key type, RSA
// SHA-2 choice from server-sig-algs, agent signing answered late, key files
// loaded (and passphrases asked) only after PK_OK, unauthorised keys, and
// the log lines both sides write.
#include "common/auth/client_auth.hpp"

#include "tests/auth/auth_harness.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

constexpr key_type all_types[] = {key_type::ed25519, key_type::ecdsa_p256, key_type::ecdsa_p384,
                                  key_type::ecdsa_p521, key_type::rsa};

std::string accepted_line(const public_key& k)
{
    return "Accepted publickey for alice from 127.0.0.1 port 50000 ssh2: " + describe_key(k);
}

// The algorithm field of the signed USERAUTH_REQUEST the client sent.
std::string signed_algorithm(const auth_pair& p)
{
    for (const auto& m : p.to_server) {
        auto r = userauth_request::decode(m);
        if (!r)
            continue;
        if (auto* pk = std::get_if<userauth_publickey_data>(&r->data); pk && pk->has_signature)
            return pk->algorithm;
    }
    return {};
}

} // namespace

TEST_CASE("publickey with every key type")
{
    for (auto t : all_types) {
        CAPTURE(key_type_name(t));
        auto key = test_key(t);
        auth_pair p;
        p.session.server_sig_algs = "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256";
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(loaded_identity(key, "/home/alice/.ssh/id_test"));
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(p.server_authenticated);
        CHECK(p.client_method == "publickey");
        CHECK(p.server_logged(accepted_line(key->public_part())));
        CHECK(p.server_level(accepted_line(key->public_part())) == auth_log_level::info);
        const std::string ident =
            "/home/alice/.ssh/id_test " + describe_key(key->public_part());
        CHECK(p.client_logged("Offering public key: " + ident));
        CHECK(p.client_logged("Server accepts key: " + ident));
        CHECK(p.client_logged("Authentications that can continue: publickey,password,keyboard-interactive"));
        CHECK(p.client_logged("Next authentication method: publickey"));
        CHECK(p.client_logged("Authenticated to testhost ([127.0.0.1]:22) using \"publickey\"."));
        CHECK(p.server_logged("Postponed publickey for alice from 127.0.0.1 port 50000 ssh2 [preauth]"));
        REQUIRE(p.server_methods.size() == 1);
        CHECK(p.server_methods[0].method == "publickey");
        CHECK(p.server_methods[0].key == key->public_part());
        if (t == key_type::rsa)
            CHECK(signed_algorithm(p) == "rsa-sha2-512");
        else
            CHECK(signed_algorithm(p) == key_type_name(t));
    }
}

TEST_CASE("RSA signature algorithm follows server-sig-algs and PubkeyAcceptedAlgorithms")
{
    auto key = test_key(key_type::rsa);
    SUBCASE("server lists only rsa-sha2-256")
    {
        auth_pair p;
        p.session.server_sig_algs = "ssh-ed25519,rsa-sha2-256";
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(loaded_identity(key, "k"));
        p.start();
        p.run();
        CHECK(p.client_authenticated);
        CHECK(signed_algorithm(p) == "rsa-sha2-256");
    }
    SUBCASE("client prefers rsa-sha2-256")
    {
        auth_pair p;
        p.session.server_sig_algs = "rsa-sha2-512,rsa-sha2-256";
        p.client_config.pubkey_accepted_algorithms = "ssh-ed25519,rsa-sha2-256,rsa-sha2-512";
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(loaded_identity(key, "k"));
        p.start();
        p.run();
        CHECK(p.client_authenticated);
        CHECK(signed_algorithm(p) == "rsa-sha2-256");
    }
    SUBCASE("server without RSA SHA-2: the key is skipped")
    {
        auth_pair p;
        p.session.server_sig_algs = "ssh-ed25519";
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(loaded_identity(key, "/k"));
        p.client_config.password_authentication = false;
        p.client_config.kbd_interactive_authentication = false;
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.client_logged("Skipping ssh-rsa key /k - corresponding algorithm not supported by server"));
        REQUIRE(p.client_failed);
        CHECK(*p.client_failed == "alice@testhost: Permission denied (publickey,password,keyboard-interactive).");
    }
    SUBCASE("no server-sig-algs: ssh-rsa only where both sides accept it")
    {
        auth_pair p;
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(loaded_identity(key, "/k"));
        p.client_config.pubkey_accepted_algorithms = "ssh-ed25519,rsa-sha2-512,ssh-rsa";
        p.server_config.settings.pubkey_accepted_algorithms = "ssh-ed25519,rsa-sha2-512,ssh-rsa";
        p.start();
        p.run();
        CHECK(p.client_authenticated);
        CHECK(signed_algorithm(p) == "ssh-rsa");
    }
    SUBCASE("no server-sig-algs and the default list: no mutual algorithm")
    {
        auth_pair p;
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(loaded_identity(key, "/k"));
        p.client_config.preferred_authentications = "publickey";
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.client_logged("send_pubkey_test: no mutual signature algorithm"));
    }
    SUBCASE("the server refuses algorithms outside its PubkeyAcceptedAlgorithms")
    {
        auth_pair p;
        p.session.server_sig_algs = "rsa-sha2-512,rsa-sha2-256";
        p.server_config.settings.pubkey_accepted_algorithms = "ssh-ed25519,rsa-sha2-256";
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(loaded_identity(key, "/k"));
        p.client_config.preferred_authentications = "publickey";
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.server_logged(
            "userauth_pubkey: signature algorithm rsa-sha2-512 not in PubkeyAcceptedAlgorithms [preauth]"));
    }
}

TEST_CASE("agent keys are signed through events answered late")
{
    auto ed = test_key(key_type::ed25519);
    auto rsa = test_key(key_type::rsa);
    for (int delay : {0, 3}) {
        CAPTURE(delay);
        auth_pair p;
        p.answer_delay = delay;
        p.session.server_sig_algs = "ssh-ed25519,rsa-sha2-512,rsa-sha2-256";
        p.users["alice"].authorized.push_back(rsa->public_part());
        p.client_config.identities.push_back(agent_identity(ed, "alice@laptop"));
        p.client_config.identities.push_back(agent_identity(rsa, "rsa key"));
        p.agent_keys[ed->public_part().blob()] = ed;
        p.agent_keys[rsa->public_part().blob()] = rsa;
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(p.client_logged("Will attempt key: alice@laptop " + describe_key(ed->public_part()) + " agent"));
        CHECK(p.client_logged("Offering public key: rsa key " + describe_key(rsa->public_part()) + " agent"));
        CHECK(p.server_logged("Failed publickey for alice from 127.0.0.1 port 50000 ssh2: " +
                              describe_key(ed->public_part())));
        CHECK(p.server_level("Failed publickey for alice from 127.0.0.1 port 50000 ssh2: " +
                             describe_key(ed->public_part())) == auth_log_level::verbose);
        CHECK(p.server_logged(accepted_line(rsa->public_part())));
        CHECK(signed_algorithm(p) == "rsa-sha2-512");
    }
}

TEST_CASE("agent failures move on to the next identity")
{
    auto ed = test_key(key_type::ed25519);
    auto ec = test_key(key_type::ecdsa_p256);
    auth_pair p;
    p.users["alice"].authorized = {ed->public_part(), ec->public_part()};
    p.client_config.identities.push_back(agent_identity(ed, "first"));
    p.client_config.identities.push_back(loaded_identity(ec, "/second"));
    p.on_sign = [](const client_auth_event&) { return std::nullopt; };
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_authenticated);
    CHECK(p.client_logged("sign_and_send_pubkey: signing failed for ED25519 \"first\" from agent: agent refused operation"));
    CHECK(p.server_logged(accepted_line(ec->public_part())));
}

TEST_CASE("an agent answering with the wrong RSA signature type")
{
    auto rsa = test_key(key_type::rsa);
    auth_pair p;
    p.session.server_sig_algs = "rsa-sha2-512,rsa-sha2-256";
    p.users["alice"].authorized.push_back(rsa->public_part());
    p.client_config.identities.push_back(agent_identity(rsa, "old agent"));
    p.client_config.preferred_authentications = "publickey";
    // An agent that ignores the SHA-2 flags.
    p.on_sign = [&](const client_auth_event& ev) -> std::optional<bytes> {
        auto s = rsa->sign("ssh-rsa", ev.data);
        REQUIRE(s.has_value());
        return *s;
    };
    p.start();
    p.run();
    CHECK(!p.client_authenticated);
    CHECK(p.client_logged("agent key " + describe_key(rsa->public_part()) + " returned incorrect signature type"));
    CHECK(p.client_logged("sign_and_send_pubkey: no mutual signature supported"));
}

TEST_CASE("key files: the passphrase is asked only after the server accepts the key")
{
    auto key = test_key(key_type::ed25519);
    auto other = test_key(key_type::ecdsa_p256);
    int loads = 0;
    auto make_identity = [&](std::shared_ptr<const private_key> k, std::string name) {
        client_identity id;
        id.name = std::move(name);
        id.key = k->public_part();
        id.load = [k, &loads](std::optional<std::string_view> pass) -> result<private_key> {
            ++loads;
            if (!pass)
                return errc::passphrase_required;
            if (*pass != "open sesame")
                return errc::wrong_passphrase;
            return *k;
        };
        return id;
    };
    SUBCASE("wrong, then right")
    {
        auth_pair p;
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(make_identity(other, "/home/alice/.ssh/id_ecdsa"));
        p.client_config.identities.push_back(make_identity(key, "/home/alice/.ssh/id_ed25519"));
        int asked = 0;
        p.on_prompt = [&](const client_auth_event& ev) -> std::optional<std::vector<std::string>> {
            CHECK(ev.kind == prompt_kind::passphrase);
            REQUIRE(ev.prompts.size() == 1);
            CHECK(ev.prompts[0].text == "Enter passphrase for key '/home/alice/.ssh/id_ed25519': ");
            CHECK(!ev.prompts[0].echo);
            return std::vector<std::string>{++asked == 1 ? "wrong" : "open sesame"};
        };
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(asked == 2);
        // The unaccepted key was never loaded: 1 try without and 2 with a passphrase.
        CHECK(loads == 3);
        CHECK(p.client_logged("bad passphrase given, try again..."));
    }
    SUBCASE("an empty passphrase gives up the key")
    {
        auth_pair p;
        p.users["alice"].authorized.push_back(key->public_part());
        p.client_config.identities.push_back(make_identity(key, "/k"));
        p.client_config.preferred_authentications = "publickey";
        p.on_prompt = [](const client_auth_event&) { return std::vector<std::string>{""}; };
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.client_logged("no passphrase given, try next key"));
        CHECK(p.client_failed);
    }
    SUBCASE("batch mode asks nothing")
    {
        auth_pair p;
        p.users["alice"].authorized.push_back(key->public_part());
        p.users["alice"].password = "pw";
        p.client_config.identities.push_back(make_identity(key, "/k"));
        p.client_config.batch_mode = true;
        p.start();
        p.run();
        CHECK(!p.client_authenticated);
        CHECK(p.prompts.empty());
        REQUIRE(p.client_failed);
        // password and keyboard-interactive are not attempted in batch mode.
        CHECK(p.password_checks.empty());
        CHECK(p.kbdint_events.empty());
    }
}

TEST_CASE("a key file without a known public key is loaded before trying")
{
    auto key = test_key(key_type::ecdsa_p384);
    auth_pair p;
    p.users["alice"].authorized.push_back(key->public_part());
    client_identity id;
    id.name = "/home/alice/.ssh/id_pem";
    id.load = [key](std::optional<std::string_view>) -> result<private_key> { return *key; };
    client_identity missing;
    missing.name = "/home/alice/.ssh/id_rsa";
    missing.load = [](std::optional<std::string_view>) -> result<private_key> { return errc::io_error; };
    p.client_config.identities.push_back(std::move(missing));
    p.client_config.identities.push_back(std::move(id));
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_authenticated);
    CHECK(p.client_logged("Will attempt key: /home/alice/.ssh/id_rsa "));
    CHECK(p.client_logged("Trying private key: /home/alice/.ssh/id_rsa"));
    CHECK(p.client_logged("no such identity: /home/alice/.ssh/id_rsa: No such file or directory"));
    CHECK(p.client_logged("Trying private key: /home/alice/.ssh/id_pem"));
    // No query: the signed request went straight out.
    CHECK(!p.server_logged("Postponed publickey for alice from 127.0.0.1 port 50000 ssh2 [preauth]"));
    CHECK(p.server_logged(accepted_line(key->public_part())));
}

TEST_CASE("explicit identities and key type filtering in -v output")
{
    auto ed = test_key(key_type::ed25519);
    auto ec = test_key(key_type::ecdsa_p521);
    auth_pair p;
    p.users["alice"].authorized.push_back(ed->public_part());
    auto id = loaded_identity(ec, "/etc/keys/ec");
    id.user_provided = true;
    p.client_config.identities.push_back(std::move(id));
    auto id2 = loaded_identity(ed, "/etc/keys/ed");
    id2.user_provided = true;
    p.client_config.identities.push_back(std::move(id2));
    p.client_config.pubkey_accepted_algorithms = "ssh-ed25519";
    p.start();
    p.run();
    CHECK(p.client_authenticated);
    CHECK(p.client_logged("Skipping ecdsa-sha2-nistp521 key /etc/keys/ec - corresponding algorithm not in "
                          "PubkeyAcceptedAlgorithms"));
    CHECK(p.client_logged("Offering public key: /etc/keys/ed " + describe_key(ed->public_part()) + " explicit"));
}

TEST_CASE("publickey-hostbound-v00@openssh.com when the server offers it")
{
    auto key = test_key(key_type::ed25519);
    auto host = test_key(key_type::ecdsa_p256, 1);
    auth_pair p;
    p.users["alice"].authorized.push_back(key->public_part());
    p.client_config.identities.push_back(loaded_identity(key, "k"));
    p.session.hostbound_offered = true;
    p.session.host_key_blob = host->public_part().blob();
    p.server_config.host_key_blob = host->public_part().blob();
    p.start();
    p.run();
    CHECK(p.client_authenticated);
    bool saw_hostbound = false;
    for (const auto& m : p.to_server)
        if (auto r = userauth_request::decode(m); r && r->method == method_publickey_hostbound)
            saw_hostbound = true;
    CHECK(saw_hostbound);
    CHECK(p.server_logged(accepted_line(key->public_part())));

    // A request bound to another host key ends the connection.
    auth_pair q;
    q.users["alice"].authorized.push_back(key->public_part());
    q.client_config.identities.push_back(loaded_identity(key, "k"));
    q.session.hostbound_offered = true;
    q.session.host_key_blob = test_key(key_type::ed25519, 1)->public_part().blob();
    q.server_config.host_key_blob = host->public_part().blob();
    q.start();
    q.run();
    CHECK(!q.server_authenticated);
    REQUIRE(q.server_disconnect);
    CHECK(q.server_disconnect->first == disconnect_reason::protocol_error);
}

TEST_CASE("a signature over the wrong session is refused")
{
    auto key = test_key(key_type::ed25519);
    auth_pair p;
    p.users["alice"].authorized.push_back(key->public_part());
    p.client_config.identities.push_back(loaded_identity(key, "k"));
    p.client_config.preferred_authentications = "publickey";
    p.start();
    // The client signs over another session than the server's.
    client_auth_session other = p.session;
    other.session_id = {7, 7, 7};
    p.client->update_session(other);
    p.run();
    INFO(p.dump_logs());
    CHECK(!p.server_authenticated);
    CHECK(p.server_logged("Failed publickey for alice from 127.0.0.1 port 50000 ssh2: " +
                          describe_key(key->public_part())));
}

TEST_CASE("identity_from_key_file reads the public half and loads on demand")
{
    const auto dir = std::filesystem::path(LONGHAUL_TEST_DATA) / "keys";
    auto id = identity_from_key_file(dir / "ed25519_enc_key", true);
    REQUIRE(id.key.has_value());
    CHECK(id.key->type() == key_type::ed25519);
    REQUIRE(id.load);
    auto none = id.load(std::nullopt);
    REQUIRE(!none.has_value());
    CHECK(none.error() == errc::passphrase_required);
    auto ok = id.load(std::string_view("longhaul-test"));
    REQUIRE(ok.has_value());
    CHECK(ok->public_part() == *id.key);

    auto missing = identity_from_key_file(dir / "no_such_key", false);
    CHECK(!missing.key.has_value());
    auto r = missing.load(std::nullopt);
    REQUIRE(!r.has_value());
    CHECK(r.error() == errc::io_error);
}
