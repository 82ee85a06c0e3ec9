// Every cipher x MAC x key exchange method, client and server cores wired
// together in memory: key exchange, several rekeys, and payload in both
// directions that must arrive byte-exact.
#include "common/transport/transport.hpp"
#include "common/transport/algorithms.hpp"

#include "common/crypto/packet_cipher.hpp"
#include "common/name_list.hpp"
#include "tests/transport/data_exchange.hpp"

#include <cstdlib>

using namespace longhaul;
using namespace longhaul::test;

namespace {

// LONGHAUL_TEST_SCALE scales the data volumes (the sanitizer run uses less).
double test_scale()
{
    const char* s = std::getenv("LONGHAUL_TEST_SCALE");
    return s ? std::atof(s) : 1.0;
}

struct combo {
    std::string kex, host_key, cipher, mac;
};

std::vector<std::pair<std::string, std::string>> cipher_mac_pairs()
{
    std::vector<std::pair<std::string, std::string>> out;
    for (auto c : supported_ciphers()) {
        if (find_cipher(c)->aead) {
            out.emplace_back(c, "");
            continue;
        }
        for (auto m : supported_macs())
            out.emplace_back(c, m);
    }
    return out;
}

void run_combo(const combo& c, std::uint64_t bytes_each_way, int rekeys, std::uint64_t seed)
{
    INFO("kex=" << c.kex << " hostkey=" << c.host_key << " cipher=" << c.cipher << " mac=" << c.mac);
    transport_config cc, sc;
    cc.kex_algorithms = sc.kex_algorithms = c.kex;
    cc.host_key_algorithms = c.host_key;
    sc.host_key_algorithms = supported_host_key_algorithms();
    cc.ciphers = sc.ciphers = c.cipher;
    if (!c.mac.empty())
        cc.macs = sc.macs = c.mac;
    transport_pair p(cc, sc, seed);
    p.run();
    REQUIRE(p.client->established());
    REQUIRE(p.server->established());
    CHECK(p.client->algorithms().kex == c.kex);
    CHECK(p.client->algorithms().host_key == c.host_key);
    CHECK(p.client->algorithms().cipher_c2s == c.cipher);
    CHECK(p.server->algorithms().mac_s2c == c.mac);
    CHECK(p.client->strict_kex());
    auto r = exchange_data(p, bytes_each_way, rekeys, seed);
    CHECK(r.bytes_c2s == bytes_each_way);
    CHECK(r.recv_bytes_c2s == bytes_each_way);
    CHECK(r.recv_bytes_s2c == bytes_each_way);
    CHECK(r.sent_c2s == r.recv_c2s);
    CHECK(r.sent_s2c == r.recv_s2c);
    CHECK(p.client_log.kex_completed == 1 + rekeys);
    CHECK(p.server_log.kex_completed == 1 + rekeys);
    CHECK(p.client->stats().key_exchanges == std::uint32_t(1 + rekeys));
    CHECK_FALSE(p.client->closed());
    CHECK_FALSE(p.server->closed());
}

void run_kex_family(std::string_view kex)
{
    const std::string host_list = supported_host_key_algorithms();
    const auto host_algs = split_name_list(host_list);
    const auto pairs = cipher_mac_pairs();
    const auto size = static_cast<std::uint64_t>(2 * 1024 * 1024 * test_scale());
    std::size_t i = 0;
    for (const auto& [cipher, mac] : pairs) {
        // Host key algorithms rotate through the combinations so each is covered with each kex.
        combo c{std::string(kex), std::string(host_algs[i % host_algs.size()]), cipher, mac};
        run_combo(c, size, 3, 100 + i);
        ++i;
    }
}

} // namespace

// One test case per key exchange method so ctest/doctest can report and
// filter them separately.
TEST_CASE("matrix: mlkem768x25519-sha256") { run_kex_family("mlkem768x25519-sha256"); }
TEST_CASE("matrix: sntrup761x25519-sha512") { run_kex_family("sntrup761x25519-sha512"); }
TEST_CASE("matrix: sntrup761x25519-sha512@openssh.com") { run_kex_family("sntrup761x25519-sha512@openssh.com"); }
TEST_CASE("matrix: curve25519-sha256") { run_kex_family("curve25519-sha256"); }
TEST_CASE("matrix: curve25519-sha256@libssh.org") { run_kex_family("curve25519-sha256@libssh.org"); }
TEST_CASE("matrix: ecdh-sha2-nistp256") { run_kex_family("ecdh-sha2-nistp256"); }
TEST_CASE("matrix: ecdh-sha2-nistp384") { run_kex_family("ecdh-sha2-nistp384"); }
TEST_CASE("matrix: ecdh-sha2-nistp521") { run_kex_family("ecdh-sha2-nistp521"); }
TEST_CASE("matrix: diffie-hellman-group14-sha256") { run_kex_family("diffie-hellman-group14-sha256"); }
TEST_CASE("matrix: diffie-hellman-group16-sha512") { run_kex_family("diffie-hellman-group16-sha512"); }
TEST_CASE("matrix: diffie-hellman-group18-sha512") { run_kex_family("diffie-hellman-group18-sha512"); }
TEST_CASE("matrix: diffie-hellman-group-exchange-sha256") { run_kex_family("diffie-hellman-group-exchange-sha256"); }

TEST_CASE("matrix: every key exchange method the transport offers has its row above")
{
    const std::vector<std::string_view> rows = {"mlkem768x25519-sha256",
                                                "sntrup761x25519-sha512",
                                                "sntrup761x25519-sha512@openssh.com",
                                                "curve25519-sha256",
                                                "curve25519-sha256@libssh.org",
                                                "ecdh-sha2-nistp256",
                                                "ecdh-sha2-nistp384",
                                                "ecdh-sha2-nistp521",
                                                "diffie-hellman-group-exchange-sha256",
                                                "diffie-hellman-group16-sha512",
                                                "diffie-hellman-group18-sha512",
                                                "diffie-hellman-group14-sha256"};
    CHECK(supported_kex_methods() == rows);
}

TEST_CASE("matrix: every host key algorithm signs and verifies the exchange hash")
{
    const std::string host_list = supported_host_key_algorithms();
    for (auto alg : split_name_list(host_list)) {
        combo c{"curve25519-sha256", std::string(alg), "aes128-gcm@openssh.com", ""};
        run_combo(c, 64 * 1024, 1, 7);
    }
}

TEST_CASE("matrix: 100 MiB through one combination per cipher")
{
    const auto size = static_cast<std::uint64_t>(100.0 * 1024 * 1024 * test_scale());
    std::uint64_t seed = 500;
    for (auto cipher : supported_ciphers()) {
        std::string mac = find_cipher(cipher)->aead ? "" : "hmac-sha2-256-etm@openssh.com";
        combo c{"curve25519-sha256", "ssh-ed25519", std::string(cipher), mac};
        run_combo(c, size, 4, seed++);
    }
}
