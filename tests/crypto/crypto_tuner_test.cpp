#include "common/crypto/crypto_tuner.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace longhaul;

namespace {

// Feeds `batches` decisions with synthetic costs (ns per byte each way);
// returns how many went to the pool.
int drive(crypto_tuner& t, int batches, double serial_ns_per_byte, double pool_ns_per_byte)
{
    constexpr std::size_t bytes = 256 * 1024;
    int pooled = 0;
    for (int i = 0; i < batches; ++i) {
        const bool p = t.choose_pool();
        pooled += p;
        t.record(p, bytes, static_cast<std::uint64_t>((p ? pool_ns_per_byte : serial_ns_per_byte) * bytes));
    }
    return pooled;
}

} // namespace

TEST_CASE("crypto_tuner: forced always pools, from the first byte")
{
    crypto_tuner t(true);
    CHECK(t.min_batch_bytes() == 0);
    CHECK(drive(t, 100, 0.1, 10.0) == 100);
}

TEST_CASE("crypto_tuner: automatic settles on the pool when it halves the cost, probing serial rarely")
{
    crypto_tuner t;
    CHECK(t.min_batch_bytes() == crypto_tuner::auto_min_batch_bytes);
    drive(t, 8, 0.66, 0.36); // warm-up: both ways measured
    CHECK(t.prefers_pool());
    const int pooled = drive(t, 1000, 0.66, 0.36);
    CHECK(pooled >= 990); // probes back off to one in 256
    CHECK(pooled < 1000); // but serial is still re-measured now and then
}

TEST_CASE("crypto_tuner: automatic stays serial when the pool is slower (a busy machine)")
{
    crypto_tuner t;
    drive(t, 8, 0.66, 1.2);
    CHECK_FALSE(t.prefers_pool());
    const int pooled = drive(t, 1000, 0.66, 1.2);
    CHECK(pooled <= 10);
    CHECK(pooled >= 1);
}

TEST_CASE("crypto_tuner: a gain inside the margin is not worth the pool")
{
    crypto_tuner t;
    drive(t, 50, 0.66, 0.62);
    CHECK_FALSE(t.prefers_pool());
}

TEST_CASE("crypto_tuner: follows a change of load both ways")
{
    crypto_tuner t;
    drive(t, 300, 0.66, 0.36);
    CHECK(t.prefers_pool());
    drive(t, 3000, 0.66, 1.5); // other work takes the second core
    CHECK_FALSE(t.prefers_pool());
    drive(t, 3000, 0.66, 0.36); // and leaves again
    CHECK(t.prefers_pool());
}

TEST_CASE("crypto_tuner: batches while warming up, while the pool pays and when forced")
{
    crypto_tuner forced(true);
    CHECK(forced.batching());
    crypto_tuner t;
    CHECK(t.batching()); // warming up
    drive(t, 8, 0.66, 0.36);
    REQUIRE(t.prefers_pool());
    for (int i = 0; i < 10000; ++i)
        REQUIRE(t.batching());
}

TEST_CASE("crypto_tuner: while serial is preferred, packets go one by one, with a probe batch now and then")
{
    constexpr std::size_t bytes = 256 * 1024;
    crypto_tuner t;
    drive(t, 8, 0.66, 1.2); // the pool is slower
    REQUIRE_FALSE(t.prefers_pool());
    // Count the packets between probes: the gaps grow as probes confirm serial.
    std::vector<int> gaps;
    int since = 0, probes = 0;
    for (int packet = 0; packet < 200000 && probes < 8; ++packet) {
        ++since;
        if (!t.batching())
            continue;
        // A batch: the codec gathers it and asks the tuner.
        const bool p = t.choose_pool();
        REQUIRE(p); // only a probe of the pool brings batching back
        t.record(p, bytes, static_cast<std::uint64_t>(1.2 * bytes));
        CHECK_FALSE(t.prefers_pool());
        gaps.push_back(since);
        since = 0;
        ++probes;
    }
    REQUIRE(probes == 8);
    CHECK(gaps.front() >= 8 * 8);
    CHECK(gaps.back() == 256 * 8); // settled: one probe in 2048 packets
    for (std::size_t i = 1; i < gaps.size(); ++i)
        CHECK(gaps[i] >= gaps[i - 1]);

    // Probes that find the pool cheaper (the second core is free again)
    // stop the interval growing, and a few bring batching back for good.
    int cheap_probes = 0, packets = 0;
    while (!t.prefers_pool() && cheap_probes < 10) {
        ++packets;
        if (!t.batching())
            continue;
        REQUIRE(t.choose_pool());
        t.record(true, bytes, static_cast<std::uint64_t>(0.3 * bytes));
        ++cheap_probes;
    }
    CHECK(t.prefers_pool());
    CHECK(cheap_probes <= 4);
    CHECK(packets <= 4 * 256 * 8);
    CHECK(t.batching());
}
