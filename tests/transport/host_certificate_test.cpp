// A server with HostCertificate: the certificate algorithms are offered
// next to their keys, K_S is the certificate, and the certified key signs
// the exchange hash with the plain algorithm; the client core hands the
// parsed certificate to its caller. Also the privilege-separated form
// (host_public_keys + a signer) and a re-exchange.
#include "common/transport/host_key_algorithms.hpp"
#include "common/transport/transport.hpp"

#include "common/name_list.hpp"
#include "common/wire.hpp"
#include "tests/transport/data_exchange.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

const private_key& ca_key()
{
    static const private_key ca = [] {
        auto k = private_key::generate(key_type::ed25519, 0);
        REQUIRE(k.has_value());
        return std::move(*k);
    }();
    return ca;
}

std::vector<certificate> host_certs()
{
    std::vector<certificate> out;
    seeded_random rng(99);
    std::uint64_t serial = 1;
    for (const auto& k : host_keys()) {
        certificate_fields f;
        f.kind = cert_kind::host;
        f.serial = serial++;
        f.key_id = "host " + std::string(k->public_part().type_name());
        f.principals = {"host.example"};
        auto c = certificate::sign(f, k->public_part(), ca_key(), rng);
        REQUIRE(c.has_value());
        out.push_back(std::move(*c));
    }
    return out;
}

void run_with(std::string_view alg, bool remote_signer, int rekeys)
{
    INFO("host key algorithm " << alg << (remote_signer ? " (remote signer)" : ""));
    transport_config cc, sc;
    cc.host_key_algorithms = std::string(alg);
    sc.host_key_algorithms = default_certificate_host_key_algorithms() + "," + supported_host_key_algorithms();
    sc.host_certificates = host_certs();
    if (remote_signer) {
        for (const auto& k : host_keys())
            sc.host_public_keys.push_back(k->public_part());
        sc.host_key_signer = [](const public_key& key, std::string_view sig_alg, byte_span data) -> result<bytes> {
            // The monitor is asked with the plain key and algorithm.
            CHECK_FALSE(is_certificate_algorithm(sig_alg));
            for (const auto& k : host_keys())
                if (k->public_part() == key)
                    return k->sign(sig_alg, data);
            return errc::invalid_argument;
        };
        sc.host_keys = {nullptr}; // not used with a signer; keeps the harness from filling it
    }
    transport_pair p(cc, sc, 5);
    p.run();
    REQUIRE(p.client->established());
    REQUIRE(p.server->established());
    CHECK(p.client->algorithms().host_key == alg);
    const auto& cert = p.client->server_host_certificate();
    REQUIRE(cert.has_value());
    CHECK(cert->kind() == cert_kind::host);
    CHECK(cert->signature_key() == ca_key().public_part());
    CHECK(p.client->server_host_key() == cert->key());
    auto want = host_key_type_for_algorithm(alg);
    REQUIRE(want.has_value());
    CHECK(cert->key().type() == *want);
    // The signature was made with the plain algorithm.
    wire_reader r(p.client->server_signature());
    const byte_span name = r.string(64);
    CHECK(std::string(name.begin(), name.end()) == host_key_signature_algorithm(alg));
    if (rekeys > 0) {
        auto x = exchange_data(p, 64 * 1024, rekeys, 3);
        CHECK(x.recv_bytes_s2c == 64 * 1024);
        CHECK(p.client_log.kex_completed == 1 + rekeys);
        CHECK_FALSE(p.client->closed());
    }
}

} // namespace

TEST_CASE("host certificate: every certificate algorithm, local keys")
{
    const std::string algs = default_certificate_host_key_algorithms();
    for (auto alg : split_name_list(algs))
        run_with(alg, false, 0);
}

TEST_CASE("host certificate: every certificate algorithm through a signer elsewhere, with re-exchanges")
{
    const std::string algs = default_certificate_host_key_algorithms();
    for (auto alg : split_name_list(algs))
        run_with(alg, true, 2);
}

TEST_CASE("host certificate: the offer follows OpenSSH's order, and nothing changes without certificates")
{
    const auto certs = host_certs();
    std::vector<const public_key*> keys;
    for (const auto& k : host_keys())
        keys.push_back(&k->public_part());
    const std::string allowed = default_certificate_host_key_algorithms() + "," + supported_host_key_algorithms();
    // Only the ed25519 and RSA keys certified: each key's plain names, then its certificate names.
    std::vector<certificate> some = {certs[0], certs[4]};
    CHECK(server_host_key_algorithm_order(keys, some, allowed) ==
          "ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,"
          "rsa-sha2-512,rsa-sha2-256,ssh-rsa,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com");
    // HostKeyAlgorithms still filters.
    CHECK(server_host_key_algorithm_order(keys, some, "ssh-ed25519,rsa-sha2-256-cert-v01@openssh.com") ==
          "ssh-ed25519,rsa-sha2-256-cert-v01@openssh.com");

    // A client that only takes a certificate the server lacks: no match.
    transport_config cc, sc;
    cc.host_key_algorithms = "ecdsa-sha2-nistp256-cert-v01@openssh.com";
    sc.host_key_algorithms = allowed;
    sc.host_certificates = some;
    transport_pair p(cc, sc, 9);
    p.run();
    CHECK_FALSE(p.client->established());
    CHECK(p.client->closed());

    // No certificates: no certificate algorithm is offered.
    transport_config cc2, sc2;
    cc2.host_key_algorithms = "ssh-ed25519-cert-v01@openssh.com,ssh-ed25519";
    sc2.host_key_algorithms = allowed;
    transport_pair p2(cc2, sc2, 10);
    p2.run();
    REQUIRE(p2.client->established());
    CHECK(p2.client->algorithms().host_key == "ssh-ed25519");
    CHECK_FALSE(p2.client->server_host_certificate().has_value());
}

TEST_CASE("host certificate: a certificate for a key the server does not hold is never offered")
{
    auto other = private_key::generate(key_type::ed25519, 0);
    REQUIRE(other.has_value());
    seeded_random rng(3);
    certificate_fields f;
    f.kind = cert_kind::host;
    auto c = certificate::sign(f, other->public_part(), ca_key(), rng);
    REQUIRE(c.has_value());
    transport_config cc, sc;
    cc.host_key_algorithms = "ssh-ed25519-cert-v01@openssh.com,ssh-ed25519";
    sc.host_key_algorithms = default_certificate_host_key_algorithms() + "," + supported_host_key_algorithms();
    sc.host_certificates = {*c};
    transport_pair p(cc, sc, 11);
    p.run();
    REQUIRE(p.client->established());
    CHECK(p.client->algorithms().host_key == "ssh-ed25519");
}

TEST_CASE("host certificate: a certificate whose CA signature does not verify fails the exchange cleanly")
{
    auto certs = host_certs();
    bytes blob = certs[0].blob();
    blob[blob.size() - 5] ^= 0x01; // inside the CA's signature
    auto tampered = certificate::from_blob(blob);
    REQUIRE(tampered.has_value()); // parsing checks structure only
    transport_config cc, sc;
    cc.host_key_algorithms = "ssh-ed25519-cert-v01@openssh.com";
    sc.host_key_algorithms = default_certificate_host_key_algorithms() + "," + supported_host_key_algorithms();
    sc.host_certificates = {*tampered};
    transport_pair p(cc, sc, 12);
    p.run();
    CHECK_FALSE(p.client->established());
    CHECK(p.client->closed());
    CHECK(p.client_log.host_key_events == 0);
}
