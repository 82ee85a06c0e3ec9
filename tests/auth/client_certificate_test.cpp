// User certificates on the client (client_certificates.hpp and the client
// machine): reading certificate files (Debian-made fixtures in
// tests/data/certs), the algorithm a certificate is offered with (RSA's from
// server-sig-algs), PubkeyAcceptedAlgorithms filtering, which identity signs
// for a certificate, and the USERAUTH_REQUEST bytes: the certificate blob
// and algorithm in the signed data, the plain algorithm in the signature.
#include "common/auth/client_certificates.hpp"

#include "common/auth/agent_protocol.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "common/wire.hpp"
#include "tests/auth/auth_harness.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

const std::string certs_dir = std::string(LONGHAUL_TEST_DATA) + "/certs/";

certificate fixture_cert(const std::string& name)
{
    auto c = load_certificate_file(certs_dir + name + "-cert");
    REQUIRE(c.has_value());
    return std::move(*c);
}

std::shared_ptr<const private_key> fixture_key(const std::string& name)
{
    auto k = load_private_key_file(certs_dir + name, std::nullopt);
    REQUIRE(k.has_value());
    return std::make_shared<const private_key>(std::move(*k));
}

std::function<result<private_key>(std::optional<std::string_view>)> loader(const std::string& name, int* calls = nullptr)
{
    return [name, calls](std::optional<std::string_view>) {
        if (calls != nullptr)
            ++*calls;
        return load_private_key_file(certs_dir + name, std::nullopt);
    };
}

const bytes test_session_id = {0x5e, 0x55, 0x10, 0x4e, 0x1d};

// The client machine against a hand-played server that answers every
// query for `accept_blob` with PK_OK and refuses the rest.
struct client_cert_driver {
    client_cert_driver(client_auth_config cfg, std::optional<std::string> server_sig_algs)
    {
        cfg.user = "alice";
        cfg.host = "h";
        cfg.preferred_authentications = "publickey";
        client_auth_session s;
        s.session_id = test_session_id;
        s.server_sig_algs = std::move(server_sig_algs);
        client = std::make_unique<client_auth>(std::move(cfg), s);
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
            case client_auth_event_type::sign: signs.push_back(ev); break;
            case client_auth_event_type::failed: failed = ev.text; break;
            default: break;
            }
        }
    }
    // Plays the server until the client sends a signed request or gives up:
    // PK_OK for a query with `accept_blob`, FAILURE for anything else.
    std::optional<userauth_request> run(const bytes& accept_blob)
    {
        feed(service_accept{"ssh-userauth"}.encode());
        for (int guard = 0; guard < 20 && !failed && signs.empty(); ++guard) {
            REQUIRE(!sent.empty());
            auto r = userauth_request::decode(sent.back());
            REQUIRE(r.has_value());
            auto* pk = std::get_if<userauth_publickey_data>(&r->data);
            if (pk != nullptr && pk->has_signature)
                return *r;
            if (pk != nullptr) {
                queries.push_back(*pk);
                if (pk->key_blob == accept_blob) {
                    feed(userauth_pk_ok{pk->algorithm, pk->key_blob}.encode());
                    continue;
                }
            }
            const std::size_t before = sent.size();
            feed(userauth_failure{"publickey", false}.encode());
            if (sent.size() == before)
                break;
        }
        return std::nullopt;
    }
    bool logged(std::string_view text) const { return std::find(logs.begin(), logs.end(), text) != logs.end(); }
    int index_of(std::string_view text) const
    {
        auto it = std::find(logs.begin(), logs.end(), text);
        return it == logs.end() ? -1 : static_cast<int>(it - logs.begin());
    }
    std::string dump() const
    {
        std::string s;
        for (const auto& l : logs)
            s += l + "\n";
        return s;
    }

    std::unique_ptr<client_auth> client;
    std::vector<bytes> sent;
    std::vector<std::string> logs;
    std::vector<client_auth_event> signs;
    std::vector<userauth_publickey_data> queries;
    std::optional<std::string> failed;
};

