// Every cipher x MAC x key exchange method, client and server cores wired
// together in memory: key exchange, several rekeys, and payload in both
// directions that must arrive byte-exact.
#include "common/transport/transport.hpp"
#include "common/transport/algorithms.hpp"

#include "common/crypto/packet_cipher.hpp"
#include "common/name_list.hpp"
#include "tests/transport/data_exchange.hpp"

#include <algorithm>
#include <set>
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

// Every cipher with every HMAC. The UMACs each meet one CTR cipher per
// key exchange method, a different one for each method (`rotation`), so
// across the rows every UMAC meets every cipher and every method at a third
// of the full product's cost (the MAC does not depend on the exchange; the
// key exchanges are what makes a row slow).
std::vector<std::pair<std::string, std::string>> cipher_mac_pairs(std::size_t rotation)
{
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t ctr = 0;
    for (auto c : supported_ciphers()) {
        if (find_cipher(c)->aead) {
            out.emplace_back(c, "");
            continue;
        }
        std::size_t umacs = 0;
        for (auto m : supported_macs()) {
            if (!m.starts_with("umac-") || (rotation + umacs++) % 3 == ctr)
                out.emplace_back(c, m);
        }
        ++ctr;
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
    const auto& kexes = supported_kex_methods();
    const auto pairs = cipher_mac_pairs(std::size_t(std::find(kexes.begin(), kexes.end(), kex) - kexes.begin()));
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

TEST_CASE("matrix: across the rows, every UMAC meets every CTR cipher and every key exchange")
{
    std::set<std::string> seen;
    std::set<std::string> macs_per_row;
    for (std::size_t row = 0; row < supported_kex_methods().size(); ++row) {
        std::set<std::string> umacs;
        for (const auto& [cipher, mac] : cipher_mac_pairs(row)) {
            if (mac.starts_with("umac-")) {
                seen.insert(cipher + " " + mac);
                umacs.insert(mac);
            }
        }
        CHECK(umacs.size() == 4);
    }
    CHECK(seen.size() == 3 * 4); // aes128/192/256-ctr x four UMAC names
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

TEST_CASE("matrix: each UMAC over many packets, with rekeys")
{
    // The per-kex rows above carry 2 MiB per combination; UMAC keeps per-key
    // state (its derived subkeys, the cached pad block of two sequence
    // numbers), so each name also moves more data across several key epochs.
    const auto size = static_cast<std::uint64_t>(16.0 * 1024 * 1024 * test_scale());
    std::uint64_t seed = 600;
    for (const char* mac : {"umac-64-etm@openssh.com", "umac-128-etm@openssh.com", "umac-64@openssh.com",
                            "umac-128@openssh.com"}) {
        combo c{"curve25519-sha256", "ssh-ed25519", seed % 2 ? "aes256-ctr" : "aes128-ctr", mac};
        run_combo(c, size, 4, seed++);
    }
}
