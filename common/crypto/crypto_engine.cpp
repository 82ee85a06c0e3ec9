#include "common/crypto/crypto_engine.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace longhaul {

namespace {

// Automatic thread count: one connection rarely has more than a handful of
// packets in a batch, and each thread beyond the cores that are free only
// adds wake-ups.
constexpr unsigned auto_max_threads = 8;

} // namespace

crypto_engine::crypto_engine(unsigned threads, bool forced) : pool_(threads), seal_(forced), open_(forced) {}

void crypto_engine::run(crypto_direction d, std::size_t count, std::size_t bytes, task_fn task, void* context)
{
    crypto_tuner& tuner = d == crypto_direction::seal ? seal_ : open_;
    crypto_engine_stats& st = stats_[int(d)];
    const bool pooled = count > 1 && pool_.threads() > 1 && tuner.choose_pool();
    // steady_clock is a vDSO read, not a system call; only batches big
    // enough to be worth tuning get here.
    const auto t0 = std::chrono::steady_clock::now();
    if (pooled) {
        pool_.run(count, task, context);
    } else {
        for (std::size_t i = 0; i < count; ++i)
            task(context, 0, i);
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    if (count > 1 && pool_.threads() > 1)
        tuner.record(pooled, bytes, static_cast<std::uint64_t>(ns.count()));
    if (pooled) {
        ++st.pooled_batches;
        st.pooled_packets += count;
    } else {
        ++st.serial_batches;
        st.serial_packets += count;
    }
}

std::string describe_crypto_engine(const crypto_engine& e)
{
    auto direction = [&](const char* name, crypto_direction d) {
        const crypto_engine_stats& s = e.stats(d);
        return std::string(name) + ": " + std::to_string(s.pooled_batches) + " batches pooled (" +
               std::to_string(s.pooled_packets) + " packets), " + std::to_string(s.serial_batches) + " alone (" +
               std::to_string(s.serial_packets) + ")";
    };
    const unsigned helpers = e.started_helpers();
    return "crypto engine: " + std::to_string(e.threads()) + " threads, " + (e.forced() ? "forced" : "self-tuned") +
           ", " + std::to_string(helpers) + (helpers == 1 ? " helper" : " helpers") + " started; " +
           direction("seal", crypto_direction::seal) + "; " + direction("open", crypto_direction::open);
}

std::optional<int> parse_crypto_threads(std::string_view text) noexcept
{
    if (text.empty() || text.size() > 3)
        return std::nullopt;
    int v = 0;
    for (char ch : text) {
        if (ch < '0' || ch > '9')
            return std::nullopt;
        v = v * 10 + (ch - '0');
    }
    if (v > static_cast<int>(crypto_pool::max_threads))
        return std::nullopt;
    return v;
}

unsigned crypto_threads_for(int configured) noexcept
{
    if (configured >= 0)
        return std::min(static_cast<unsigned>(configured), crypto_pool::max_threads);
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpus = 1;
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
    return std::clamp(static_cast<unsigned>(cpus), 1u, auto_max_threads);
}

} // namespace longhaul
