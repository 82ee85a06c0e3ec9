#include "common/crypto/crypto_tuner.hpp"

#include <algorithm>

namespace longhaul {

void crypto_tuner::estimate::add(double sample) noexcept
{
    // A quarter weight: one batch preempted by another process moves the
    // average, a few in a row move it decisively.
    cost = samples == 0 ? sample : cost + (sample - cost) / 4;
    ++samples;
}

bool crypto_tuner::prefers_pool() const noexcept
{
    if (forced_)
        return true;
    return pool_.samples > 0 && serial_.samples > 0 && pool_.cost < serial_.cost * pool_margin;
}

bool crypto_tuner::batching() noexcept
{
    if (forced_ || warming_up() || prefers_pool() || probe_due_)
        return true;
    if (++unbatched_packets_ >= probe_interval_ * packets_per_batch) {
        unbatched_packets_ = 0;
        probe_due_ = true;
    }
    return probe_due_;
}

bool crypto_tuner::choose_pool() noexcept
{
    if (forced_)
        return true;
    // Warm-up: alternate until both ways have a few samples, pool first so
    // that a helper thread exists (and its start-up cost is paid) before
    // the pool is first timed for real.
    if (warming_up()) {
        probing_ = false;
        return pool_.samples <= serial_.samples;
    }
    const bool best = prefers_pool();
    if (!best && probe_due_) {
        // The batch batching() gathered for a probe of the pool.
        probe_due_ = false;
        since_probe_ = 0;
        probing_ = true;
        preferred_pool_ = false;
        return true;
    }
    if (++since_probe_ >= probe_interval_) {
        since_probe_ = 0;
        probing_ = true;
        preferred_pool_ = best;
        return !best;
    }
    probing_ = false;
    return best;
}

void crypto_tuner::record(bool pooled, std::size_t bytes, std::uint64_t nanoseconds) noexcept
{
    if (forced_ || bytes == 0)
        return;
    const double sample = double(nanoseconds) / double(bytes);
    // Whether this sample alone would choose the pool (before it moves the average).
    const bool sample_prefers_pool =
        pooled ? sample < serial_.cost * pool_margin : pool_.cost < sample * pool_margin;
    (pooled ? pool_ : serial_).add(sample);
    if (!probing_)
        return;
    probing_ = false;
    // A probe that confirms the choice lengthens the interval; one that
    // flips it means the conditions changed: look again soon. One whose
    // sample disagrees without flipping it (the average moves a quarter of
    // the way) keeps the interval: on a loaded 2-core machine such samples
    // come and go, and probing more often only disturbs the work that
    // holds the other core (measured on loopback: 254 probes in 2 GiB, 40 with this rule).
    if (prefers_pool() != preferred_pool_)
        probe_interval_ = min_probe_interval;
    else if (sample_prefers_pool == preferred_pool_)
        probe_interval_ = std::min(probe_interval_ * 2, max_probe_interval);
}

} // namespace longhaul
