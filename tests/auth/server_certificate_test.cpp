// The server machine with user certificates (publickey with a
// *-cert-v01@openssh.com algorithm): the certificate parsed and its CA
// signature checked before any policy is asked, CASignatureAlgorithms and
// PubkeyAcceptedAlgorithms, the signature made by the certified key with
// the plain algorithm, and sshd's log lines naming the certificate.
#include "common/auth/server_auth.hpp"

#include "common/keys/private_key.hpp"
#include "tests/auth/auth_harness.hpp"
#include "tests/counting_random.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

const private_key& key_of(int which, key_type t, int bits = 0)
{
    static std::map<int, private_key> keys;
    if (auto it = keys.find(which); it != keys.end())
        return it->second;
    auto k = private_key::generate(t, bits);
    REQUIRE(k);
    return keys.emplace(which, std::move(*k)).first->second;
}
const private_key& user_key() { return key_of(1, key_type::ed25519); }
const private_key& ca() { return key_of(2, key_type::ed25519); }
const private_key& rsa_user() { return key_of(3, key_type::rsa, 2048); }
const private_key& rsa_ca() { return key_of(4, key_type::rsa, 2048); }

certificate make_cert(const private_key& key, const private_key& signer, std::string_view ca_alg = {})
{
    certificate_fields f;
    f.serial = 9;
    f.key_id = "alice@test";
    f.principals = {"alice"};
    f.extensions = default_user_extensions();
    counting_random rng(5);
    auto c = certificate::sign(f, key.public_part(), signer, rng, ca_alg);
    REQUIRE(c);
    return std::move(*c);
}

// sshd's default PubkeyAcceptedAlgorithms (certificates first).
server_auth_settings sshd_defaults()
{
    server_auth_settings s;
    s.pubkey_accepted_algorithms =
        "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
        "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,"
        "rsa-sha2-512,rsa-sha2-256";
    return s;
}

struct cert_driver {
    explicit cert_driver(server_auth_settings settings = sshd_defaults(), bool with_policy = true)
    {
        server_auth_config cfg;
        cfg.settings = std::move(settings);
        cfg.remote_ip = "192.0.2.7";
        cfg.remote_port = 40022;
        cfg.session_id = {1, 2, 3, 4};
        server_auth_policy policy;
        policy.lookup_user = [](std::string_view user) {
            user_lookup r;
            r.status = user == "alice" ? user_status::valid : user_status::unknown;
            return r;
        };
        if (with_policy)
            policy.certificate_allowed = [this](std::string_view, const certificate& c, bool with_signature) {
                asked.push_back(with_signature);
                return key_decision{c.signature_key() == trusted, false, nullptr};
            };
        server = std::make_unique<server_auth>(cfg, std::move(policy));
        feed(service_request{"ssh-userauth"}.encode());
    }

    void feed(const bytes& payload)
    {
        server->handle(payload, seq++);
        for (auto ev = server->poll(); ev.type != server_auth_event_type::none; ev = server->poll()) {
            if (ev.type == server_auth_event_type::send)
                sent.push_back(ev.payload);
            else if (ev.type == server_auth_event_type::log)
                logs.push_back(ev.text);
            else if (ev.type == server_auth_event_type::authenticated)
                authenticated = true;
        }
    }

    // A signed publickey request for `cert` under `alg`, signed by `key` with `sig_alg`.
    void login(const certificate& cert, std::string alg, const private_key& key, std::string_view sig_alg,
               bytes blob = {})
    {
        userauth_publickey_data d;
        d.has_signature = true;
        d.algorithm = std::move(alg);
        d.key_blob = blob.empty() ? cert.blob() : blob;
        userauth_request req{"alice", "ssh-connection", "publickey", d};
        const bytes sid = {1, 2, 3, 4};
        auto sig = key.sign(sig_alg, publickey_signed_data(sid, req));
        REQUIRE(sig);
        std::get<userauth_publickey_data>(req.data).signature = *sig;
        feed(req.encode());
    }

    void query(const certificate& cert, std::string alg)
    {
        userauth_publickey_data d;
        d.algorithm = std::move(alg);
        d.key_blob = cert.blob();
        feed(userauth_request{"alice", "ssh-connection", "publickey", d}.encode());
    }

    bool logged(std::string_view line) const { return std::find(logs.begin(), logs.end(), line) != logs.end(); }

    public_key trusted = ca().public_part();
    std::unique_ptr<server_auth> server;
    std::uint32_t seq = 3;
    std::vector<bytes> sent;
    std::vector<std::string> logs;
    std::vector<bool> asked;
    bool authenticated = false;
};

std::string cert_text(const certificate& c)
{
    return std::string(key_type_short_name(c.key().type())) + "-CERT " + c.key().fingerprint_sha256() +
           " ID alice@test (serial 9) CA " + std::string(key_type_short_name(c.signature_key().type())) + " " +
           c.signature_key().fingerprint_sha256();
}

} // namespace

