// ssh's decision on a host certificate (OpenSSH's verify_host_key /
// check_host_key / check_host_cert): @cert-authority lines with patterns
// and [host]:port names, principals, validity, kind, CASignatureAlgorithms,
// @revoked and RevokedHostKeys, and the fallback to the plain key.
#include "ssh/host_key_check.hpp"
#include "ssh/host_key_check_cert.hpp"
#include "ssh/known_hosts.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/private_key.hpp"
#include "ssh/options.hpp"
#include "ssh_test_util.hpp"
#include "tests/counting_random.hpp"

#include <doctest/doctest.h>

#include <ctime>
#include <map>

using namespace longhaul;
using longhaul::test::counting_random;
using longhaul::test::log_capture;
using longhaul::test::scratch_dir;

namespace {

const private_key& make_key(key_type t, int bits, int which)
{
    // Nodes stay put: references handed out earlier remain valid.
    static std::map<int, private_key> keys;
    if (auto it = keys.find(which); it != keys.end())
        return it->second;
    auto k = private_key::generate(t, bits);
    REQUIRE(k.has_value());
    return keys.emplace(which, std::move(*k)).first->second;
}
const private_key& host_key() { return make_key(key_type::ed25519, 0, 1); }
const private_key& ca() { return make_key(key_type::ed25519, 0, 2); }
const private_key& other_ca() { return make_key(key_type::ed25519, 0, 3); }
const private_key& rsa_ca() { return make_key(key_type::rsa, 2048, 4); }

std::uint64_t now_seconds() { return static_cast<std::uint64_t>(std::time(nullptr)); }

certificate make_cert(std::vector<std::string> principals, const private_key& signer = ca(),
                      cert_kind kind = cert_kind::host, std::uint64_t after = 0, std::uint64_t before = UINT64_MAX,
                      std::string_view sig_alg = {}, std::uint64_t serial = 1000)
{
    certificate_fields f;
    f.kind = kind;
    f.serial = serial;
    f.key_id = "host cert";
    f.principals = std::move(principals);
    f.valid_after = after;
    f.valid_before = before;
    counting_random rng(11);
    auto c = certificate::sign(f, host_key().public_part(), signer, rng, sig_alg);
    REQUIRE(c.has_value());
    return std::move(*c);
}

struct cert_fixture {
    scratch_dir home;
    config_environment env = test::test_environment(home.path());
    std::string kh = home / ".ssh/known_hosts";
    counting_random rng{7};
    log_capture log;

    void known_hosts(const std::string& text) { home.write(".ssh/known_hosts", text); }

    client_config config(std::vector<std::string> options)
    {
        std::vector<std::string> args = {"-F", "none", "-o", "GlobalKnownHostsFile=" + (home / "global"), "-o",
                                         "StrictHostKeyChecking=yes"};
        for (const auto& o : options) {
            args.push_back("-o");
            args.push_back(o);
        }
        args.push_back("server.example");
        auto opts = parse_command_line(args, env);
        client_config cfg = opts.config;
        load_client_config(cfg, opts.request(), env, {});
        return cfg;
    }

    host_key_verdict verify(client_config& cfg, const certificate& cert, int port = 22)
    {
        host_key_target t{"server.example", port, std::string("192.0.2.10"), false};
        return verify_host_key(cfg, t, cert.key(), &cert, env, {}, rng, log.sink());
    }
    bool logged(const std::string& line) const
    {
        for (const auto& [l, m] : log.messages)
            if (m == line)
                return true;
        return false;
    }
};

std::string ca_line(const std::string& hosts, const private_key& k = ca())
{
    return "@cert-authority " + hosts + " " + format_public_key(k.public_part()) + "\n";
}

} // namespace

TEST_CASE("host certificate: a @cert-authority line for the host accepts it")
{
    cert_fixture f;
    f.known_hosts(ca_line("server.example"));
    auto cfg = f.config({});
    const auto cert = make_cert({"server.example"});
    auto v = f.verify(cfg, cert);
    CHECK(v.accepted);
    CHECK(v.trusted);
    CHECK(f.log.text() == "");
    CHECK(f.logged("Host 'server.example' is known and matches the ED25519-CERT host certificate."));
    CHECK(f.logged("Found CA key in " + f.kh + ":1"));
    CHECK(f.log.messages.front().second ==
          "Server host certificate: ssh-ed25519-cert-v01@openssh.com " + cert.key().fingerprint_sha256() +
              ", serial 1000 ID \"host cert\" CA ssh-ed25519 " + ca().public_part().fingerprint_sha256() +
              " valid forever");
    // Nothing is added to known_hosts.
    CHECK(test::read_text_file(f.kh) == ca_line("server.example"));
}

