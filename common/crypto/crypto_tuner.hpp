// Whether one direction's packets should go to the crypto pool (issue 13).
//
// Parallel crypto only pays when there is a batch worth splitting and a
// core free to take half of it. The tuner answers both questions from what
// it sees, with no system calls:
//
// - a batch under min_batch_bytes() (interactive traffic, small packets,
//   a lone packet) is always done serially by the caller, as without a pool;
// - for larger batches it measures what each way costs per byte (the caller
//   passes the wall time of each batch in, so the tuner itself reads no
//   clock) and uses the pool only while it is clearly cheaper. A busy
//   machine, where a helper thread waits for a CPU, makes the pool slower
//   and the tuner falls back to the caller alone.
// - the other way is re-measured now and then (a probe), less often the
//   more often a probe confirms the choice, so that a change in load is
//   noticed while a settled choice costs little: after the first probes a
//   probe comes once in 256 batches.
//
// - while it prefers the caller alone, the codec does not form batches at
//   all (batching() is false): each packet is sealed as it is queued and
//   opened as it is reached, while it is still in the cache, exactly as
//   without an engine. Sealing a batch later, or opening packets ahead and
//   delivering them afterwards, costs a pass over data that has left the
//   cache: 3-4% of throughput with aes256-ctr + hmac-sha2-256-etm on
//   loopback (docs/PERFORMANCE.md). Batches come back for one probe of the
//   pool now and then, at the probe interval counted in packets.
//
// In forced mode (CryptoThreads N) every batch of two packets or more uses
// the pool.
#pragma once

#include <cstddef>
#include <cstdint>

namespace longhaul {

class crypto_tuner {
public:
    // Below this, a batch is not worth waking a helper for (~20-40 us of
    // crypto on one core of the development machine, against a few us to
    // wake a thread).
    static constexpr std::size_t auto_min_batch_bytes = 64 * 1024;
    // The pool must be this much cheaper per byte to be preferred (a margin
    // against measurement noise: being wrong towards serial costs nothing
    // beyond today's speed).
    static constexpr double pool_margin = 0.90;

    explicit crypto_tuner(bool forced = false) noexcept : forced_(forced) {}

    bool forced() const noexcept { return forced_; }
    std::size_t min_batch_bytes() const noexcept { return forced_ ? 0 : auto_min_batch_bytes; }

    // Per packet: whether the codec should gather packets into batches now
    // (for the pool, or to measure a way), or handle each packet at once.
    bool batching() noexcept;

    // For a batch of at least min_batch_bytes() and two packets: whether to
    // run it on the pool. Each call must be followed by record() for it.
    bool choose_pool() noexcept;
    // What that batch cost (wall time on the caller's thread).
    void record(bool pooled, std::size_t bytes, std::uint64_t nanoseconds) noexcept;

    // The way chosen when not probing (for tests and -v lines).
    bool prefers_pool() const noexcept;
    // ns per byte measured each way (0 before the first sample).
    double serial_cost() const noexcept { return serial_.cost; }
    double pool_cost() const noexcept { return pool_.cost; }

private:
    struct estimate {
        double cost = 0;          // ns per byte, moving average
        std::uint32_t samples = 0;
        void add(double sample) noexcept;
    };

    // Samples of each way before the tuner trusts its averages.
    static constexpr std::uint32_t warm_up = 4;
    static constexpr std::uint32_t min_probe_interval = 16;
    static constexpr std::uint32_t max_probe_interval = 256;
    // While serial is preferred, a probe of the pool comes after this many
    // packets per unit of the probe interval (a batch is a few packets).
    static constexpr std::uint32_t packets_per_batch = 8;

    bool warming_up() const noexcept { return pool_.samples < warm_up || serial_.samples < warm_up; }

    bool forced_;
    estimate serial_, pool_;
    std::uint32_t since_probe_ = 0;
    std::uint32_t probe_interval_ = min_probe_interval;
    bool probing_ = false;    // the current batch is a probe of the other way
    bool preferred_pool_ = false; // choice before the probe, to see whether it flips
    bool probe_due_ = false;      // serial preferred: the next batch probes the pool
    std::uint32_t unbatched_packets_ = 0; // packets handled at once since the last probe
};

} // namespace longhaul