// The bytes RFC 4252 §7 signs, written out by hand: the certificate blob and
// the certificate algorithm stand where a plain key's would.
bytes expected_signed_data(std::string_view alg, const bytes& blob)
{
    bytes out;
    wire_writer(out)
        .string(test_session_id)
        .u8(50)
        .string("alice")
        .string("ssh-connection")
        .string("publickey")
        .boolean(true)
        .string(alg)
        .string(blob);
    return out;
}

// Checks a signed request: certificate algorithm and blob in the request,
// a signature of the plain algorithm by the certified key over the data.
void check_signed(const userauth_request& req, const certificate& cert, std::string_view cert_alg,
                  std::string_view plain_alg)
{
    const auto& pk = std::get<userauth_publickey_data>(req.data);
    CHECK(req.method == "publickey");
    CHECK(pk.algorithm == cert_alg);
    CHECK(pk.key_blob == cert.blob());
    wire_reader r(pk.signature);
    CHECK(r.text(64) == plain_alg);
    const bytes data = expected_signed_data(cert_alg, cert.blob());
    CHECK(data == publickey_signed_data(test_session_id, req));
    CHECK(cert.key().verify(plain_alg, data, pk.signature).has_value());
}

std::string cert_fp(const certificate& c) { return c.key().fingerprint_sha256(); }

} // namespace

TEST_CASE("certificate files: -cert.pub found beside the key, plain keys and junk refused")
{
    auto c = load_certificate_file(certs_dir + "user_ed25519-cert");
    REQUIRE(c.has_value());
    CHECK(c->type_name() == "ssh-ed25519-cert-v01@openssh.com");
    CHECK(c->kind() == cert_kind::user);
    auto pub = load_public_key_file(certs_dir + "user_ed25519.pub");
    REQUIRE(pub.has_value());
    CHECK(c->key() == pub->key);
    // The file named in full (CertificateFile) reads the same.
    auto full = load_certificate_file(certs_dir + "user_ed25519-cert.pub");
    REQUIRE(full.has_value());
    CHECK(full->blob() == c->blob());
    CHECK(fixture_cert("user_rsa").type_name() == "ssh-rsa-cert-v01@openssh.com");
    CHECK(fixture_cert("user_ecdsa256").type_name() == "ecdsa-sha2-nistp256-cert-v01@openssh.com");
    CHECK(fixture_cert("host_ed25519").kind() == cert_kind::host);

    CHECK(load_certificate_file(certs_dir + "user_ed25519.pub").error() == errc::unsupported);
    CHECK(load_certificate_file(certs_dir + "no_such-cert").error() == errc::io_error);
    CHECK(parse_certificate_line("").error() == errc::invalid_format);
    CHECK(parse_certificate_line("ssh-ed25519-cert-v01@openssh.com").error() == errc::invalid_format);
    CHECK(parse_certificate_line("ssh-ed25519-cert-v01@openssh.com !!!notbase64").error() == errc::invalid_format);
    CHECK(parse_certificate_line("ssh-ed25519-cert-v01@openssh.com AAAA").error() == errc::invalid_format);
    // The type in the line must be the blob's.
    const std::string b64 = base64_encode(c->blob());
    CHECK(parse_certificate_line("ssh-ed25519-cert-v01@openssh.com " + b64 + " comment\r\n").has_value());
    CHECK(parse_certificate_line("ecdsa-sha2-nistp256-cert-v01@openssh.com " + b64).error() == errc::invalid_format);
    // Truncated blobs never crash, whatever the cut.
    for (std::size_t n = 0; n < c->blob().size(); n += 7) {
        const bytes cut(c->blob().begin(), c->blob().begin() + static_cast<std::ptrdiff_t>(n));
        CHECK_FALSE(parse_certificate_line("ssh-ed25519-cert-v01@openssh.com " + base64_encode(cut)).has_value());
    }
}