TEST_CASE("host certificate: patterns, [host]:port and the port-less retry")
{
    cert_fixture f;
    f.known_hosts(ca_line("*.example,!bad.example"));
    auto cfg = f.config({});
    CHECK(f.verify(cfg, make_cert({"server.example"}), 22).accepted);
    // A non-default port: "[server.example]:2222" does not match the
    // pattern, the name without the port does.
    f.log.messages.clear();
    CHECK(f.verify(cfg, make_cert({"server.example"}), 2222).accepted);
    CHECK(f.logged("checking without port identifier"));
    CHECK(f.logged("found matching key w/out port"));

    cert_fixture g;
    g.known_hosts(ca_line("[server.example]:2222"));
    cfg = g.config({});
    CHECK(g.verify(cfg, make_cert({"server.example"}), 2222).accepted);
    CHECK(g.logged("Host '[server.example]:2222' is known and matches the ED25519-CERT host certificate."));
    g.log.messages.clear();
    // That line says nothing for port 22.
    CHECK_FALSE(g.verify(cfg, make_cert({"server.example"}), 22).accepted);
    CHECK(g.logged("No matching CA found. Retry with plain key"));

    cert_fixture n;
    n.known_hosts(ca_line("*.example,!server.example"));
    cfg = n.config({});
    CHECK_FALSE(n.verify(cfg, make_cert({"server.example"})).accepted);
}

TEST_CASE("host certificate: refusals fall back to the plain key")
{
    struct refusal {
        certificate cert;
        std::string message;
        log_level level = log_level::error;
        std::vector<std::string> options;
    };
    const std::uint64_t t = now_seconds();
    std::vector<refusal> cases = {
        {make_cert({"other.example", "127.0.0.1"}), "Certificate invalid: name is not a listed principal"},
        {make_cert({"server.example"}, ca(), cert_kind::host, t - 7200, t - 3600), "Certificate invalid: expired"},
        {make_cert({"server.example"}, ca(), cert_kind::host, t + 3600, t + 7200), "Certificate invalid: not yet valid"},
        {make_cert({"server.example"}, ca(), cert_kind::user), "Certificate invalid: not a host certificate"},
        {make_cert({"server.example"}, rsa_ca(), cert_kind::host, 0, UINT64_MAX, "rsa-sha2-256"),
         "Certificate signed with disallowed algorithm",
         log_level::error,
         {"CASignatureAlgorithms=ssh-ed25519,rsa-sha2-512"}},
    };
    for (auto& c : cases) {
        INFO(c.message);
        cert_fixture f;
        f.known_hosts(ca_line("server.example") + ca_line("server.example", rsa_ca()));
        auto cfg = f.config(c.options);
        CHECK_FALSE(f.verify(cfg, c.cert).accepted);
        CHECK(f.logged(c.message));
        CHECK(f.logged("No matching CA found. Retry with plain key"));
        // The plain key is then unknown, and strict checking refuses it.
        CHECK(f.logged("No ED25519 host key is known for server.example and you have requested strict checking."));

        // Known as a plain key as well: accepted as that.
        cert_fixture p;
        p.known_hosts(ca_line("server.example") + ca_line("server.example", rsa_ca()) + "server.example " +
                      format_public_key(host_key().public_part()) + "\n");
        cfg = p.config(c.options);
        CHECK(p.verify(cfg, c.cert).accepted);
        CHECK(p.logged("Host 'server.example' is known and matches the ED25519 host key."));
    }
    // With the RSA CA allowed, the same certificate passes.
    cert_fixture f;
    f.known_hosts(ca_line("server.example", rsa_ca()));
    auto cfg = f.config({});
    CHECK(f.verify(cfg, make_cert({"server.example"}, rsa_ca(), cert_kind::host, 0, UINT64_MAX, "rsa-sha2-256"))
              .accepted);
}

TEST_CASE("host certificate: a CA that is not in known_hosts, HostKeyAlias, no principals")
{
    cert_fixture f;
    f.known_hosts(ca_line("server.example", other_ca()));
    auto cfg = f.config({});
    CHECK_FALSE(f.verify(cfg, make_cert({"server.example"})).accepted);
    CHECK(f.logged("No matching CA found. Retry with plain key"));
    CHECK_FALSE(f.logged("Host 'server.example' is known and matches the ED25519-CERT host certificate."));

    // HostKeyAlias names the known_hosts entry and the principal.
    cert_fixture a;
    a.known_hosts(ca_line("alias.example"));
    cfg = a.config({"HostKeyAlias=alias.example"});
    CHECK(a.verify(cfg, make_cert({"alias.example"}), 2222).accepted);
    a.log.messages.clear();
    CHECK_FALSE(a.verify(cfg, make_cert({"server.example"}), 2222).accepted);
    CHECK(a.logged("Certificate invalid: name is not a listed principal"));

    // No principals: valid for any host. A wildcard is no pattern here
    // (OpenSSH 9.2 compares principals exactly).
    cert_fixture w;
    w.known_hosts(ca_line("server.example"));
    cfg = w.config({});
    CHECK(w.verify(cfg, make_cert({})).accepted);
    CHECK_FALSE(w.verify(cfg, make_cert({"*.example"})).accepted);
    CHECK(w.logged("Certificate invalid: name is not a listed principal"));
}

