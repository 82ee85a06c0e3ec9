// Bulk payload exchange over a transport_pair with interleaved rekeys: both
// directions carry pseudo-random chunks; receivers hash what arrives and the
// hashes must equal those of what was sent.
#pragma once

#include "common/crypto/hash.hpp"
#include "tests/transport/harness.hpp"

#include <cstring>

namespace longhaul::test {

struct exchange_result {
    bytes sent_c2s, recv_c2s, sent_s2c, recv_s2c; // SHA-256 digests
    std::uint64_t bytes_c2s = 0, bytes_s2c = 0, recv_bytes_c2s = 0, recv_bytes_s2c = 0;
};

// Sends `total` bytes each way in chunks of 1..max_chunk bytes, asking for
// a rekey `rekeys` times (alternating sides) along the way.
inline exchange_result exchange_data(transport_pair& p, std::uint64_t total, int rekeys, std::uint64_t seed,
                                     std::size_t max_chunk = 32768)
{
    constexpr std::uint8_t data_msg = 94; // any upper-layer number: the transport does not look inside
    hasher sent_c2s(hash_alg::sha256), sent_s2c(hash_alg::sha256);
    hasher recv_c2s(hash_alg::sha256), recv_s2c(hash_alg::sha256);
    exchange_result res;
    p.keep_payloads = false;
    p.on_payload = [&](bool at_server, const transport_event& ev) {
        REQUIRE(ev.payload[0] == data_msg);
        auto body = ev.payload.subspan(1);
        (at_server ? recv_c2s : recv_s2c).update(body);
        (at_server ? res.recv_bytes_c2s : res.recv_bytes_s2c) += body.size();
    };
    std::mt19937_64 gen(seed);
    std::uint64_t next_rekey_at = rekeys > 0 ? total / std::uint64_t(rekeys + 1) : total + 1;
    int rekeys_done = 0;
    std::uint64_t since_run = 0;
    auto send_chunk = [&](transport& t, hasher& h, std::uint64_t& counter, std::uint64_t limit) {
        if (counter >= limit)
            return;
        std::size_t n = 1 + static_cast<std::size_t>(gen() % max_chunk);
        n = static_cast<std::size_t>(std::min<std::uint64_t>(n, limit - counter));
        auto dst = t.prepare_payload(n + 1);
        dst[0] = data_msg;
        for (std::size_t i = 1; i <= n; i += 8) {
            std::uint64_t r = gen();
            std::memcpy(dst.data() + i, &r, std::min<std::size_t>(8, n + 1 - i));
        }
        h.update(dst.subspan(1, n));
        REQUIRE(t.commit_payload(n + 1).has_value());
        counter += n;
        since_run += n;
    };
    while (res.bytes_c2s < total || res.bytes_s2c < total) {
        send_chunk(*p.client, sent_c2s, res.bytes_c2s, total);
        send_chunk(*p.server, sent_s2c, res.bytes_s2c, total);
        if (rekeys_done < rekeys && res.bytes_c2s >= next_rekey_at * std::uint64_t(rekeys_done + 1)) {
            // One re-exchange at a time: let a running one finish (data stays in flight across it).
            if (p.client->kex_in_progress() || p.server->kex_in_progress())
                p.run();
            (rekeys_done % 2 == 0 ? p.client : p.server)->request_rekey();
            ++rekeys_done;
        }
        if (since_run >= 512 * 1024) {
            p.run();
            since_run = 0;
        }
        REQUIRE_FALSE(p.client->closed());
        REQUIRE_FALSE(p.server->closed());
    }
    p.run();
    res.sent_c2s = sent_c2s.finish();
    res.sent_s2c = sent_s2c.finish();
    res.recv_c2s = recv_c2s.finish();
    res.recv_s2c = recv_s2c.finish();
    return res;
}

} // namespace longhaul::test