TEST_CASE("certificate algorithm: RSA from server-sig-algs, others by type, PubkeyAcceptedAlgorithms")
{
    const auto rsa = fixture_cert("user_rsa");
    const auto ed = fixture_cert("user_ed25519");
    const auto ec = fixture_cert("user_ecdsa256");
    const std::string def = default_client_pubkey_accepted_algorithms();
    CHECK(def ==
          "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
          "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
          "sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
          "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,"
          "ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
          "rsa-sha2-512,rsa-sha2-256");

    const std::optional<std::string> both = "ssh-ed25519,rsa-sha2-256,rsa-sha2-512";
    CHECK(choose_certificate_algorithm(rsa, def, both) == "rsa-sha2-512-cert-v01@openssh.com");
    CHECK(choose_certificate_algorithm(rsa, def, std::string("rsa-sha2-256")) == "rsa-sha2-256-cert-v01@openssh.com");
    CHECK(choose_certificate_algorithm(rsa, "rsa-sha2-256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com",
                                       both) == "rsa-sha2-256-cert-v01@openssh.com");
    // The server lists plain signature algorithms: SHA-1 only, no SHA-2 cert.
    CHECK_FALSE(choose_certificate_algorithm(rsa, def, std::string("ssh-rsa")));
    // No server-sig-algs: only the type name itself, which the default lacks.
    CHECK_FALSE(choose_certificate_algorithm(rsa, def, std::nullopt));
    CHECK(choose_certificate_algorithm(rsa, def + ",ssh-rsa-cert-v01@openssh.com", std::nullopt) ==
          "ssh-rsa-cert-v01@openssh.com");
    // Plain RSA names never stand for the certificate.
    CHECK_FALSE(choose_certificate_algorithm(rsa, "rsa-sha2-512,rsa-sha2-256", both));

    CHECK(choose_certificate_algorithm(ed, def, both) == "ssh-ed25519-cert-v01@openssh.com");
    CHECK(choose_certificate_algorithm(ec, def, std::nullopt) == "ecdsa-sha2-nistp256-cert-v01@openssh.com");
    CHECK_FALSE(choose_certificate_algorithm(ed, "ssh-ed25519", both));

    CHECK(certificate_allowed(rsa, def));
    CHECK(certificate_allowed(rsa, "rsa-sha2-256-cert-v01@openssh.com"));
    CHECK(certificate_allowed(rsa, "ssh-rsa-cert-v01@openssh.com"));
    CHECK_FALSE(certificate_allowed(rsa, "rsa-sha2-512,rsa-sha2-256,ssh-rsa"));
    CHECK(certificate_allowed(ed, "ssh-ed25519-cert-v01@openssh.com"));
    CHECK_FALSE(certificate_allowed(ed, "ssh-ed25519,ecdsa-sha2-nistp256-cert-v01@openssh.com"));

    CHECK(certificate_name_matches("/k/id", "/k/id"));
    CHECK(certificate_name_matches("/k/id-cert.pub", "/k/id"));
    CHECK(certificate_name_matches("/k/id.pub", "/k/id"));
    CHECK_FALSE(certificate_name_matches("/k/id-cert", "/k/id"));
    CHECK_FALSE(certificate_name_matches("/k/idx-cert.pub", "/k/id"));
}

