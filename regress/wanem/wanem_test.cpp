// Unit tests of the emulator's model: timing, queue, storage and TSO cutting
// (no devices, no root). Run by ctest as wanem_unit.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "gso.hpp"
#include "link_direction.hpp"
#include "link_schedule.hpp"
#include "options.hpp"
#include "packet_ring.hpp"

#include <cstring>
#include <vector>

using namespace wanem;

namespace {

constexpr std::int64_t ms = 1'000'000;
constexpr std::int64_t us = 1'000;

link_params gigabit(std::int64_t delay_ns)
{
    link_params p;
    p.rate_bps = 1'000'000'000;
    p.delay_ns = delay_ns;
    p.queue_bytes = 15'000; // ten 1500-byte packets
    return p;
}

} // namespace

TEST_CASE("a lone packet arrives after serialisation plus delay")
{
    link_schedule s(gigabit(25 * ms), 1);
    auto a = s.admit(1500, 0);
    REQUIRE(a.outcome == verdict::pass);
    CHECK(a.deliver_ns == 12 * us + 25 * ms); // 1500 B at 1 Gbit/s = 12 us
}

TEST_CASE("back-to-back packets are spaced by the serialisation time")
{
    link_schedule s(gigabit(0), 1);
    std::int64_t last = 0;
    for (int i = 0; i < 5; ++i) {
        auto a = s.admit(1500, 0);
        REQUIRE(a.outcome == verdict::pass);
        CHECK(a.deliver_ns - last == 12 * us);
        last = a.deliver_ns;
    }
    CHECK(s.backlog_bytes(0) == 7500);
    // Half-way through the third packet: 2.5 packets left, 3 not finished.
    CHECK(s.backlog_bytes(30 * us) == 3750);
    CHECK(s.backlog_packets(30 * us) == 3);
}

