// The crypto engine behind the packet layer (issue 13): a crypto_pool and,
// for each direction, a crypto_tuner that decides batch by batch whether the
// pool or the caller alone does the work.
//
// The packet codec frames packets and assigns their positions in order, then
// hands whole batches here; the engine runs task(slot, i) for every packet
// of the batch, each slot with its own clone of the cipher. Where the work
// runs and how long it took is the engine's business, so the transport core
// itself still owns no thread and reads no clock: the driver creates the
// engine and lends it to the core.
#pragma once

#include "common/crypto/crypto_pool.hpp"
#include "common/crypto/crypto_tuner.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

enum class crypto_direction { seal = 0, open = 1 };

struct crypto_engine_stats {
    std::uint64_t pooled_batches = 0, serial_batches = 0;
    std::uint64_t pooled_packets = 0, serial_packets = 0;
};

class crypto_engine {
public:
    // `threads`: threads that do crypto, the caller included (2 or more for
    // any parallelism). `forced`: every batch of two or more packets uses
    // the pool (CryptoThreads N); otherwise the tuners decide.
    crypto_engine(unsigned threads, bool forced);

    unsigned threads() const noexcept { return pool_.threads(); }
    bool forced() const noexcept { return seal_.forced(); }
    // Batches (in bytes) below this are not handed to run(): the codec does
    // them on its own, as without an engine.
    std::size_t min_batch_bytes() const noexcept { return seal_.min_batch_bytes(); }

    // Per packet: whether the codec should gather this direction's packets
    // into batches now (crypto_tuner::batching()).
    bool batching(crypto_direction d) noexcept { return (d == crypto_direction::seal ? seal_ : open_).batching(); }

    using task_fn = crypto_pool::task_fn;
    // Runs task(context, slot, i) for every i < count, slot < threads(),
    // on the pool or on the calling thread alone (slot 0).
    void run(crypto_direction d, std::size_t count, std::size_t bytes, task_fn task, void* context);

    template <class F>
    void run(crypto_direction d, std::size_t count, std::size_t bytes, F& f)
    {
        run(d, count, bytes, [](void* c, unsigned slot, std::size_t i) { (*static_cast<F*>(c))(slot, i); }, &f);
    }

    const crypto_tuner& tuner(crypto_direction d) const noexcept { return d == crypto_direction::seal ? seal_ : open_; }
    const crypto_engine_stats& stats(crypto_direction d) const noexcept { return stats_[int(d)]; }
    unsigned started_helpers() const noexcept { return pool_.started_helpers(); }

private:
    crypto_pool pool_;
    crypto_tuner seal_, open_;
    crypto_engine_stats stats_[2];
};

// One line for the connection's end at VERBOSE (ssh -v, sshd's LogLevel
// VERBOSE): threads, and per direction the batches of min_batch_bytes() or
// more that went to the pool and those the caller did alone, e.g.
// "crypto engine: 2 threads, self-tuned, 1 helper started; seal: 812
// batches pooled (25984 packets), 40 alone (1280); open: 0 batches pooled
// (0 packets), 3 alone (96)".
std::string describe_crypto_engine(const crypto_engine& e);

// A CryptoThreads number (the value of ssh_config's and sshd_config's
// keyword other than "auto"): decimal, 0 .. crypto_pool::max_threads.
std::optional<int> parse_crypto_threads(std::string_view text) noexcept;

// Threads for CryptoThreads: `configured` < 0 means automatic (the CPUs
// this process may run on, at most 8); 0 and 1 mean no engine.
unsigned crypto_threads_for(int configured) noexcept;

} // namespace longhaul