TEST_CASE("-i key with key-cert.pub: the plain key, then the certificate, signed by the key file")
{
    // (Not a structured binding: clang 14, the sanitizer build's compiler,
    // cannot capture one in CAPTURE's lambda.)
    for (const auto& row :
         {std::tuple<std::string, std::optional<std::string>, std::string, std::string>{
              "user_ed25519", std::string("ssh-ed25519,rsa-sha2-512"), "ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519"},
          {"user_ecdsa256", std::nullopt, "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp256"},
          {"user_rsa", std::string("ssh-ed25519,rsa-sha2-256,rsa-sha2-512"), "rsa-sha2-512-cert-v01@openssh.com",
           "rsa-sha2-512"},
          {"user_rsa", std::string("rsa-sha2-256"), "rsa-sha2-256-cert-v01@openssh.com", "rsa-sha2-256"}}) {
        const std::string& name = std::get<0>(row);
        const std::optional<std::string>& ssa = std::get<1>(row);
        const std::string& cert_alg = std::get<2>(row);
        const std::string& plain_alg = std::get<3>(row);
        CAPTURE(name);
        CAPTURE(cert_alg);
        const auto cert = fixture_cert(name);
        const std::string path = certs_dir + name;
        int loads = 0;
        client_auth_config cfg;
        client_identity plain;
        plain.name = path;
        plain.user_provided = true;
        plain.key = cert.key();
        plain.load = loader(name, &loads);
        cfg.identities.push_back(plain);
        cfg.identities.push_back(identity_from_certificate(cert, path, true, loader(name)));
        client_cert_driver d(cfg, ssa);
        auto req = d.run(cert.blob());
        INFO(d.dump());
        REQUIRE(req.has_value());
        check_signed(*req, cert, cert_alg, plain_alg);
        const std::string label = std::string(key_type_short_name(cert.key().type()));
        const std::string plain_ident = path + " " + label + " " + cert_fp(cert) + " explicit";
        const std::string cert_ident = path + " " + label + "-CERT " + cert_fp(cert) + " explicit";
        // OpenSSH 9.2 lists (and offers) the key before its -cert.pub.
        CHECK(d.index_of("Will attempt key: " + plain_ident) >= 0);
        CHECK(d.index_of("Will attempt key: " + cert_ident) > d.index_of("Will attempt key: " + plain_ident));
        CHECK(d.index_of("Offering public key: " + cert_ident) > d.index_of("Offering public key: " + plain_ident));
        CHECK(d.logged("Server accepts key: " + cert_ident));
        CHECK(d.logged("sign_and_send_pubkey: using private key \"" + path + "\" for certificate"));
        CHECK(d.logged("sign_and_send_pubkey: signing using " + cert_alg + " " + cert_fp(cert)));
        // The plain identity signed: its loader ran.
        CHECK(loads == 1);
        // The query offered the certificate with the same algorithm.
        REQUIRE(d.queries.size() == 2);
        CHECK(d.queries[1].algorithm == cert_alg);
        CHECK(d.queries[1].key_blob == cert.blob());
    }
}

TEST_CASE("PubkeyAcceptedAlgorithms filters certificates by their own names")
{
    const auto cert = fixture_cert("user_ed25519");
    const std::string path = certs_dir + "user_ed25519";
    auto make = [&](std::string accepted) {
        client_auth_config cfg;
        cfg.pubkey_accepted_algorithms = std::move(accepted);
        client_identity plain;
        plain.name = path;
        plain.key = cert.key();
        plain.load = loader("user_ed25519");
        cfg.identities.push_back(plain);
        cfg.identities.push_back(identity_from_certificate(cert, path, false, loader("user_ed25519")));
        return cfg;
    };
    SUBCASE("plain names only: the certificate is skipped")
    {
        client_cert_driver d(make("ssh-ed25519,rsa-sha2-512"), std::string("ssh-ed25519"));
        auto req = d.run(cert.blob());
        INFO(d.dump());
        CHECK_FALSE(req);
        CHECK(d.logged("Skipping ssh-ed25519-cert-v01@openssh.com key " + path +
                       " - corresponding algorithm not in PubkeyAcceptedAlgorithms"));
        REQUIRE(d.queries.size() == 1);
        CHECK(d.queries[0].key_blob == cert.key().blob());
    }
    SUBCASE("certificates only: the key is skipped and the certificate signs with its own file")
    {
        client_cert_driver d(make("ssh-ed25519-cert-v01@openssh.com"), std::string("ssh-ed25519"));
        auto req = d.run(cert.blob());
        INFO(d.dump());
        REQUIRE(req);
        CHECK(d.logged("Skipping ssh-ed25519 key " + path + " - corresponding algorithm not in PubkeyAcceptedAlgorithms"));
        CHECK(d.logged("sign_and_send_pubkey: no separate private key for certificate \"" + path + "\""));
        check_signed(*req, cert, "ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519");
    }
    SUBCASE("an RSA certificate allowed by rsa-sha2-256-cert-v01 alone")
    {
        const auto rsa = fixture_cert("user_rsa");
        client_auth_config cfg;
        cfg.pubkey_accepted_algorithms = "rsa-sha2-256-cert-v01@openssh.com";
        cfg.identities.push_back(identity_from_certificate(rsa, "/r", false, loader("user_rsa")));
        client_cert_driver d(cfg, std::string("rsa-sha2-512,rsa-sha2-256"));
        auto req = d.run(rsa.blob());
        INFO(d.dump());
        REQUIRE(req);
        check_signed(*req, rsa, "rsa-sha2-256-cert-v01@openssh.com", "rsa-sha2-256");
    }
    SUBCASE("an RSA certificate and a server without RSA SHA-2")
    {
        const auto rsa = fixture_cert("user_rsa");
        client_auth_config cfg;
        cfg.identities.push_back(identity_from_certificate(rsa, "/r", false, loader("user_rsa")));
        client_cert_driver d(cfg, std::string("ssh-ed25519"));
        CHECK_FALSE(d.run(rsa.blob()));
        CHECK(d.logged("Skipping ssh-rsa-cert-v01@openssh.com key /r - corresponding algorithm not supported by server"));
    }
}

