// A fork-join pool for packet crypto (issue 13).
//
// run(count, task) calls task(slot, i) once for every i in [0, count) and
// returns when all calls have returned. The calling thread takes part as
// slot 0; helper threads are slots 1 .. threads()-1. Each slot takes
// indices one at a time from its own contiguous share of [0, count), then
// from the others' shares, so a helper that the scheduler keeps off the CPU
// costs at most the packet it holds, never a fixed share of the batch.
//
// Helper threads start on the first run() with more than one item: a
// connection that never moves bulk data never creates a thread. The pool
// notices when it finds itself in a forked child (sshd forks after
// authentication, ssh -f too): the helpers do not exist there, so it
// abandons their state without touching it (its mutex may have been held at
// the fork) and starts fresh helpers when next needed.
#pragma once

#include <cstddef>
#include <memory>

namespace longhaul {

class crypto_pool {
public:
    // Threads that do crypto, the caller included; 1 means the caller alone.
    static constexpr unsigned max_threads = 64;

    // `threads` is clamped to [1, max_threads].
    explicit crypto_pool(unsigned threads);
    ~crypto_pool();
    crypto_pool(const crypto_pool&) = delete;
    crypto_pool& operator=(const crypto_pool&) = delete;

    unsigned threads() const noexcept { return threads_; }

    using task_fn = void (*)(void* context, unsigned slot, std::size_t index);

    // Runs task(context, slot, i) for every i < count; slot < threads(). The
    // first exception a task throws is rethrown here after every call has
    // returned. Not reentrant: one run() at a time per pool.
    void run(std::size_t count, task_fn task, void* context);

    // The same with any callable f(unsigned slot, std::size_t index); no
    // allocation (the callable is passed by address).
    template <class F>
    void run(std::size_t count, F& f)
    {
        run(count, [](void* c, unsigned slot, std::size_t i) { (*static_cast<F*>(c))(slot, i); }, &f);
    }

    // Helper threads running now (0 until the first parallel run()).
    unsigned started_helpers() const noexcept;

private:
    struct shared_state;

    void start_helpers();

    unsigned threads_;
    std::unique_ptr<shared_state> state_;
};

} // namespace longhaul
