// The server machine's hostbased method (RFC 4252 section 9, as OpenSSH's
// userauth_hostbased()): the request parsed and checked before the policy
// is asked, the signature over the request checked by the client host's
// key, and the log lines sshd writes.
#include "common/auth/server_auth.hpp"

#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "tests/auth/auth_harness.hpp"
#include "tests/auth/server_driver.hpp"
#include "tests/file_text.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

struct host_client {
    host_client()
    {
        auto k = private_key::generate(key_type::ed25519);
        REQUIRE(k);
        key = std::make_shared<private_key>(std::move(*k));
    }

    // A signed hostbased request for `user` from `host`/`client_user`,
    // signed over `session` (the driver's session id unless told).
    bytes request(std::string user, std::string host, std::string client_user, bytes session = {1, 2, 3, 4},
                  std::string alg = "ssh-ed25519") const
    {
        userauth_hostbased_data d{alg, key->public_part().blob(), std::move(host), std::move(client_user), {}};
        userauth_request req{std::move(user), "ssh-connection", "hostbased", d};
        auto sig = key->sign("ssh-ed25519", publickey_signed_data(session, req));
        REQUIRE(sig);
        std::get<userauth_hostbased_data>(req.data).signature = *sig;
        return req.encode();
    }

    std::shared_ptr<private_key> key;
};

server_auth_settings hostbased_on()
{
    server_auth_settings s;
    s.hostbased_authentication = true;
    return s;
}

std::uint8_t last_type(const server_driver& d)
{
    REQUIRE(!d.sent.empty());
    return d.sent.back().at(0);
}

} // namespace

TEST_CASE("hostbased: a host key allowed for the user's client host and user logs in")
{
    host_client c;
    std::map<std::string, test_user> users{{"alice", {}}};
    users["alice"].hosts.push_back({c.key->public_part(), "client.example.", "al"});
    server_driver d(hostbased_on(), users);
    d.feed(service_request{"ssh-userauth"}.encode());
    d.feed(c.request("alice", "client.example.", "al"));
    CHECK(d.authenticated);
    CHECK(d.logged("userauth_hostbased: cuser al chost client.example. pkalg ssh-ed25519 slen 83 [preauth]"));
    CHECK(d.logged("Accepted hostbased for alice from 192.0.2.7 port 40022 ssh2: ED25519 " +
                   c.key->public_part().fingerprint_sha256()));
}

TEST_CASE("hostbased: refusals")
{
    host_client c;
    std::map<std::string, test_user> users{{"alice", {}}};
    users["alice"].hosts.push_back({c.key->public_part(), "client.example.", "al"});
    const std::string fp = c.key->public_part().fingerprint_sha256();

    SUBCASE("not enabled: not offered, not tried")
    {
        server_driver d({}, users);
        d.feed(service_request{"ssh-userauth"}.encode());
        d.feed(c.request("alice", "client.example.", "al"));
        CHECK_FALSE(d.authenticated);
        auto f = userauth_failure::decode(d.sent.back());
        REQUIRE(f);
        CHECK(f->methods == "publickey,password,keyboard-interactive");
    }
    SUBCASE("offered last in the list when enabled")
    {
        server_driver d(hostbased_on(), users);
        d.feed(service_request{"ssh-userauth"}.encode());
        d.feed(userauth_request{"alice", "ssh-connection", "none", userauth_none_data{}}.encode());
        auto f = userauth_failure::decode(d.sent.back());
        REQUIRE(f);
        CHECK(f->methods == "publickey,password,keyboard-interactive,hostbased");
    }
    SUBCASE("another client user or host: the policy says no, the line names them")
    {
        server_driver d(hostbased_on(), users);
        d.feed(service_request{"ssh-userauth"}.encode());
        d.feed(c.request("alice", "client.example.", "bob"));
        CHECK_FALSE(d.authenticated);
        CHECK(last_type(d) == msg::userauth_failure);
        CHECK(d.logged("Failed hostbased for alice from 192.0.2.7 port 40022 ssh2: ED25519 " + fp +
                       ", client user \"bob\", client host \"client.example\""));
        d.feed(c.request("alice", "other.example.", "al"));
        CHECK_FALSE(d.authenticated);
    }
    SUBCASE("a signature over another session, or by another key")
    {
        server_driver d(hostbased_on(), users);
        d.feed(service_request{"ssh-userauth"}.encode());
        d.feed(c.request("alice", "client.example.", "al", {9, 9, 9, 9}));
        CHECK_FALSE(d.authenticated);
        host_client other;
        auto forged = c.request("alice", "client.example.", "al");
        auto req = userauth_request::decode(forged);
        REQUIRE(req);
        auto& hd = std::get<userauth_hostbased_data>(req->data);
        auto sig = other.key->sign("ssh-ed25519", publickey_signed_data(bytes{1, 2, 3, 4}, *req));
        REQUIRE(sig);
        hd.signature = *sig;
        d.feed(req->encode());
        CHECK_FALSE(d.authenticated);
    }
    SUBCASE("an algorithm outside HostbasedAcceptedAlgorithms, unknown, or not the key's")
    {
        auto s = hostbased_on();
        s.hostbased_accepted_algorithms = "rsa-sha2-512";
        server_driver d(s, users);
        d.feed(service_request{"ssh-userauth"}.encode());
        d.feed(c.request("alice", "client.example.", "al"));
        CHECK_FALSE(d.authenticated);
        CHECK(d.logged(
            "userauth_hostbased: signature algorithm ssh-ed25519 not in HostbasedAcceptedAlgorithms [preauth]"));
        server_driver d2(hostbased_on(), users);
        d2.feed(service_request{"ssh-userauth"}.encode());
        d2.feed(c.request("alice", "client.example.", "al", {1, 2, 3, 4}, "ssh-foo"));
        CHECK(d2.logged("userauth_hostbased: unsupported public key algorithm: ssh-foo [preauth]"));
        d2.feed(c.request("alice", "client.example.", "al", {1, 2, 3, 4}, "rsa-sha2-256"));
        CHECK_FALSE(d2.authenticated);
        // A certificate algorithm over a plain key's blob.
        d2.feed(c.request("alice", "client.example.", "al", {1, 2, 3, 4},
                          "ssh-ed25519-cert-v01@openssh.com"));
        CHECK(d2.logged("userauth_hostbased: key_from_blob: invalid format [preauth]"));
        CHECK_FALSE(d2.authenticated);
    }
    SUBCASE("an invalid user is refused without asking the policy")
    {
        server_driver d(hostbased_on(), users);
        d.feed(service_request{"ssh-userauth"}.encode());
        d.feed(c.request("mallory", "client.example.", "al"));
        CHECK_FALSE(d.authenticated);
        CHECK(d.logged("userauth_hostbased: disabled because of invalid user [preauth]"));
    }
    SUBCASE("names too long for any host or user")
    {
        server_driver d(hostbased_on(), users);
        d.feed(service_request{"ssh-userauth"}.encode());
        d.feed(c.request("alice", std::string(2000, 'h'), "al"));
        CHECK_FALSE(d.authenticated);
        CHECK(d.logged("userauth_hostbased: client host or user name too long [preauth]"));
        CHECK(!d.disconnect);
    }
    SUBCASE("a truncated request ends the connection")
    {
        server_driver d(hostbased_on(), users);
        d.feed(service_request{"ssh-userauth"}.encode());
        auto r = c.request("alice", "client.example.", "al");
        r.resize(r.size() - 3);
        d.feed(r);
        CHECK(d.disconnect);
    }
}