TEST_CASE("CertificateFile: first, signed by the identity or agent key holding its key, else skipped")
{
    const auto cert = fixture_cert("user_ecdsa256");
    const std::string cert_path = certs_dir + "user_ecdsa256-cert.pub";
    SUBCASE("a key file holds the key")
    {
        client_auth_config cfg;
        cfg.identities.push_back(identity_from_certificate(cert, cert_path, true, nullptr));
        cfg.identities.push_back(loaded_identity(fixture_key("user_ecdsa256"), "/home/alice/.ssh/id_ecdsa"));
        client_cert_driver d(cfg, std::string("ssh-ed25519"));
        auto req = d.run(cert.blob());
        INFO(d.dump());
        REQUIRE(req);
        // Offered first, without a plain query before it.
        REQUIRE(d.queries.size() == 1);
        CHECK(d.logged("Offering public key: " + cert_path + " ECDSA-CERT " + cert_fp(cert) + " explicit"));
        CHECK(d.logged("sign_and_send_pubkey: using private key \"" + cert_path + "\" for certificate"));
        check_signed(*req, cert, "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp256");
    }
    SUBCASE("the agent holds the key: a sign event for the agent key with the plain algorithm")
    {
        const auto rsa = fixture_cert("user_rsa");
        const auto key = fixture_key("user_rsa");
        client_auth_config cfg;
        cfg.identities.push_back(identity_from_certificate(rsa, "/c/user_rsa-cert.pub", true, nullptr));
        cfg.identities.push_back(agent_identity(key, "agent comment"));
        client_cert_driver d(cfg, std::string("rsa-sha2-512,rsa-sha2-256"));
        CHECK_FALSE(d.run(rsa.blob()));
        INFO(d.dump());
        REQUIRE(d.signs.size() == 1);
        const auto& ev = d.signs[0];
        REQUIRE(ev.identity != nullptr);
        CHECK(ev.identity->agent);
        CHECK(ev.identity_index == 1);
        CHECK(ev.algorithm == "rsa-sha2-512");
        CHECK(ev.agent_flags == agent::sign_flags_for("rsa-sha2-512"));
        CHECK(ev.data == expected_signed_data("rsa-sha2-512-cert-v01@openssh.com", rsa.blob()));
        auto sig = key->sign("rsa-sha2-512", ev.data);
        REQUIRE(sig);
        d.client->answer_signature(*sig);
        d.drain();
        auto req = userauth_request::decode(d.sent.back());
        REQUIRE(req);
        check_signed(*req, rsa, "rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-512");
    }
    SUBCASE("no identity holds the key: OpenSSH's debug line, then the next key")
    {
        client_auth_config cfg;
        cfg.identities.push_back(identity_from_certificate(cert, cert_path, true, nullptr));
        client_cert_driver d(cfg, std::string("ssh-ed25519"));
        CHECK_FALSE(d.run(cert.blob()));
        INFO(d.dump());
        CHECK(d.logged("sign_and_send_pubkey: no separate private key for certificate \"" + cert_path + "\""));
        REQUIRE(d.failed);
    }
}

