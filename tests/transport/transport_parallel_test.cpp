// Two transport cores with crypto engines (issue 13), wired together in
// memory: bulk data both ways across rekeys arrives intact, in packets of
// the same sizes as without engines. (The wire bytes themselves differ run
// to run: the key exchange's ephemeral keys come from OpenSSL's generator;
// packet_codec_parallel_test compares sealed bytes at the codec.)
#include "common/transport/transport.hpp"

#include "common/crypto/hash.hpp"
#include "tests/transport/data_exchange.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

struct wire_run {
    exchange_result data;
    transport_stats client, server;
    crypto_engine_stats client_seal, server_open;
};

wire_run run_pair(const std::string& cipher, const std::string& mac, unsigned threads)
{
    transport_config cc, sc;
    cc.ciphers = sc.ciphers = cipher;
    if (!mac.empty())
        cc.macs = sc.macs = mac;
    transport_pair p(cc, sc, 42);
    crypto_engine client_engine(threads, true), server_engine(threads, true);
    if (threads > 0) {
        // Lent before authentication: it must take effect only after it.
        p.client->set_crypto_engine(&client_engine);
        p.server->set_crypto_engine(&server_engine);
    }
    p.run();
    REQUIRE(p.client->established());
    p.client->user_authenticated();
    p.server->user_authenticated();
    if (threads > 0) {
        CHECK(client_engine.stats(crypto_direction::seal).pooled_batches == 0);
        CHECK(client_engine.started_helpers() == 0);
    }
    wire_run out;
    out.data = exchange_data(p, 3 * 1024 * 1024, 3, 7, 40000);
    REQUIRE_FALSE(p.client->closed());
    out.client = p.client->stats();
    out.server = p.server->stats();
    out.client_seal = client_engine.stats(crypto_direction::seal);
    out.server_open = server_engine.stats(crypto_direction::open);
    return out;
}

} // namespace

TEST_CASE("transport with crypto engines: same wire bytes as serial, data intact across rekeys")
{
    const std::pair<std::string, std::string> algos[] = {
        {"chacha20-poly1305@openssh.com", ""},
        {"aes128-gcm@openssh.com", ""},
        {"aes256-ctr", "hmac-sha2-256-etm@openssh.com"},
        {"aes128-ctr", "hmac-sha1"},
    };
    for (const auto& algo : algos) {
        // (Not a structured binding: clang 14 cannot capture one in INFO's lambda.)
        const auto& [cipher, mac] = algo;
        INFO(algo.first << " " << algo.second);
        const wire_run serial = run_pair(cipher, mac, 0);
        CHECK(serial.data.recv_c2s == serial.data.sent_c2s);
        CHECK(serial.data.recv_s2c == serial.data.sent_s2c);
        for (unsigned threads : {1u, 2u, 4u}) {
            INFO("threads " << threads);
            const wire_run par = run_pair(cipher, mac, threads);
            CHECK(par.data.recv_c2s == par.data.sent_c2s);
            CHECK(par.data.recv_s2c == par.data.sent_s2c);
            CHECK(par.data.sent_c2s == serial.data.sent_c2s);
            CHECK(par.client.bytes_out == serial.client.bytes_out);
            CHECK(par.client.packets_out == serial.client.packets_out);
            CHECK(par.server.bytes_out == serial.server.bytes_out);
            CHECK(par.server.packets_in == serial.server.packets_in);
            CHECK(par.client_seal.pooled_batches + par.client_seal.serial_batches > 0);
            CHECK(par.server_open.pooled_batches + par.server_open.serial_batches > 0);
            if (threads > 1) {
                CHECK(par.client_seal.pooled_batches > 0);
                CHECK(par.server_open.pooled_batches > 0);
            }
        }
    }
}

TEST_CASE("transport with crypto engines: a corrupted packet mid-batch ends the connection as serially")
{
    for (unsigned threads : {0u, 2u, 3u}) {
        INFO("threads " << threads);
        transport_config cc, sc;
        cc.ciphers = sc.ciphers = "aes128-ctr";
        cc.macs = sc.macs = "hmac-sha2-256-etm@openssh.com";
        transport_pair p(cc, sc, 9);
        crypto_engine ce(threads, true), se(threads, true);
        if (threads > 0) {
            p.client->set_crypto_engine(&ce);
            p.server->set_crypto_engine(&se);
        }
        p.run();
        p.client->user_authenticated();
        p.server->user_authenticated();
        // Ten data packets in one delivery; the seventh is damaged on the way.
        std::vector<std::size_t> sizes;
        for (int i = 0; i < 10; ++i) {
            bytes m(20000, static_cast<std::uint8_t>(i));
            m[0] = 94;
            REQUIRE(p.client->send(m).has_value());
        }
        int piece = 0;
        p.tamper = [&](bool to_server, bytes& b) {
            if (!to_server || piece++ != 0)
                return;
            // Each packet: 4 + 20016 (+ padding to 16) + 32 bytes of MAC.
            const std::size_t per_packet = b.size() / 10;
            b[6 * per_packet + per_packet / 2] ^= 1;
        };
        p.run();
        CHECK(p.server_log.payloads.size() == 6);
        CHECK(p.server_log.disconnected);
        CHECK(p.server_log.error == errc::mac_mismatch);
        CHECK(p.server_log.disconnect_text == "Corrupted MAC on input.");
        CHECK(p.client_log.disconnected);
        CHECK(p.client_log.reason == disconnect_reason::mac_error);
    }
}
