// The packet codec with a crypto engine (issue 13) against the codec without
// one: for every cipher and MAC, with 1 to 8 threads, across rekeys, the
// bytes sent are identical, every packet is received intact however the
// input is split, and a corrupted packet ends the stream exactly where and
// how it does serially.
#include "common/transport/packet_codec.hpp"

#include "tests/transport/harness.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace longhaul;
using namespace longhaul::test;

namespace {

struct algo {
    std::string cipher, mac;
    std::string name() const { return mac.empty() ? cipher : cipher + " " + mac; }
};

bool reduced_scale()
{
    const char* scale = std::getenv("LONGHAUL_TEST_SCALE");
    return scale && std::atof(scale) < 1.0;
}

// Every cipher with every MAC; under LONGHAUL_TEST_SCALE < 1 (the sanitizer
// runs) every cipher and every MAC at least once, as the engine's batching
// does not depend on which MAC a cipher is paired with.
std::vector<algo> all_algorithms()
{
    std::vector<algo> out;
    const auto macs = supported_macs();
    std::size_t next_mac = 0;
    std::string plain; // a cipher that takes a MAC
    for (auto c : supported_ciphers()) {
        if (find_cipher(c)->aead) {
            out.push_back({std::string(c), ""});
            continue;
        }
        plain = c;
        if (reduced_scale()) {
            out.push_back({std::string(c), std::string(macs[next_mac++ % macs.size()])});
            continue;
        }
        for (auto m : macs)
            out.push_back({std::string(c), std::string(m)});
    }
    // The MACs the rotation above did not reach.
    for (std::size_t i = next_mac; reduced_scale() && i < macs.size(); ++i)
        out.push_back({plain, std::string(macs[i])});
    return out;
}

std::unique_ptr<packet_cipher> make_cipher(const algo& a, int epoch)
{
    const cipher_info* ci = find_cipher(a.cipher);
    const mac_info* mi = a.mac.empty() ? nullptr : find_mac(a.mac);
    direction_keys k;
    k.iv = secret_bytes(ci->iv_size);
    k.enc_key = secret_bytes(ci->key_size);
    k.mac_key = secret_bytes(mi ? mi->key_size : 0);
    for (auto* s : {&k.iv, &k.enc_key, &k.mac_key})
        for (std::size_t i = 0; i < s->size(); ++i)
            s->data()[i] = static_cast<std::uint8_t>(epoch * 61 + i * 7 + s->size());
    auto r = make_packet_cipher(a.cipher, a.mac, k, cipher_direction::seal);
    REQUIRE(r.has_value());
    return std::move(*r);
}

// What one test stream carries: payloads of mixed sizes (keystrokes to
// full packets), new keys after some of them, and the points where the
// sender's output is read.
struct script {
    std::vector<bytes> payloads;
    std::vector<std::size_t> rekey_before; // packet indices that start a new key epoch
    std::uint64_t seed = 0;
};

script make_script(std::uint64_t seed, std::size_t packets)
{
    std::mt19937_64 gen(seed);
    script s;
    s.seed = seed;
    for (std::size_t i = 0; i < packets; ++i) {
        const std::size_t size = gen() % 3 == 0 ? 1 + gen() % 64 : 1 + gen() % 20000;
        bytes p(size);
        for (auto& b : p)
            b = static_cast<std::uint8_t>(gen());
        p[0] = 94;
        s.payloads.push_back(std::move(p));
    }
    // Two key changes back to back mid-stream; packets are opened ahead
    // (below) only where no key change is within a batch's reach.
    s.rekey_before = {packets / 2, packets / 2 + 1};
    return s;
}

bool starts_epoch(const script& s, std::size_t i)
{
    return std::find(s.rekey_before.begin(), s.rekey_before.end(), i) != s.rekey_before.end();
}

// Sends the script; the output is read (and partly consumed) at points the
// script's seed decides, as a driver whose socket takes only some of it.
bytes send_all(const algo& a, const script& s, crypto_engine* engine)
{
    seeded_random rng(s.seed);
    packet_sender sender(rng);
    sender.set_cipher(make_cipher(a, 0));
    sender.set_crypto_engine(engine);
    std::mt19937_64 gen(s.seed + 1);
    bytes wire;
    int epoch = 0;
    auto take = [&](bool all) {
        auto& out = sender.output();
        // None, a third, two thirds or all of it.
        const std::size_t m = all ? out.size() : out.size() * (gen() % 4) / 3;
        wire.insert(wire.end(), out.data().begin(), out.data().begin() + static_cast<std::ptrdiff_t>(m));
        sender.consume_output(m);
    };
    for (std::size_t i = 0; i < s.payloads.size(); ++i) {
        if (starts_epoch(s, i))
            sender.set_cipher(make_cipher(a, ++epoch)); // packets queued before are sealed with the old keys
        const bytes& p = s.payloads[i];
        if (i % 2 == 0) {
            sender.send(p);
        } else {
            auto dst = sender.prepare_payload(p.size());
            std::copy(p.begin(), p.end(), dst.begin());
            sender.commit_payload(p.size());
        }
        if (gen() % 5 == 0)
            take(false);
    }
    take(true);
    REQUIRE(sender.output().empty());
    return wire;
}

struct received {
    std::vector<bytes> payloads;
    errc error = errc::ok;
    std::uint32_t sequence = 0;
    bool operator==(const received&) const = default;
};

// Receives `wire` fed in pieces of `chunk` bytes (0: random sizes). Packets
// are opened ahead only where no new keys are near, as the transport allows
// it only while no key exchange runs.
received receive_all(const algo& a, const script& s, const bytes& wire, crypto_engine* engine, std::size_t chunk)
{
    packet_receiver receiver;
    receiver.set_cipher(make_cipher(a, 0));
    receiver.set_crypto_engine(engine);
    std::mt19937_64 gen(s.seed + 2);
    byte_buffer in;
    received out;
    int epoch = 0;
    std::size_t fed = 0;
    for (;;) {
        const std::size_t i = out.payloads.size();
        bool near_rekey = false;
        for (std::size_t r : s.rekey_before)
            near_rekey |= i < r && r - i <= max_batch_packets;
        receiver.set_lookahead(!near_rekey);
        auto r = receiver.next(in);
        if (!r) {
            out.error = r.error();
            break;
        }
        if (*r) {
            out.payloads.push_back(to_bytes((*r)->payload));
            if (starts_epoch(s, out.payloads.size()))
                receiver.set_cipher(make_cipher(a, ++epoch));
            continue;
        }
        if (fed == wire.size())
            break;
        receiver.release(in);
        std::size_t n = chunk != 0 ? chunk : 1 + gen() % 100000;
        n = std::min(n, wire.size() - fed);
        REQUIRE(in.append(byte_span(wire).subspan(fed, n)));
        fed += n;
    }
    out.sequence = receiver.sequence();
    return out;
}

// Every thread count from 1 to 8; under LONGHAUL_TEST_SCALE < 1 (the
// sanitizer runs, where this case took two thirds of the ThreadSanitizer
// stage) one, two, an odd three and eight, which still meet every batch
// split the pool makes.
std::vector<unsigned> thread_counts()
{
    if (reduced_scale())
        return {1, 2, 3, 8};
    return {1, 2, 3, 4, 5, 6, 7, 8};
}

} // namespace

