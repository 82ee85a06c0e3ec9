#include "common/crypto/crypto_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace longhaul {

namespace {

// How long a thread polls before it sleeps: a helper for the next batch, the
// caller for the last helper. Back-to-back batches (a bulk transfer) then
// pass without a futex sleep and wake-up each, which on this project's
// development machine cost about as much as sealing a 32 KiB packet with
// chacha20-poly1305. Some 20-50 us, depending on the CPU's pause latency.
constexpr int spin_iterations = 1024;

inline void cpu_relax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

} // namespace

// Everything the helpers share with the caller. Kept on the heap so that a
// forked child can abandon it whole (see the header).
struct crypto_pool::shared_state {
    std::mutex mutex;
    std::condition_variable wake; // helpers: a new batch or stop
    std::condition_variable done; // caller: every helper is through the batch
    // Batches started; a helper joins each once. Written under the mutex,
    // read without it only to decide whether to keep polling.
    std::atomic<std::uint64_t> generation{0};
    std::atomic<unsigned> busy_helpers{0}; // helpers not yet through this batch
    bool stop = false;

    // The batch; written under the mutex before `generation` moves.
    task_fn task = nullptr;
    void* context = nullptr;
    std::size_t count = 0;
    std::atomic<std::size_t> next{0};
    std::exception_ptr error; // the first a task threw (under the mutex)

    std::vector<std::thread> helpers;

    // Takes indices until the batch is exhausted.
    void work(task_fn fn, void* ctx, std::size_t n, unsigned slot) noexcept
    {
        for (;;) {
            const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
            if (i >= n)
                return;
            try {
                fn(ctx, slot, i);
            } catch (...) {
                const std::lock_guard lock(mutex);
                if (!error)
                    error = std::current_exception();
            }
        }
    }

    void helper_loop(unsigned slot) noexcept
    {
        std::uint64_t seen = 0;
        for (;;) {
            for (int i = 0; i < spin_iterations && generation.load(std::memory_order_relaxed) == seen; ++i)
                cpu_relax();
            std::unique_lock lock(mutex);
            wake.wait(lock, [&] { return stop || generation.load(std::memory_order_relaxed) != seen; });
            if (stop)
                return;
            seen = generation.load(std::memory_order_relaxed);
            const task_fn fn = task;
            void* const ctx = context;
            const std::size_t n = count;
            lock.unlock();
            work(fn, ctx, n, slot);
            // Release: the packets this helper wrote are visible to the
            // caller that sees the count reach zero.
            if (busy_helpers.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                const std::lock_guard relock(mutex);
                done.notify_one();
            }
        }
    }
};

crypto_pool::crypto_pool(unsigned threads) : threads_(std::clamp(threads, 1u, max_threads)) {}

crypto_pool::~crypto_pool()
{
    if (!state_)
        return;
    if (owner_pid_ != ::getpid()) {
        // A forked child: the helpers live only in the parent. Joining them
        // would wait for ever and their mutex may be locked; leave it all.
        (void)state_.release();
        return;
    }
    {
        const std::lock_guard lock(state_->mutex);
        state_->stop = true;
    }
    state_->wake.notify_all();
    for (auto& t : state_->helpers)
        t.join();
}

unsigned crypto_pool::started_helpers() const noexcept
{
    return state_ ? static_cast<unsigned>(state_->helpers.size()) : 0;
}

void crypto_pool::start_helpers()
{
    auto state = std::make_unique<shared_state>();
    state->helpers.reserve(threads_ - 1);
    shared_state* s = state.get();
    try {
        for (unsigned slot = 1; slot < threads_; ++slot)
            state->helpers.emplace_back([s, slot] { s->helper_loop(slot); });
    } catch (...) {
        // Could not start them all (resource limits): stop those that did
        // and run on the caller alone.
        {
            const std::lock_guard lock(s->mutex);
            s->stop = true;
        }
        s->wake.notify_all();
        for (auto& t : state->helpers)
            t.join();
        threads_ = 1;
        return;
    }
    state_ = std::move(state);
    owner_pid_ = ::getpid();
}

void crypto_pool::run(std::size_t count, task_fn task, void* context)
{
    if (count == 0)
        return;
    if (threads_ > 1 && count > 1) {
        // getpid() is a system call, but only batches worth parallelising get
        // here: it is noise beside the microseconds of crypto in one packet.
        if (state_ && owner_pid_ != ::getpid())
            (void)state_.release(); // forked: see the destructor
        if (!state_)
            start_helpers();
    }
    if (!state_ || count == 1) {
        for (std::size_t i = 0; i < count; ++i)
            task(context, 0, i);
        return;
    }
    shared_state& s = *state_;
    {
        const std::lock_guard lock(s.mutex);
        s.task = task;
        s.context = context;
        s.count = count;
        s.next.store(0, std::memory_order_relaxed);
        s.busy_helpers.store(static_cast<unsigned>(s.helpers.size()), std::memory_order_relaxed);
        s.generation.fetch_add(1, std::memory_order_relaxed);
    }
    s.wake.notify_all();
    s.work(task, context, count, 0);
    for (int i = 0; i < spin_iterations && s.busy_helpers.load(std::memory_order_acquire) != 0; ++i)
        cpu_relax();
    std::exception_ptr error;
    {
        std::unique_lock lock(s.mutex);
        s.done.wait(lock, [&] { return s.busy_helpers.load(std::memory_order_acquire) == 0; });
        std::swap(error, s.error);
    }
    if (error)
        std::rethrow_exception(error);
}

} // namespace longhaul
