#include "common/crypto/crypto_pool.hpp"

#include <sys/mman.h>
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

// Tells whether this process is a child forked since construction. A page
// the kernel wipes in a forked child (MADV_WIPEONFORK, Linux 4.14) answers
// without a system call; getpid() answers elsewhere. getpid() costs about
// 1 us on the development machine (a virtual machine with the kernel's
// side-channel mitigations), as much as 5% of a two-thread batch.
class fork_marker {
public:
    fork_marker() noexcept : pid_(::getpid())
    {
#ifdef MADV_WIPEONFORK
        const long page = ::sysconf(_SC_PAGESIZE);
        void* p = ::mmap(nullptr, std::size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return;
        if (::madvise(p, std::size_t(page), MADV_WIPEONFORK) != 0) {
            ::munmap(p, std::size_t(page));
            return;
        }
        page_ = static_cast<volatile unsigned char*>(p);
        page_size_ = std::size_t(page);
        *page_ = 1;
#endif
    }
    ~fork_marker()
    {
        if (page_ != nullptr)
            ::munmap(const_cast<unsigned char*>(page_), page_size_);
    }
    fork_marker(const fork_marker&) = delete;
    fork_marker& operator=(const fork_marker&) = delete;

    bool forked() const noexcept { return page_ != nullptr ? *page_ == 0 : ::getpid() != pid_; }

private:
    pid_t pid_;
    volatile unsigned char* page_ = nullptr;
    std::size_t page_size_ = 0;
};

} // namespace

// Everything the helpers share with the caller. Kept on the heap so that a
// forked child can abandon it whole (see the header).
struct crypto_pool::shared_state {
    std::mutex mutex;
    std::condition_variable wake; // helpers: a new batch or stop
    std::condition_variable done; // caller: every helper is through the batch
    // Batches started; a helper joins each once. Written under the mutex
    // with release order after the batch, so a helper that sees it move
    // while polling may read the batch without taking the mutex.
    std::atomic<std::uint64_t> generation{0};
    std::atomic<unsigned> busy_helpers{0}; // helpers not yet through this batch
    std::atomic<bool> failed{false};       // `error` holds an exception
    bool stop = false;

    // One slot's share of the batch: indices [next, end). Each on a cache
    // line of its own, since every index taken writes it.
    struct alignas(64) share {
        std::atomic<std::size_t> next{0};
        std::size_t end = 0;
    };

    explicit shared_state(unsigned threads) : shares(threads) {}

    // The batch; written under the mutex before `generation` moves.
    task_fn task = nullptr;
    void* context = nullptr;
    std::vector<share> shares; // one per slot
    std::exception_ptr error;  // the first a task threw (under the mutex)

    std::vector<std::thread> helpers;
    fork_marker marker; // the helpers exist only where marker.forked() is false

    // Splits [0, count) into one contiguous share per slot. Contiguous
    // because packets lie one after another in one buffer: two threads
    // taking alternate packets write the cache lines where packets meet and
    // pull in each other's lines through the prefetchers, which cost about
    // 8% per thread with chacha20-poly1305 (see docs/PERFORMANCE.md).
    void split(std::size_t count) noexcept
    {
        const std::size_t k = shares.size();
        for (std::size_t s = 0; s < k; ++s) {
            shares[s].next.store(count * s / k, std::memory_order_relaxed);
            shares[s].end = count * (s + 1) / k;
        }
    }

    // Takes indices from the slot's own share, then from the others' until
    // the batch is exhausted, so a thread the scheduler keeps off the CPU
    // holds up at most the index it has taken.
    void work(task_fn fn, void* ctx, unsigned slot) noexcept
    {
        const std::size_t k = shares.size();
        for (std::size_t r = 0; r < k; ++r) {
            share& sh = shares[(slot + r) % k];
            for (;;) {
                const std::size_t i = sh.next.fetch_add(1, std::memory_order_relaxed);
                if (i >= sh.end)
                    break;
                try {
                    fn(ctx, slot, i);
                } catch (...) {
                    const std::lock_guard lock(mutex);
                    if (!error)
                        error = std::current_exception();
                    failed.store(true, std::memory_order_relaxed);
                }
            }
        }
    }

    void helper_loop(unsigned slot) noexcept
    {
        std::uint64_t seen = 0;
        for (;;) {
            for (int i = 0; i < spin_iterations && generation.load(std::memory_order_acquire) == seen; ++i)
                cpu_relax();
            // A batch seen while polling needs no mutex: the caller wrote it
            // before the release of `generation`, and writes the next one
            // only after every helper is through this one. (The destructor
            // sets `stop` only between batches.)
            const std::uint64_t now = generation.load(std::memory_order_acquire);
            if (now != seen) {
                seen = now;
                work(task, context, slot);
            } else {
                std::unique_lock lock(mutex);
                wake.wait(lock, [&] { return stop || generation.load(std::memory_order_relaxed) != seen; });
                if (stop)
                    return;
                seen = generation.load(std::memory_order_relaxed);
                const task_fn fn = task;
                void* const ctx = context;
                lock.unlock();
                work(fn, ctx, slot);
            }
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
    if (state_->marker.forked()) {
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
    auto state = std::make_unique<shared_state>(threads_);
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
}

void crypto_pool::run(std::size_t count, task_fn task, void* context)
{
    if (count == 0)
        return;
    if (threads_ > 1 && count > 1) {
        if (state_ && state_->marker.forked())
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
        s.split(count);
        s.busy_helpers.store(static_cast<unsigned>(s.helpers.size()), std::memory_order_relaxed);
        s.generation.fetch_add(1, std::memory_order_release);
    }
    s.wake.notify_all();
    s.work(task, context, 0);
    for (int i = 0; i < spin_iterations && s.busy_helpers.load(std::memory_order_acquire) != 0; ++i)
        cpu_relax();
    // Usually every helper is through by now and nothing failed: no mutex.
    if (s.busy_helpers.load(std::memory_order_acquire) == 0 && !s.failed.load(std::memory_order_relaxed))
        return;
    std::exception_ptr error;
    {
        std::unique_lock lock(s.mutex);
        s.done.wait(lock, [&] { return s.busy_helpers.load(std::memory_order_acquire) == 0; });
        std::swap(error, s.error);
        s.failed.store(false, std::memory_order_relaxed);
    }
    if (error)
        std::rethrow_exception(error);
}

} // namespace longhaul