TEST_CASE("parallel codec: sealed bytes identical to serial, every packet received, 1-8 threads, across rekeys")
{
    std::uint64_t seed = 100;
    for (const auto& a : all_algorithms()) {
        INFO(a.name());
        const script s = make_script(++seed, 200);
        const bytes serial = send_all(a, s, nullptr);
        const received expected = receive_all(a, s, serial, nullptr, 0);
        REQUIRE(expected.error == errc::ok);
        REQUIRE(expected.payloads == s.payloads);
        for (unsigned threads : thread_counts()) {
            INFO("threads " << threads);
            crypto_engine engine(threads, true);
            CHECK(send_all(a, s, &engine) == serial);
            for (std::size_t chunk : {std::size_t(0), std::size_t(4096), serial.size()}) {
                INFO("chunk " << chunk);
                CHECK(receive_all(a, s, serial, &engine, chunk) == expected);
            }
            // The batch paths ran (on the pool, given more than one thread).
            const auto& seal = engine.stats(crypto_direction::seal);
            const auto& open = engine.stats(crypto_direction::open);
            CHECK(seal.pooled_batches + seal.serial_batches > 0);
            CHECK(open.pooled_batches + open.serial_batches > 0);
            if (threads > 1) {
                CHECK(seal.pooled_packets > 0);
                CHECK(open.pooled_packets > 0);
            }
        }
    }
}

TEST_CASE("parallel codec: a corrupted packet mid-stream ends it exactly as serially")
{
    std::uint64_t seed = 500;
    for (const auto& a : all_algorithms()) {
        INFO(a.name());
        const script s = make_script(++seed, 90);
        const bytes clean = send_all(a, s, nullptr);
        // Where packet 75 starts and ends on the wire, found by receiving
        // serially; it sits in the middle of the batch opened after the rekeys.
        constexpr std::size_t victim = 75;
        packet_receiver probe;
        probe.set_cipher(make_cipher(a, 0));
        byte_buffer in;
        REQUIRE(in.append(clean));
        std::size_t offset = 0, size = 0;
        int epoch = 0;
        for (std::size_t i = 0; i <= victim; ++i) {
            offset += size;
            auto r = probe.next(in);
            REQUIRE(r.has_value());
            REQUIRE(r->has_value());
            probe.release(in);
            size = clean.size() - in.size() - offset;
            if (starts_epoch(s, i + 1))
                probe.set_cipher(make_cipher(a, ++epoch));
        }
        // The victim is wire[offset, offset + size): corrupt its length field,
        // its middle and its last byte (the MAC or tag), one at a time.
        for (std::size_t at : {offset + 1, offset + size / 2, offset + size - 1}) {
            INFO("corrupt byte " << at - offset << " of " << size);
            bytes bad = clean;
            bad[at] ^= 0x40;
            const received serial = receive_all(a, s, bad, nullptr, 0);
            CHECK(serial.error != errc::ok);
            CHECK(serial.payloads.size() == victim);
            for (unsigned threads : {1u, 2u, 3u, 8u}) {
                INFO("threads " << threads);
                crypto_engine engine(threads, true);
                for (std::size_t chunk : {std::size_t(0), bad.size()})
                    CHECK(receive_all(a, s, bad, &engine, chunk) == serial);
            }
        }
    }
}
