#include "channel/send_limit.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace longhaul;

namespace {
constexpr std::uint64_t kib_bytes = 1024;
constexpr std::uint64_t mib_bytes = 1024 * kib_bytes;
constexpr std::uint64_t openssh_window = 2 * mib_bytes;
constexpr std::uint64_t openssh_packet = 32 * kib_bytes;
} // namespace

TEST_CASE("send_limit: a fixed window is used up to the floor until the peer returns credit")
{
    send_limit s;
    CHECK(s.limit(openssh_packet) == short_path_send_floor);
    // Nothing in use: the floor, not the peer's 2 MiB.
    CHECK(s.capacity(openssh_window, openssh_window, openssh_packet) == short_path_send_floor);
    // Part of it in use: the rest of the floor.
    CHECK(s.capacity(openssh_window, openssh_window - 100 * kib_bytes, openssh_packet) == short_path_send_floor - 100 * kib_bytes);
    // All of it in use: nothing until the peer returns some.
    CHECK(s.capacity(openssh_window, openssh_window - short_path_send_floor, openssh_packet) == 0);
    CHECK(s.capacity(openssh_window, 0, openssh_packet) == 0);
    // Never more than the peer's window itself.
    CHECK(s.capacity(64 * kib_bytes, 64 * kib_bytes, openssh_packet) == 64 * kib_bytes);
    CHECK(s.capacity(openssh_window, 10 * kib_bytes, openssh_packet) == 0); // 2 MiB - 10 KiB in use
    // A window above what the peer opened with is not in use at all.
    CHECK(s.capacity(64 * kib_bytes, 128 * kib_bytes, openssh_packet) == 128 * kib_bytes);
}

TEST_CASE("send_limit: the floor is above what an OpenSSH receiver holds back before returning credit")
{
    // OpenSSH returns credit once more than three of its 32 KiB packets
    // are unreturned: with less than that in use the channel would wait
    // for an adjust that never comes.
    CHECK(short_path_send_floor > 3 * openssh_packet + openssh_packet);
    CHECK(send_limit::floor(openssh_packet) == short_path_send_floor);
    // A peer with larger packets holds back more before it returns credit.
    CHECK(send_limit::floor(256 * kib_bytes) == 5 * 256 * kib_bytes);
    CHECK(send_limit::floor(1000) == short_path_send_floor);
}

TEST_CASE("send_limit: a peer that drains fast earns room beyond the floor, and a slow interval does not take it at once")
{
    constexpr std::uint64_t iv = send_limit::rate_interval_us;
    send_limit s;
    std::uint64_t t = 1'000'000;
    // 10 Gbit/s: 1.25 MB returned per millisecond, in returns of 625 kB.
    s.on_return(64 * kib_bytes, t); // opens the first interval
    for (std::uint64_t i = 0; i < 4 * iv / 500; ++i) {
        t += 500;
        s.on_return(625'000, t);
    }
    CHECK(s.return_rate() == 1'250'000'000);
    CHECK(s.limit(openssh_packet) == 1'250'000'000 * short_path_send_horizon_us / 1'000'000); // 5 MB
    // An interval with nothing returned until its end (the peer
    // descheduled): the peak loses a quarter, not all of it.
    t += iv;
    s.on_return(1'000, t);
    CHECK(s.return_rate() == 937'500'000);
    // Returns inside an interval accumulate.
    t += iv / 2;
    s.on_return(1'000, t);
    CHECK(s.return_rate() == 937'500'000);
    // A peer that returns little: back to the floor.
    for (int i = 0; i < 40; ++i) {
        t += iv;
        s.on_return(1'000, t);
    }
    CHECK(s.limit(openssh_packet) == short_path_send_floor);
}

TEST_CASE("send_limit: a channel held at the limit moves what its peer writes out, and no more")
{
    // A fixed 2 MiB window, a peer that writes out 16 KiB per 100 us
    // (164 MB/s) and returns credit after 96 KiB (as OpenSSH does): what is
    // in use never passes the limit (which grows to about 4 ms of that
    // rate), and the peer never waits for data.
    send_limit s;
    std::uint64_t window = openssh_window, at_peer = 0, written_out = 0, unreturned = 0, sent = 0, t = 0;
    std::uint64_t most_in_use = 0, over_limit = 0;
    for (int step = 0; step < 20'000; ++step) {
        t += 100;
        const std::uint64_t n = s.capacity(openssh_window, window, openssh_packet);
        window -= n;
        sent += n;
        at_peer += n;
        most_in_use = std::max(most_in_use, openssh_window - window);
        if (openssh_window - window > s.limit(openssh_packet))
            over_limit = std::max(over_limit, openssh_window - window - s.limit(openssh_packet));
        const std::uint64_t w = std::min<std::uint64_t>(at_peer, 16 * kib_bytes);
        at_peer -= w;
        written_out += w;
        unreturned += w;
        if (unreturned > 96 * kib_bytes) {
            window += unreturned;
            s.on_return(unreturned, t);
            unreturned = 0;
        }
    }
    CHECK(over_limit == 0);
    // What 4 ms of the peer's rate returns: far less than its 2 MiB.
    CHECK(most_in_use < 1 * mib_bytes);
    // Two seconds at 160 MB/s (less what is still in use at the end).
    CHECK(written_out >= 20'000 * 16 * kib_bytes - 2 * short_path_send_floor);
    CHECK(sent - written_out <= s.limit(openssh_packet));
}