TEST_CASE("PK_OK for a certificate: matched by blob, hostile answers refused cleanly")
{
    const auto cert = fixture_cert("user_ed25519");
    const auto other = fixture_cert("user_expired");
    client_auth_config cfg;
    cfg.identities.push_back(identity_from_certificate(cert, "/c", false, loader("user_ed25519")));
    SUBCASE("a certificate we did not offer")
    {
        client_cert_driver d(cfg, std::string("ssh-ed25519"));
        d.feed(service_accept{"ssh-userauth"}.encode());
        d.feed(userauth_failure{"publickey", false}.encode());
        d.feed(userauth_pk_ok{"ssh-ed25519-cert-v01@openssh.com", other.blob()}.encode());
        INFO(d.dump());
        CHECK(d.logged("input_userauth_pk_ok: server replied with unknown key: ED25519-CERT " + cert_fp(other)));
    }
    SUBCASE("a certificate blob under another certificate type")
    {
        client_cert_driver d(cfg, std::string("ssh-ed25519"));
        d.feed(service_accept{"ssh-userauth"}.encode());
        d.feed(userauth_failure{"publickey", false}.encode());
        d.feed(userauth_pk_ok{"ecdsa-sha2-nistp256-cert-v01@openssh.com", cert.blob()}.encode());
        INFO(d.dump());
        CHECK(d.logged("input_userauth_pk_ok: type mismatch for decoded key (received ssh-ed25519-cert-v01@openssh.com, "
                       "expected ecdsa-sha2-nistp256-cert-v01@openssh.com)"));
    }
    SUBCASE("garbage under a certificate algorithm")
    {
        client_cert_driver d(cfg, std::string("ssh-ed25519"));
        d.feed(service_accept{"ssh-userauth"}.encode());
        d.feed(userauth_failure{"publickey", false}.encode());
        d.feed(userauth_pk_ok{"ssh-ed25519-cert-v01@openssh.com", bytes{1, 2, 3}}.encode());
        INFO(d.dump());
        CHECK(d.logged("input_userauth_pk_ok: no key from blob. pkalg ssh-ed25519-cert-v01@openssh.com"));
    }
    SUBCASE("the plain key's blob does not match the certificate identity")
    {
        client_cert_driver d(cfg, std::string("ssh-ed25519"));
        d.feed(service_accept{"ssh-userauth"}.encode());
        d.feed(userauth_failure{"publickey", false}.encode());
        d.feed(userauth_pk_ok{"ssh-ed25519", cert.key().blob()}.encode());
        INFO(d.dump());
        CHECK(d.logged("input_userauth_pk_ok: server replied with unknown key: ED25519 " + cert_fp(cert)));
    }
}