TEST_CASE("the rate does not drift over many odd-sized packets")
{
    link_params p = gigabit(0);
    p.rate_bps = 3'000'000; // 3 Mbit/s: 8/3 us per byte, never an integer
    p.queue_bytes = 0;
    link_schedule s(p, 1);
    std::int64_t last = 0;
    for (int i = 0; i < 3000; ++i)
        last = s.admit(1001, 0).deliver_ns;
    // 3000 * 1001 * 8 bits / 3 Mbit/s = 8.008 s exactly
    CHECK(last == 8'008'000'000);
}

TEST_CASE("a full drop-tail queue drops, then accepts again once drained")
{
    link_schedule s(gigabit(0), 1);
    int passed = 0;
    for (int i = 0; i < 20; ++i)
        passed += s.admit(1500, 0).outcome == verdict::pass;
    CHECK(passed == 10);
    CHECK(s.admit(1500, 0).outcome == verdict::queue_full);
    CHECK(s.admit(1500, 12 * us).outcome == verdict::pass);
    CHECK(s.high_water_bytes() == 15'000);
}

TEST_CASE("a packet limit applies on its own")
{
    link_params p = gigabit(0);
    p.queue_bytes = 0;
    p.queue_packets = 3;
    link_schedule s(p, 1);
    for (int i = 0; i < 3; ++i)
        CHECK(s.admit(64, 0).outcome == verdict::pass);
    CHECK(s.admit(64, 0).outcome == verdict::queue_full);
}

TEST_CASE("a link that is down drops every packet offered, then passes again")
{
    link_schedule s(gigabit(25 * ms), 1);
    auto before = s.admit(1500, 0);
    REQUIRE(before.outcome == verdict::pass);
    s.set_down(true);
    for (int i = 0; i < 100; ++i)
        CHECK(s.admit(1500, 1 * ms + i * us).outcome == verdict::outage);
    // What was on the wire before the cut still arrives; nothing new queued.
    CHECK(s.backlog_bytes(0) == 1500);
    s.set_down(false);
    auto after = s.admit(1500, 10 * ms);
    REQUIRE(after.outcome == verdict::pass);
    CHECK(after.deliver_ns == 10 * ms + 12 * us + 25 * ms);
}

TEST_CASE("random loss is near the configured rate and reproducible")
{
    link_params p;
    p.loss = 0.01;
    auto count = [&](std::uint64_t seed) {
        link_schedule s(p, seed);
        int lost = 0;
        for (int i = 0; i < 200'000; ++i)
            lost += s.admit(100, i).outcome == verdict::lost;
        return lost;
    };
    const int lost = count(7);
    CHECK(lost > 1800);
    CHECK(lost < 2200);
    CHECK(count(7) == lost);
}

TEST_CASE("jitter varies the delay but never reorders")
{
    link_params p;
    p.delay_ns = 10 * ms;
    p.jitter_ns = 5 * ms;
    SUBCASE("sparse packets see the whole range")
    {
        link_schedule s(p, 3);
        std::int64_t lo = INT64_MAX, hi = 0;
        for (int i = 0; i < 2'000; ++i) {
            const std::int64_t now = i * 20 * ms;
            auto a = s.admit(100, now);
            lo = std::min(lo, a.deliver_ns - now);
            hi = std::max(hi, a.deliver_ns - now);
        }
        CHECK(lo >= 5 * ms);
        CHECK(lo < 6 * ms);
        CHECK(hi > 14 * ms);
        CHECK(hi <= 15 * ms);
    }
    SUBCASE("dense packets keep their order")
    {
        // Closer than the jitter, a packet waits for the one before it, so
        // the delay is biased upwards (documented in README.md).
        link_schedule s(p, 3);
        std::int64_t prev = 0;
        for (int i = 0; i < 10'000; ++i) {
            auto a = s.admit(100, i * 100 * us);
            CHECK(a.deliver_ns >= prev);
            prev = a.deliver_ns;
        }
    }
}

TEST_CASE("the packet ring keeps FIFO order across wrap-around")
{
    packet_ring r(1000);
    std::vector<std::uint32_t> expect;
    std::uint32_t next = 0;
    for (int round = 0; round < 200; ++round) {
        while (true) {
            auto room = r.reserve(300);
            if (room.empty())
                break;
            std::memcpy(room.data(), &next, sizeof next);
            const std::size_t len = 17 + (next * 37) % 250;
            r.commit(len, 1, next);
            expect.push_back(next++);
        }
        CHECK(r.packets() >= 2);
        for (int k = 0; k < 2 && !r.empty(); ++k) {
            std::uint32_t got;
            std::memcpy(&got, r.bytes(r.front()).data(), sizeof got);
            CHECK(got == expect.front());
            CHECK(r.front().deliver_ns == expect.front());
            expect.erase(expect.begin());
            r.pop();
        }
    }
}

namespace {

// A TSO frame as the TUN device would hand it over: vnet header, IPv4, TCP.
std::vector<std::byte> tso_frame(std::uint32_t payload, std::uint16_t mss)
{
    std::vector<std::byte> f(vnet_hdr_size + 20 + 20 + payload);
    auto* vh = f.data();
    vh[0] = std::byte{vnet_flag_needs_csum};
    vh[1] = std::byte{vnet_gso_tcpv4};
    const std::uint16_t hdr_len = 40, csum_start = 20, csum_off = 16;
    std::memcpy(vh + 2, &hdr_len, 2);
    std::memcpy(vh + 4, &mss, 2);
    std::memcpy(vh + 6, &csum_start, 2);
    std::memcpy(vh + 8, &csum_off, 2);
    auto* ip = vh + vnet_hdr_size;
    ip[0] = std::byte{0x45};
    ip[8] = std::byte{64};
    ip[9] = std::byte{6};
    const unsigned char addrs[8] = {198, 18, 0, 1, 198, 18, 0, 2};
    std::memcpy(ip + 12, addrs, 8);
    ip[4] = std::byte{0x12};
    ip[5] = std::byte{0x34};
    auto* tcp = ip + 20;
    tcp[4] = std::byte{0xff}; // seq 0xfffffff0: the cut must wrap it
    tcp[5] = std::byte{0xff};
    tcp[6] = std::byte{0xff};
    tcp[7] = std::byte{0xf0};
    tcp[12] = std::byte{0x50};
    tcp[13] = std::byte{0x80 | 0x10 | 0x08 | 0x01}; // CWR ACK PSH FIN
    for (std::uint32_t i = 0; i < payload; ++i)
        tcp[20 + i] = std::byte(i * 7);
    return f;
}

std::uint32_t be32(const std::byte* p)
{
    return std::to_integer<std::uint32_t>(p[0]) << 24 | std::to_integer<std::uint32_t>(p[1]) << 16 |
           std::to_integer<std::uint32_t>(p[2]) << 8 | std::to_integer<std::uint32_t>(p[3]);
}

} // namespace

TEST_CASE("a TSO frame counts as its wire packets")
{
    auto f = tso_frame(4000, 1448);
    auto shape = inspect_frame(f, true);
    CHECK(shape.segments == 3);
    CHECK(shape.splittable);
    CHECK(shape.header_bytes == 40);
    CHECK(segment_ip_bytes(shape, 0) == 1488);
    CHECK(segment_ip_bytes(shape, 2) == 40 + 4000 - 2 * 1448);
    CHECK(inspect_frame(f, false).segments == 1);
}

TEST_CASE("cutting a TSO frame yields valid consecutive segments")
{
    auto f = tso_frame(4000, 1448);
    // Full-checksum variant: the receiver would verify it.
    f[0] = std::byte{0};
    auto shape = inspect_frame(f, true);
    std::vector<std::byte> out(2000);
    std::uint32_t covered = 0;
    for (std::uint32_t i = 0; i < shape.segments; ++i) {
        const std::size_t n = build_segment(f, shape, i, out);
        const std::byte* ip = out.data() + vnet_hdr_size;
        const std::byte* tcp = ip + 20;
        const std::uint32_t payload = static_cast<std::uint32_t>(n - vnet_hdr_size - 40);
        CHECK(std::to_integer<int>(out[1]) == vnet_gso_none);
        CHECK((std::to_integer<unsigned>(ip[2]) << 8 | std::to_integer<unsigned>(ip[3])) == 40 + payload);
        CHECK(fold_sum(ones_sum({ip, 20})) == 0xffff);            // IPv4 header checksum
        std::uint64_t pseudo = ones_sum({ip + 12, 8}) + 6 + 20 + payload;
        CHECK(fold_sum(ones_sum({tcp, 20 + payload}, pseudo)) == 0xffff); // TCP checksum
        CHECK(be32(tcp + 4) == 0xfffffff0u + covered);
        const auto flags = std::to_integer<unsigned>(tcp[13]);
        CHECK(((flags & 0x80) != 0) == (i == 0));
        CHECK(((flags & 0x09) != 0) == (i + 1 == shape.segments));
        CHECK(std::memcmp(tcp + 20, f.data() + vnet_hdr_size + 40 + covered, payload) == 0);
        covered += payload;
    }
    CHECK(covered == 4000);
}

TEST_CASE("a partly lost TSO frame delivers exactly the surviving segments")
{
    link_params p;
    p.loss = 0.3;
    link_direction d("t", p, true, 11, 1 << 20);
    auto f = tso_frame(20 * 1448, 1448);
    auto buf = d.read_buffer();
    std::memcpy(buf.data(), f.data(), f.size());
    d.accept(f.size(), 0);
    std::uint32_t segs = 0;
    d.release(0, 1, [&](std::span<const std::byte> frame) {
        segs += inspect_frame(frame, true).segments;
        return true;
    });
    CHECK(segs == 20 - d.stats().lost);
    CHECK(d.stats().lost > 0);
    CHECK(d.stats().tso_splits == 1);
}

TEST_CASE("options: per-direction values override shared ones, queue defaults to the BDP")
{
    auto o = parse_options({"--dev-client", "a", "--dev-server", "b", "--rate-mbit-s2c", "20", "--rate-mbit", "100",
                            "--delay-ms", "25", "--loss", "1"});
    finalize(o);
    CHECK(o.c2s.rate_bps == 100'000'000);
    CHECK(o.s2c.rate_bps == 20'000'000);
    CHECK(o.c2s.delay_ns == 25 * ms);
    CHECK(o.s2c.loss == doctest::Approx(0.01));
    CHECK(o.c2s.queue_bytes == 625'000); // 100 Mbit/s x 50 ms
    CHECK(o.s2c.queue_bytes == 125'000);

    auto lan = parse_options({"--dev-client", "a", "--dev-server", "b", "--rate-mbit", "1000"});
    finalize(lan);
    CHECK(lan.c2s.queue_bytes == 1'250'000); // at least 10 ms of the rate

    CHECK_THROWS(parse_options({"--dev-client", "a", "--dev-server", "b", "--loss", "100"}));
    CHECK_THROWS(parse_options({"--dev-client", "a", "--dev-server", "b", "--bogus", "1"}));
}