TEST_CASE("certificates: query, then a signature by the certified key with the plain algorithm")
{
    cert_driver d;
    const certificate c = make_cert(user_key(), ca());
    d.query(c, "ssh-ed25519-cert-v01@openssh.com");
    REQUIRE(d.sent.size() == 2);
    auto ok = userauth_pk_ok::decode(d.sent[1]);
    REQUIRE(ok);
    CHECK(ok->algorithm == "ssh-ed25519-cert-v01@openssh.com");
    CHECK(ok->key_blob == c.blob());
    d.login(c, "ssh-ed25519-cert-v01@openssh.com", user_key(), "ssh-ed25519");
    CHECK(d.authenticated);
    CHECK(d.asked == std::vector<bool>{false, true});
    CHECK(d.logged("Accepted publickey for alice from 192.0.2.7 port 40022 ssh2: " + cert_text(c)));
}

TEST_CASE("certificates: RSA with rsa-sha2-512, not with a SHA-1 signature")
{
    cert_driver d;
    d.trusted = rsa_ca().public_part();
    const certificate c = make_cert(rsa_user(), rsa_ca());
    d.login(c, "rsa-sha2-512-cert-v01@openssh.com", rsa_user(), "ssh-rsa");
    CHECK_FALSE(d.authenticated);
    CHECK(d.logged("Failed publickey for alice from 192.0.2.7 port 40022 ssh2: " + cert_text(c)));
    d.login(c, "rsa-sha2-512-cert-v01@openssh.com", rsa_user(), "rsa-sha2-512");
    CHECK(d.authenticated);
}

TEST_CASE("certificates: refused before the policy is asked")
{
    const certificate c = make_cert(user_key(), ca());
    SUBCASE("a CA signature algorithm outside CASignatureAlgorithms (ssh-rsa by default)")
    {
        cert_driver d;
        d.trusted = rsa_ca().public_part();
        d.login(make_cert(user_key(), rsa_ca(), "ssh-rsa"), "ssh-ed25519-cert-v01@openssh.com", user_key(),
                "ssh-ed25519");
        CHECK_FALSE(d.authenticated);
        CHECK(d.asked.empty());
        CHECK(d.logged("userauth_pubkey: certificate signature algorithm ssh-rsa: signature algorithm not supported "
                       "[preauth]"));
    }
    SUBCASE("PubkeyAcceptedAlgorithms without certificates")
    {
        server_auth_settings s;
        s.pubkey_accepted_algorithms = "ssh-ed25519";
        cert_driver d(s);
        d.login(c, "ssh-ed25519-cert-v01@openssh.com", user_key(), "ssh-ed25519");
        CHECK_FALSE(d.authenticated);
        CHECK(d.asked.empty());
        CHECK(d.logged("userauth_pubkey: signature algorithm ssh-ed25519-cert-v01@openssh.com not in "
                       "PubkeyAcceptedAlgorithms [preauth]"));
    }
    SUBCASE("a certificate under another type's algorithm")
    {
        cert_driver d;
        d.login(c, "ecdsa-sha2-nistp256-cert-v01@openssh.com", user_key(), "ssh-ed25519");
        CHECK_FALSE(d.authenticated);
        CHECK(d.asked.empty());
        CHECK(d.logged("userauth_pubkey: type mismatch for decoded key (received ssh-ed25519-cert-v01@openssh.com, "
                       "expected ecdsa-sha2-nistp256-cert-v01@openssh.com) [preauth]"));
    }
    SUBCASE("a certificate whose CA signature does not verify")
    {
        cert_driver d;
        bytes tampered = c.blob();
        tampered[tampered.size() - 3] ^= 1;
        d.login(c, "ssh-ed25519-cert-v01@openssh.com", user_key(), "ssh-ed25519", tampered);
        CHECK_FALSE(d.authenticated);
        CHECK(d.asked.empty());
        CHECK(d.logged("userauth_pubkey: parse key: incorrect signature [preauth]"));
    }
    SUBCASE("a plain key blob under a certificate algorithm")
    {
        cert_driver d;
        d.login(c, "ssh-ed25519-cert-v01@openssh.com", user_key(), "ssh-ed25519", user_key().public_part().blob());
        CHECK_FALSE(d.authenticated);
        CHECK(d.logged("userauth_pubkey: parse key: invalid format [preauth]"));
    }
    SUBCASE("no certificate policy: refused")
    {
        cert_driver d(sshd_defaults(), false);
        d.login(c, "ssh-ed25519-cert-v01@openssh.com", user_key(), "ssh-ed25519");
        CHECK_FALSE(d.authenticated);
    }
    SUBCASE("a CA the policy does not trust")
    {
        cert_driver d;
        d.trusted = rsa_ca().public_part();
        d.login(c, "ssh-ed25519-cert-v01@openssh.com", user_key(), "ssh-ed25519");
        CHECK_FALSE(d.authenticated);
        CHECK(d.asked == std::vector<bool>{true});
    }
}