TEST_CASE("agent-held certificates: user certificates become agent identities, anything else is skipped")
{
    const auto cert = fixture_cert("user_rsa");
    agent::identity a;
    a.key_blob = cert.blob();
    a.comment = "/home/alice/.ssh/id_rsa";
    auto id = identity_from_agent_certificate(a);
    REQUIRE(id);
    CHECK(id->agent);
    CHECK(id->name == "/home/alice/.ssh/id_rsa");
    REQUIRE(id->cert);
    CHECK(id->cert->blob() == cert.blob());
    CHECK(*id->key == cert.key());

    a.key_blob = fixture_cert("host_ed25519").blob();
    CHECK_FALSE(identity_from_agent_certificate(a));
    a.key_blob = cert.key().blob();
    CHECK_FALSE(identity_from_agent_certificate(a));
    a.key_blob = bytes{0, 0, 0, 3, 'a', 'b'};
    CHECK_FALSE(identity_from_agent_certificate(a));

    // Offered as held by the agent, signed by the agent's plain key.
    const auto key = fixture_key("user_rsa");
    a.key_blob = cert.blob();
    client_auth_config cfg;
    cfg.identities.push_back(*identity_from_agent_certificate(a));
    cfg.identities.push_back(agent_identity(key, "/home/alice/.ssh/id_rsa"));
    client_cert_driver d(cfg, std::string("rsa-sha2-256"));
    CHECK_FALSE(d.run(cert.blob()));
    INFO(d.dump());
    CHECK(d.logged("Offering public key: /home/alice/.ssh/id_rsa RSA-CERT " + cert_fp(cert) + " agent"));
    CHECK(d.logged("sign_and_send_pubkey: using private key \"/home/alice/.ssh/id_rsa\" from agent for certificate"));
    REQUIRE(d.signs.size() == 1);
    CHECK(d.signs[0].identity_index == 1);
    CHECK(d.signs[0].algorithm == "rsa-sha2-256");
    auto sig = key->sign("rsa-sha2-256", d.signs[0].data);
    REQUIRE(sig);
    d.client->answer_signature(*sig);
    d.drain();
    auto req = userauth_request::decode(d.sent.back());
    REQUIRE(req);
    check_signed(*req, cert, "rsa-sha2-256-cert-v01@openssh.com", "rsa-sha2-256");
}

TEST_CASE("an encrypted key signs for its certificate after the passphrase prompt names the key file")
{
    const auto cert = fixture_cert("user_ed25519");
    const std::string path = "/home/alice/.ssh/id_ed25519";
    client_identity plain;
    plain.name = path;
    plain.key = cert.key();
    plain.load = [](std::optional<std::string_view> passphrase) -> result<private_key> {
        if (!passphrase)
            return errc::passphrase_required;
        if (*passphrase != "pw")
            return errc::wrong_passphrase;
        return load_private_key_file(certs_dir + "user_ed25519", std::nullopt);
    };
    client_auth_config cfg;
    cfg.identities.push_back(plain);
    cfg.identities.push_back(identity_from_certificate(cert, path, false, plain.load));
    client_auth_session s;
    s.session_id = test_session_id;
    cfg.user = "alice";
    cfg.host = "h";
    cfg.preferred_authentications = "publickey";
    client_auth c(cfg, s);
    std::vector<bytes> sent;
    std::vector<client_auth_event> prompts;
    auto drain = [&] {
        for (auto ev = c.poll(); ev.type != client_auth_event_type::none; ev = c.poll()) {
            if (ev.type == client_auth_event_type::send)
                sent.push_back(to_bytes(ev.payload.span()));
            else if (ev.type == client_auth_event_type::prompt)
                prompts.push_back(ev);
        }
    };
    c.start();
    drain();
    c.handle(service_accept{"ssh-userauth"}.encode());
    drain();
    c.handle(userauth_failure{"publickey", false}.encode()); // answers "none"
    drain();
    c.handle(userauth_failure{"publickey", false}.encode()); // refuses the plain key's query
    drain();
    auto query = userauth_request::decode(sent.back());
    REQUIRE(query);
    CHECK(std::get<userauth_publickey_data>(query->data).key_blob == cert.blob());
    c.handle(userauth_pk_ok{"ssh-ed25519-cert-v01@openssh.com", cert.blob()}.encode());
    drain();
    REQUIRE(prompts.size() == 1);
    REQUIRE(prompts[0].prompts.size() == 1);
    CHECK(prompts[0].prompts[0].text == "Enter passphrase for key '" + path + "': ");
    c.answer_prompt({secret("wrong")});
    drain();
    REQUIRE(prompts.size() == 2);
    c.answer_prompt({secret("pw")});
    drain();
    auto req = userauth_request::decode(sent.back());
    REQUIRE(req);
    check_signed(*req, cert, "ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519");
}