TEST_CASE("hostbased: a host certificate")
{
    // Certified by ca_ed25519 for host.example and 127.0.0.1.
    const auto fixture = load_host_certificate_fixture();
    const auto& priv = fixture.key;
    const auto& cert = fixture.cert;
    const bytes cert_blob = cert->blob();
    auto request = [&](std::string alg, const bytes& blob) {
        userauth_hostbased_data d{std::move(alg), blob, "host.example.", "al", {}};
        userauth_request req{"alice", "ssh-connection", "hostbased", d};
        auto sig = priv->sign("ssh-ed25519", publickey_signed_data(bytes{1, 2, 3, 4}, req));
        REQUIRE(sig);
        std::get<userauth_hostbased_data>(req.data).signature = *sig;
        return req.encode();
    };
    std::map<std::string, test_user> users{{"alice", {}}};
    users["alice"].hosts.push_back({cert->key(), "host.example.", "al"});
    auto with_certs = hostbased_on();
    with_certs.hostbased_accepted_algorithms = "ssh-ed25519-cert-v01@openssh.com,ssh-ed25519";
    server_driver d(with_certs, users);
    d.feed(service_request{"ssh-userauth"}.encode());
    // The certificate's blob with the plain algorithm is a type mismatch.
    d.feed(request("ssh-ed25519", cert_blob));
    CHECK_FALSE(d.authenticated);
    d.feed(request("ssh-ed25519-cert-v01@openssh.com", cert_blob));
    CHECK(d.authenticated);
    CHECK(d.logged("Accepted hostbased for alice from 192.0.2.7 port 40022 ssh2: " + describe_certificate(*cert)));
    // CASignatureAlgorithms without the CA's algorithm refuses it.
    auto s = with_certs;
    s.ca_signature_algorithms = "rsa-sha2-512";
    server_driver d2(s, users);
    d2.feed(service_request{"ssh-userauth"}.encode());
    d2.feed(request("ssh-ed25519-cert-v01@openssh.com", cert_blob));
    CHECK_FALSE(d2.authenticated);
    CHECK(d2.logged("userauth_hostbased: certificate signature algorithm ssh-ed25519: signature algorithm not "
                    "supported [preauth]"));
    // A certificate whose CA signature does not hold.
    bytes broken = cert_blob;
    broken[broken.size() - 1] ^= 1;
    server_driver d3(with_certs, users);
    d3.feed(service_request{"ssh-userauth"}.encode());
    d3.feed(request("ssh-ed25519-cert-v01@openssh.com", broken));
    CHECK_FALSE(d3.authenticated);
    CHECK(d3.logged("userauth_hostbased: key_from_blob: incorrect signature [preauth]"));
}

TEST_CASE("hostbased: root under PermitRootLogin")
{
    host_client c;
    std::map<std::string, test_user> users{{"root", {}}};
    users["root"].is_root = true;
    users["root"].hosts.push_back({c.key->public_part(), "client.example.", "root"});
    for (auto [rule, ok] : {std::pair{permit_root_login::prohibit_password, true}, {permit_root_login::yes, true},
                            {permit_root_login::forced_commands_only, false}, {permit_root_login::no, false}}) {
        auto s = hostbased_on();
        s.root_login = rule;
        server_driver d(s, users);
        d.feed(service_request{"ssh-userauth"}.encode());
        d.feed(c.request("root", "client.example.", "root"));
        CHECK(d.authenticated == ok);
    }
}
