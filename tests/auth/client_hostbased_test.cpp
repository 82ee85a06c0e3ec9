// The client machine's hostbased method against the server machine: keys
// in HostbasedAcceptedAlgorithms order, each once, certificates with their
// algorithm, what ssh-keysign is asked to sign (checked as the helper
// checks it), a helper that fails, and OpenSSH's -v lines.
#include "common/auth/keysign_protocol.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "tests/auth/auth_harness.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

client_host_key host_key_of(const private_key& k, std::string path)
{
    return client_host_key{std::move(path), k.public_part(), nullptr};
}

// A pair whose server takes hostbased from client.example. for "al" with
// the keys `allowed`, and whose client holds `keys` (ssh-keysign signs
// with all of them).
void set_up(auth_pair& p, const std::vector<std::shared_ptr<const private_key>>& keys,
            const std::vector<std::shared_ptr<const private_key>>& allowed)
{
    // A session id of a hash's length: ssh-keysign refuses others.
    p.session_id = bytes(32, 0x5e);
    p.server_config.settings.hostbased_authentication = true;
    p.server_config.settings.hostbased_accepted_algorithms =
        "ssh-ed25519-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256";
    p.users["alice"];
    for (const auto& k : allowed)
        p.users["alice"].hosts.push_back({k->public_part(), "client.example.", "al"});
    p.client_config.hostbased_authentication = true;
    p.client_config.pubkey_authentication = false;
    p.client_config.local_host = "client.example";
    p.client_config.local_user = "al";
    for (const auto& k : keys) {
        p.client_config.host_keys.push_back(host_key_of(*k, "/etc/ssh/host_key"));
        p.host_private_keys[k->public_part().blob()] = k;
    }
}

std::vector<std::string> keysign_algorithms(const auth_pair& p)
{
    std::vector<std::string> out;
    for (const auto& ev : p.keysigns)
        out.push_back(ev.algorithm);
    return out;
}

} // namespace

TEST_CASE("client hostbased: a host key the server takes logs in; ssh-keysign gets what it checks")
{
    auto k = test_key(key_type::ed25519);
    auth_pair p;
    set_up(p, {k}, {k});
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_authenticated);
    CHECK(p.client_method == "hostbased");
    CHECK(p.client_logged("Next authentication method: hostbased"));
    CHECK(p.client_logged("userauth_hostbased: trying hostkey ssh-ed25519 " + k->public_part().fingerprint_sha256() +
                          " using sigalg ssh-ed25519"));
    CHECK(p.client_logged("userauth_hostbased: chost client.example."));
    CHECK(p.server_logged("Accepted hostbased for alice from 127.0.0.1 port 50000 ssh2: ED25519 " +
                          k->public_part().fingerprint_sha256()));
    // What the helper is asked to sign passes the helper's own check, for
    // this host (any case) and user only.
    REQUIRE(p.keysigns.size() == 1);
    std::string why;
    auto req = check_keysign_data(p.keysigns[0].data, "CLIENT.example", "al", why);
    REQUIRE(req);
    CHECK(req->algorithm == "ssh-ed25519");
    CHECK(req->key_blob == k->public_part().blob());
    CHECK_FALSE(check_keysign_data(p.keysigns[0].data, "other.example", "al", why));
    CHECK(why.empty());
    CHECK_FALSE(check_keysign_data(p.keysigns[0].data, "client.example", "root", why));
}

TEST_CASE("client hostbased: keys in HostbasedAcceptedAlgorithms order, each tried once")
{
    auto ed = test_key(key_type::ed25519);
    auto ec = test_key(key_type::ecdsa_p256);
    auto rsa = test_key(key_type::rsa);
    SUBCASE("the list's order, not the files'")
    {
        auth_pair p;
        set_up(p, {ec, ed, rsa}, {ec});
        p.client_config.hostbased_accepted_algorithms = "rsa-sha2-256,ssh-ed25519,ecdsa-sha2-nistp256";
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK(p.client_authenticated);
        CHECK(keysign_algorithms(p) == std::vector<std::string>{"rsa-sha2-256", "ssh-ed25519", "ecdsa-sha2-nistp256"});
    }
    SUBCASE("an RSA key once, with the first of its algorithms listed")
    {
        auth_pair p;
        set_up(p, {rsa}, {});
        p.client_config.hostbased_accepted_algorithms = "rsa-sha2-512,rsa-sha2-256";
        p.start();
        p.run();
        INFO(p.dump_logs());
        CHECK_FALSE(p.client_authenticated);
        CHECK(keysign_algorithms(p) == std::vector<std::string>{"rsa-sha2-512"});
        CHECK(p.client_logged("No more client hostkeys for hostbased authentication."));
        CHECK(p.client_failed.has_value());
    }
    SUBCASE("a key no listed algorithm fits is not offered")
    {
        auth_pair p;
        set_up(p, {ed}, {ed});
        p.client_config.hostbased_accepted_algorithms = "ecdsa-sha2-nistp256";
        p.start();
        p.run();
        CHECK_FALSE(p.client_authenticated);
        CHECK(p.keysigns.empty());
    }
    SUBCASE("not enabled: never tried")
    {
        auth_pair p;
        set_up(p, {ed}, {ed});
        p.client_config.hostbased_authentication = false;
        p.start();
        p.run();
        CHECK_FALSE(p.client_authenticated);
        CHECK(p.keysigns.empty());
        CHECK_FALSE(p.client_logged("Next authentication method: hostbased"));
    }
}

TEST_CASE("client hostbased: ssh-keysign failing gives the method up")
{
    auto ed = test_key(key_type::ed25519);
    auto ec = test_key(key_type::ecdsa_p256);
    auth_pair p;
    set_up(p, {ed, ec}, {ec});
    p.host_private_keys.clear();
    p.client_config.password_authentication = true;
    p.client_config.kbd_interactive_authentication = false;
    p.server_config.settings.password_authentication = true;
    p.users["alice"].password = "pw";
    p.on_prompt = [](const client_auth_event&) { return std::vector<std::string>{"pw"}; };
    p.answer_delay = 2;
    p.start();
    p.run();
    INFO(p.dump_logs());
    // One attempt: the second key is not tried; password is next.
    CHECK(p.keysigns.size() == 1);
    CHECK(p.client_logged("sign using hostkey ssh-ed25519 " + ed->public_part().fingerprint_sha256() + " failed"));
    CHECK(p.client_authenticated);
    CHECK(p.client_method == "password");
}

TEST_CASE("client hostbased: a host certificate goes first, with its algorithm")
{
    const auto fixture = load_host_certificate_fixture();
    const auto& key = fixture.key;
    const auto& cert = fixture.cert;
    auth_pair p;
    set_up(p, {key}, {key});
    p.client_config.host_keys.insert(p.client_config.host_keys.begin(),
                                     client_host_key{"/etc/ssh/host_key-cert", cert->key(), cert});
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_authenticated);
    REQUIRE(!p.keysigns.empty());
    CHECK(p.keysigns[0].algorithm == "ssh-ed25519-cert-v01@openssh.com");
    CHECK(p.client_logged("userauth_hostbased: trying hostkey ssh-ed25519-cert-v01@openssh.com " +
                          cert->key().fingerprint_sha256() + " using sigalg ssh-ed25519-cert-v01@openssh.com"));
    std::string why;
    auto req = check_keysign_data(p.keysigns[0].data, "client.example", "al", why);
    REQUIRE(req);
    CHECK(req->key_blob == cert->blob());
    CHECK(req->certificate);
    CHECK(req->key == cert->key());
    CHECK(host_key_signature_algorithm(req->algorithm) == "ssh-ed25519");
}
