#include "common/crypto/crypto_pool.hpp"

#include "common/crypto/crypto_engine.hpp"

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <vector>

using namespace longhaul;

TEST_CASE("crypto_pool calls the task once for every index, on slots below threads()")
{
    for (unsigned threads = 1; threads <= 8; ++threads) {
        crypto_pool pool(threads);
        CHECK(pool.threads() == threads);
        for (std::size_t count : {1u, 2u, 3u, 7u, 64u, 1000u}) {
            std::vector<std::atomic<int>> calls(count);
            std::atomic<bool> bad_slot{false};
            auto task = [&](unsigned slot, std::size_t i) {
                if (slot >= threads)
                    bad_slot = true;
                calls[i].fetch_add(1);
            };
            pool.run(count, task);
            CHECK_FALSE(bad_slot.load());
            int wrong = 0;
            for (auto& c : calls)
                wrong += c.load() != 1;
            CHECK(wrong == 0);
        }
    }
}

TEST_CASE("crypto_pool starts helpers only for a batch of two or more, and keeps them")
{
    crypto_pool pool(4);
    int n = 0;
    auto task = [&](unsigned, std::size_t) { ++n; };
    pool.run(1, task);
    pool.run(0, task);
    CHECK(pool.started_helpers() == 0);
    CHECK(n == 1);
    std::atomic<int> m{0};
    auto counted = [&](unsigned, std::size_t) { m.fetch_add(1); };
    pool.run(2, counted);
    CHECK(pool.started_helpers() == 3);
    for (int i = 0; i < 200; ++i)
        pool.run(5, counted);
    CHECK(m.load() == 2 + 200 * 5);
    CHECK(pool.started_helpers() == 3);

    crypto_pool single(1);
    single.run(10, counted);
    CHECK(single.started_helpers() == 0);
}

TEST_CASE("crypto_pool rethrows a task's exception after the batch, and keeps working")
{
    crypto_pool pool(3);
    std::atomic<int> ran{0};
    auto failing = [&](unsigned, std::size_t i) {
        ran.fetch_add(1);
        if (i == 5)
            throw std::runtime_error("seal failed");
    };
    CHECK_THROWS_AS(pool.run(20, failing), std::runtime_error);
    CHECK(ran.load() == 20); // every other index still ran: no packet is left half done
    std::atomic<int> after{0};
    auto fine = [&](unsigned, std::size_t) { after.fetch_add(1); };
    pool.run(20, fine);
    CHECK(after.load() == 20);
}

TEST_CASE("crypto_pool clamps its thread count")
{
    CHECK(crypto_pool(0).threads() == 1);
    CHECK(crypto_pool(1000).threads() == crypto_pool::max_threads);
}

#if !defined(__SANITIZE_THREAD__)
// ThreadSanitizer does not support starting threads after a multi-threaded
// fork, which is exactly what this checks.
TEST_CASE("crypto_pool in a forked child starts fresh helpers instead of waiting for the parent's")
{
    crypto_pool pool(3);
    std::atomic<int> n{0};
    auto task = [&](unsigned, std::size_t) { n.fetch_add(1); };
    pool.run(8, task);
    REQUIRE(pool.started_helpers() == 2);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        n = 0;
        pool.run(8, task);
        pool.run(8, task);
        const bool ok = n.load() == 16 && pool.started_helpers() == 2;
        ::_exit(ok ? 0 : 1); // the child's pool abandons the parent's helpers
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    pool.run(8, task); // the parent's helpers are untouched
    CHECK(n.load() == 16);
}
#endif

TEST_CASE("crypto_threads_for: a number is taken as given, automatic follows the CPUs")
{
    CHECK(crypto_threads_for(0) == 0);
    CHECK(crypto_threads_for(1) == 1);
    CHECK(crypto_threads_for(6) == 6);
    const unsigned automatic = crypto_threads_for(-1);
    CHECK(automatic >= 1);
    CHECK(automatic <= 8);
}

TEST_CASE("crypto_engine: forced uses the pool for every batch of two or more, counts both ways")
{
    crypto_engine engine(3, true);
    CHECK(engine.forced());
    CHECK(engine.min_batch_bytes() == 0);
    std::atomic<int> n{0};
    auto task = [&](unsigned, std::size_t) { n.fetch_add(1); };
    engine.run(crypto_direction::seal, 4, 4096, task);
    engine.run(crypto_direction::seal, 1, 1024, task);
    engine.run(crypto_direction::open, 6, 4096, task);
    CHECK(n.load() == 11);
    CHECK(engine.stats(crypto_direction::seal).pooled_batches == 1);
    CHECK(engine.stats(crypto_direction::seal).serial_batches == 1);
    CHECK(engine.stats(crypto_direction::open).pooled_packets == 6);
    CHECK(engine.started_helpers() == 2);
}

TEST_CASE("crypto_threads: parse_crypto_threads takes 0..max_threads in decimal only")
{
    CHECK(parse_crypto_threads("0") == 0);
    CHECK(parse_crypto_threads("8") == 8);
    CHECK(parse_crypto_threads("64") == 64);
    CHECK_FALSE(parse_crypto_threads("65").has_value());
    CHECK_FALSE(parse_crypto_threads("").has_value());
    CHECK_FALSE(parse_crypto_threads("-1").has_value());
    CHECK_FALSE(parse_crypto_threads("4x").has_value());
    CHECK_FALSE(parse_crypto_threads("auto").has_value());
    CHECK_FALSE(parse_crypto_threads("0004").has_value());
}

TEST_CASE("describe_crypto_engine counts each direction's pooled and lone batches")
{
    crypto_engine e(2, true);
    std::atomic<int> calls{0};
    auto task = [&](unsigned, std::size_t) { ++calls; };
    e.run(crypto_direction::seal, 4, 4 * 32768, task);
    e.run(crypto_direction::seal, 1, 32768, task);
    CHECK(calls == 5);
    const std::string line = describe_crypto_engine(e);
    CHECK(line == "crypto engine: 2 threads, forced, 1 helper started; seal: 1 batches pooled (4 packets), 1 alone (1); "
                  "open: 0 batches pooled (0 packets), 0 alone (0)");
}