TEST_CASE("host certificate: revoked in known_hosts or RevokedHostKeys")
{
    // @revoked for the CA key: refused without the plain-key retry.
    cert_fixture f;
    f.known_hosts(ca_line("server.example") + "@revoked * " + format_public_key(ca().public_part()) + "\n" +
                  "server.example " + format_public_key(host_key().public_part()) + "\n");
    auto cfg = f.config({});
    CHECK_FALSE(f.verify(cfg, make_cert({"server.example"})).accepted);
    CHECK(f.logged("The ED25519-CERT host key for server.example is marked as revoked."));
    CHECK(f.logged("ED25519-CERT host key for server.example was revoked and you have requested strict checking."));
    CHECK_FALSE(f.logged("No matching CA found. Retry with plain key"));

    // @revoked for the certified key.
    cert_fixture k;
    k.known_hosts(ca_line("server.example") + "@revoked * " + format_public_key(host_key().public_part()) + "\n");
    cfg = k.config({});
    CHECK_FALSE(k.verify(cfg, make_cert({"server.example"})).accepted);

    // RevokedHostKeys listing the CA.
    cert_fixture r;
    r.known_hosts(ca_line("server.example"));
    const std::string revoked = r.home.write("revoked", format_public_key(ca().public_part()) + "\n");
    cfg = r.config({"RevokedHostKeys=" + revoked});
    const auto cert = make_cert({"server.example"});
    CHECK_FALSE(r.verify(cfg, cert).accepted);
    CHECK(r.log.text() == "Host key ED25519-CERT " + cert.key().fingerprint_sha256() + " revoked by file " + revoked);

    // A revoked-keys file naming someone else: accepted.
    cert_fixture o;
    o.known_hosts(ca_line("server.example"));
    const std::string other = o.home.write("revoked", format_public_key(other_ca().public_part()) + "\n");
    cfg = o.config({"RevokedHostKeys=" + other});
    CHECK(o.verify(cfg, cert).accepted);
}

TEST_CASE("host certificate: the Debian-made cert_fixture")
{
    const std::string text = test::read_text_file(std::string(LONGHAUL_TEST_DATA) + "/certs/host_ed25519-cert.pub");
    const auto sp1 = text.find(' ');
    const auto sp2 = text.find(' ', sp1 + 1);
    auto blob = base64_decode(text.substr(sp1 + 1, sp2 - sp1 - 1));
    REQUIRE(blob.has_value());
    auto cert = certificate::from_blob(*blob);
    REQUIRE(cert.has_value());
    CHECK(certificate_type_label(*cert) == "ED25519-CERT");
    CHECK_FALSE(check_host_certificate(*cert, "host.example", "ssh-ed25519", 1800000000).has_value());
    CHECK_FALSE(check_host_certificate(*cert, "127.0.0.1", "ssh-ed25519", 1800000000).has_value());
    CHECK(check_host_certificate(*cert, "other.example", "ssh-ed25519", 1800000000)->message ==
          "Certificate invalid: name is not a listed principal");
    CHECK(check_host_certificate(*cert, "host.example", "ssh-ed25519", 2300000000)->message ==
          "Certificate invalid: expired");
}

TEST_CASE("host certificate: known_hosts ordering prefers certificates under a @cert-authority line")
{
    const std::string defaults = "ssh-ed25519-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,ssh-ed25519,"
                                 "rsa-sha2-512";
    known_host_keys none;
    CHECK(order_host_key_algorithms(defaults, none) == defaults);
    known_host_keys with_ca;
    with_ca.load_text("h", "@cert-authority h " + format_public_key(ca().public_part()) + "\n", "kh");
    CHECK(order_host_key_algorithms("ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,rsa-sha2-512", with_ca) ==
          "ssh-ed25519-cert-v01@openssh.com,ssh-ed25519,rsa-sha2-512");
    known_host_keys with_rsa;
    auto rsa = rsa_ca().public_part();
    with_rsa.load_text("h", "h " + format_public_key(rsa) + "\n", "kh");
    // The best algorithm's plain type is not known: the RSA ones (certificate included) go first.
    CHECK(order_host_key_algorithms(defaults, with_rsa) ==
          "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-512,ssh-ed25519-cert-v01@openssh.com,ssh-ed25519");
    known_host_keys with_ed;
    with_ed.load_text("h", "h " + format_public_key(host_key().public_part()) + "\n", "kh");
    CHECK(order_host_key_algorithms(defaults, with_ed) == defaults);
}
