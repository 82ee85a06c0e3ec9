#include "channel/window_policy.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

using namespace longhaul;

namespace {

// A path and a TCP sender in slow start, simulated in steps of 1/64 RTT:
// data takes half an RTT to reach the receiver, whose sink takes it at once;
// credit and TCP's ACKs take the other half back. The sender sends what the
// link rate, its congestion window and the SSH window all allow; its
// congestion window doubles every RTT (slow start) up to `cwnd_cap`. The
// link carries rate x RTT (the BDP) at most; a congestion window beyond that
// would only queue at the bottleneck.
struct path_sim {
    std::uint64_t rtt_us;
    std::uint64_t rate_bytes_per_s;
    std::uint64_t cwnd_cap;
    receive_window& rx;

    std::uint64_t now = 1'000'000;
    std::uint64_t cwnd = 10 * 1448;
    std::uint64_t sender_window = 0;  // SSH credit the sender has
    std::uint64_t tcp_in_flight = 0;
    struct chunk {
        std::uint64_t at;
        std::uint64_t bytes;
    };
    std::deque<chunk> to_receiver, credit_back, acks_back;
    std::uint64_t steps = 0, window_limited_steps = 0;
    // The receiver's target smaller than the sender's cwnd while that fits
    // the path (beyond it the target holds the path plus a margin, by design).
    std::uint64_t below_cwnd_steps = 0;
    std::uint64_t delivered = 0;
    std::uint64_t max_held = 0; // the most credit the sender held unsent (its input buffer)

    path_sim(std::uint64_t rtt, std::uint64_t rate, std::uint64_t cap, receive_window& w)
        : rtt_us(rtt), rate_bytes_per_s(rate), cwnd_cap(cap), rx(w)
    {
        sender_window = w.credit();
    }

    void step()
    {
        const std::uint64_t dt = std::max<std::uint64_t>(rtt_us / 64, 1);
        now += dt;
        ++steps;
        // Arrivals at the receiver: consumed at once, credit sent back.
        while (!to_receiver.empty() && to_receiver.front().at <= now) {
            std::uint64_t n = to_receiver.front().bytes;
            to_receiver.pop_front();
            while (n > 0) {
                const auto piece = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, 256 * 1024));
                REQUIRE(rx.on_receive(piece, now));
                const std::uint32_t credit = rx.on_consumed(piece, now, rtt_us);
                if (credit > 0)
                    credit_back.push_back({now + rtt_us / 2, credit});
                n -= piece;
                delivered += piece;
            }
        }
        while (!credit_back.empty() && credit_back.front().at <= now) {
            sender_window += credit_back.front().bytes;
            credit_back.pop_front();
        }
        while (!acks_back.empty() && acks_back.front().at <= now) {
            tcp_in_flight -= acks_back.front().bytes;
            cwnd = std::min(cwnd + acks_back.front().bytes, cwnd_cap); // slow start: +1 per ACKed byte
            acks_back.pop_front();
        }
        // The sender.
        const std::uint64_t link = rate_bytes_per_s * dt / 1'000'000;
        const std::uint64_t tcp = cwnd > tcp_in_flight ? cwnd - tcp_in_flight : 0;
        const std::uint64_t other = std::min(link, tcp);
        const std::uint64_t n = std::min(other, sender_window);
        if (sender_window < other)
            ++window_limited_steps;
        if (rx.target() < std::min(cwnd, rate_bytes_per_s * rtt_us / 1'000'000))
            ++below_cwnd_steps;
        if (n > 0) {
            sender_window -= n;
            tcp_in_flight += n;
            to_receiver.push_back({now + rtt_us / 2, n});
            acks_back.push_back({now + rtt_us, n});
        }
        max_held = std::max(max_held, sender_window);
    }

    // Round trips until the receiver's target first reaches `bytes`; -1 if not within `max_rtts`.
    int rtts_to_reach(std::uint64_t bytes, int max_rtts)
    {
        for (int i = 0; i < max_rtts * 64; ++i) {
            if (rx.target() >= bytes)
                return i / 64;
            step();
        }
        return -1;
    }
};

window_config big_config()
{
    window_config cfg;
    cfg.max_window = 1u << 30;
    cfg.budget = 4ull << 30;
    return cfg;
}

} // namespace

TEST_CASE("window_policy: from 2 MiB to the BDP in a bounded number of round trips, never behind TCP")
{
    for (std::uint64_t rtt_ms : {10, 50, 100, 200}) {
        for (std::uint64_t mbit : {100, 1000, 10000}) {
            CAPTURE(rtt_ms);
            CAPTURE(mbit);
            const window_config cfg = big_config();
            window_budget budget(cfg.budget);
            receive_window w(cfg, budget);
            const std::uint64_t rate = mbit * 1'000'000 / 8;
            const std::uint64_t bdp = rate * rtt_ms / 1000;
            // TCP's window ends a little above the BDP (a queue's worth).
            path_sim sim(rtt_ms * 1000, rate, bdp + bdp / 4, w);
            // Slow start from 10 segments reaches the BDP in log2(BDP / 14480)
            // round trips; the window must be there no later than two after.
            int tcp_rtts = 0;
            for (std::uint64_t c = 10 * 1448; c < bdp; c *= 2)
                ++tcp_rtts;
            const int reached = sim.rtts_to_reach(std::max<std::uint64_t>(bdp, cfg.initial_window), 60);
            CHECK(reached >= 0);
            CHECK(reached <= tcp_rtts + 2);
            for (int i = 0; i < 20 * 64; ++i)
                sim.step();
            // The sender was almost never held back by the SSH window, and the
            // receiver's window was never smaller than the congestion window.
            CHECK(sim.window_limited_steps * 50 <= sim.steps); // under 2 %
            CHECK(sim.below_cwnd_steps == 0);
            CHECK(w.target() <= cfg.max_window);
            CHECK(budget.used() == w.budget_held());
            // The policy's own account agrees: the network, not the window, was the limit.
            CHECK(w.stats().window_limited_us * 20 <= w.stats().active_us);
        }
    }
}

TEST_CASE("window_policy: no growth without an RTT, or when the link is the limit")
{
    window_config cfg;
    window_budget budget(cfg.budget);
    {
        receive_window w(cfg, budget);
        path_sim sim(0, 1'250'000'000, 1u << 30, w);
        for (int i = 0; i < 64 * 20; ++i)
            sim.step();
        CHECK(w.target() == cfg.initial_window);
    }
    {
        receive_window w(cfg, budget);
        // 10 ms RTT at 100 Mbit/s: BDP 125 kB, far below the 2 MiB initial window.
        path_sim sim(10'000, 12'500'000, 125'000 * 2, w);
        for (int i = 0; i < 64 * 50; ++i)
            sim.step();
        CHECK(w.target() == cfg.initial_window);
        CHECK(w.stats().window_limited_us == 0);
    }
    CHECK(budget.used() == 0);
}

TEST_CASE("window_policy: a slow sink is not a reason to grow")
{
    window_config cfg;
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    std::uint64_t now = 1'000'000;
    // The sink takes 1 MiB per 100 ms RTT; the peer always has data to send.
    std::uint64_t peer = w.credit();
    for (int i = 0; i < 2000; ++i) {
        now += 5'000;
        const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(peer, 64 * 1024));
        if (n > 0) {
            REQUIRE(w.on_receive(n, now));
            peer -= n;
        }
        peer += w.on_consumed(std::min<std::uint32_t>(w.backlog(), 52'428), now, 100'000);
        CHECK(std::uint64_t(w.credit()) + w.backlog() <= w.target());
    }
    // At most the little growth of the first round trips, before the
    // backlog shows the sink is the limit.
    CHECK(w.target() <= cfg.initial_window + cfg.initial_window / 4);
    CHECK(w.stats().sink_limited_us > w.stats().active_us / 2);
}

TEST_CASE("window_policy: an idle channel shrinks back, keeping budget for credit the peer still holds")
{
    const window_config cfg = big_config();
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    path_sim sim(100'000, 125'000'000, 16'000'000, w);
    for (int i = 0; i < 64 * 30; ++i)
        sim.step();
    REQUIRE(w.target() > 8 * cfg.initial_window);
    const std::uint64_t outstanding = w.credit();
    w.on_tick(sim.now + receive_window::idle_shrink_us + 1);
    CHECK(w.target() == cfg.initial_window);
    auto change = w.take_change();
    REQUIRE(change.has_value());
    CHECK(change->why == window_change::reason::idle);
    // The peer may still send all the credit it holds: that memory stays reserved.
    CHECK(budget.used() == std::max<std::uint64_t>(outstanding + w.backlog(), cfg.initial_window));
    // As that credit arrives and is consumed, the budget comes back.
    std::uint64_t now = sim.now + receive_window::idle_shrink_us + 2;
    std::uint32_t left = w.credit();
    while (left > 0) {
        const std::uint32_t n = std::min<std::uint32_t>(left, 32768);
        REQUIRE(w.on_receive(n, now));
        (void)w.on_consumed(n, now, 100'000);
        left -= n;
        now += 10;
    }
    w.on_tick(now);
    CHECK(budget.used() == cfg.initial_window); // its window, no more
}

TEST_CASE("window_policy: 100 channels never exceed the budget, counting credit already granted")
{
    window_config cfg;
    cfg.budget = 256ull << 20; // 200 MiB of initial windows, 56 MiB to grow into
    window_budget budget(cfg.budget);
    std::vector<std::unique_ptr<receive_window>> ws;
    std::vector<std::unique_ptr<path_sim>> sims;
    for (int i = 0; i < 100; ++i) {
        ws.push_back(std::make_unique<receive_window>(cfg, budget));
        // 4 MB in flight each at 100 ms: together more than the budget.
        sims.push_back(std::make_unique<path_sim>(100'000, 40'000'000, 64'000'000, *ws.back()));
    }
    for (int step = 0; step < 64 * 20; ++step) {
        for (auto& s : sims)
            s->step();
        std::uint64_t held = 0;
        for (auto& w : ws) {
            held += std::max<std::uint64_t>(w->target(), std::uint64_t(w->credit()) + w->backlog());
            // (Above the target only while a shrunk target is below
            // credit already granted, which the channel's budget covers.)
            CHECK(std::uint64_t(w->credit()) + w->backlog() <= w->budget_held());
        }
        REQUIRE(held <= cfg.budget);
        REQUIRE(held <= budget.used());
        REQUIRE(budget.used() <= cfg.budget);
    }
    // Some channels grew and the budget is what stopped the rest.
    CHECK(budget.used() > cfg.budget - cfg.budget / 8);
}

TEST_CASE("window_policy: no overflow near 2^32 - 1")
{
    window_config cfg;
    cfg.initial_window = 0x7fffffffu;
    cfg.max_window = 0x7fffffffu;
    cfg.budget = ~0ull;
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    std::uint64_t now = 1;
    std::uint64_t peer = w.credit();
    for (int i = 0; i < 100; ++i) {
        const std::uint32_t n = 0x10000000u;
        if (peer >= n) {
            REQUIRE(w.on_receive(n, now));
            peer -= n;
        }
        peer += w.on_consumed(n, now, 1000);
        now += 2000;
        CHECK(w.target() <= 0x7fffffffu);
        CHECK(std::uint64_t(w.credit()) + w.backlog() <= 0x7fffffffu);
        CHECK(peer <= 0xffffffffu);
    }
}

TEST_CASE("window_policy: overrunning the window is tolerated only a little")
{
    window_config cfg;
    cfg.initial_window = 100000;
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    CHECK(w.on_receive(100000, 1));
    CHECK(w.on_receive(5000, 2));
    CHECK_FALSE(w.on_receive(6000, 3));
}

TEST_CASE("window_policy: the automatic limits scale with physical memory")
{
    constexpr std::uint64_t mib = 1024 * 1024, gib = 1024 * mib;
    // 16 GiB: a 1 GiB budget, all of it usable by one channel (10 Gbit/s x 200 ms).
    auto c = window_limits(0, 0, 16 * gib);
    CHECK(c.budget == gib);
    CHECK(c.max_window == gib);
    CHECK(c.initial_window == 2 * mib);
    // Small and huge machines are clamped.
    CHECK(window_limits(0, 0, 512 * mib).budget == 64 * mib);
    CHECK(window_limits(0, 0, 512 * mib).max_window == 64 * mib);
    CHECK(window_limits(0, 0, 256 * gib).budget == 2 * gib);
    CHECK(window_limits(0, 0, 256 * gib).max_window == gib);
    // Explicit values win; a channel cap under 2 MiB lowers the initial window.
    c = window_limits(256 * 1024, 8 * mib, 16 * gib);
    CHECK(c.max_window == 256 * 1024);
    CHECK(c.initial_window == 256 * 1024);
    CHECK(c.budget == 8 * mib);
    CHECK(window_limits(4 * gib, 0, 16 * gib).max_window == 0x7fffffffu);
}

TEST_CASE("window_policy: a sink that slows down brings an overgrown window back toward its rate")
{
    const window_config cfg = big_config();
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    path_sim sim(100'000, 1'250'000'000, 160'000'000, w);
    for (int i = 0; i < 64 * 15; ++i)
        sim.step();
    const std::uint32_t grown = w.target();
    REQUIRE(grown > 16 * cfg.initial_window);
    // Now the sink takes 1 MiB per round trip, whatever arrives.
    std::uint64_t now = sim.now;
    std::uint64_t peer = w.credit();
    bool saw_sink_change = false;
    for (int i = 0; i < 64 * 30; ++i) {
        now += 100'000 / 64;
        const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(peer, 2'000'000 / 64 * 10));
        if (n > 0) {
            REQUIRE(w.on_receive(n, now));
            peer -= n;
        }
        peer += w.on_consumed(std::min<std::uint32_t>(w.backlog(), (1 << 20) / 64), now, 100'000);
        if (auto c = w.take_change())
            saw_sink_change |= c->why == window_change::reason::sink_limited;
    }
    CHECK(saw_sink_change);
    CHECK(w.target() <= 4 * cfg.initial_window);
    CHECK(w.target() < grown / 8);
}

TEST_CASE("window_policy: initial windows come out of the budget; a short budget gives smaller ones")
{
    window_config cfg;
    cfg.budget = 5ull << 20; // two full 2 MiB windows and half of a third
    window_budget budget(cfg.budget);
    receive_window a(cfg, budget), b(cfg, budget);
    CHECK(a.initial() == cfg.initial_window);
    CHECK(budget.used() == 2ull * cfg.initial_window);
    receive_window c(cfg, budget);
    CHECK(c.initial() == 1u << 20);
    CHECK(c.credit() == 1u << 20);
    CHECK(budget.available() == 0);
    // The connection refuses a channel below two packets of window.
    CHECK(min_initial_window(cfg) == 2 * cfg.max_packet);
    CHECK(budget.available() < min_initial_window(cfg));
    // An idle channel that shrinks never hands back the budget of credit the
    // peer still holds: the sum stays what was granted.
    a.on_tick(receive_window::idle_shrink_us * 2);
    CHECK(budget.used() == 5ull << 20);
}

TEST_CASE("window_policy: an overrun the budget cannot cover is refused")
{
    window_config cfg;
    cfg.initial_window = 100000;
    cfg.budget = 100000; // exactly the window: no room for the tolerated overrun
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    CHECK(w.on_receive(100000, 1));
    CHECK_FALSE(w.on_receive(5000, 2));
    CHECK(budget.used() == 100000);
    // With room in the budget the same overrun is taken, and accounted for.
    window_budget roomy(200000);
    receive_window v(cfg, roomy);
    CHECK(v.on_receive(100000, 1));
    CHECK(v.on_receive(5000, 2));
    CHECK(roomy.used() == 105000);
    CHECK(v.budget_held() == 105000);
}

TEST_CASE("window_policy: discarded data returns no credit by itself")
{
    window_config cfg;
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    const std::uint32_t initial = w.credit();
    CHECK(w.on_receive(512 * 1024, 1));
    w.on_discarded(512 * 1024);
    CHECK(w.backlog() == 0);
    CHECK(w.credit() == initial - 512 * 1024); // the peer's credit stays used up
    CHECK(budget.used() == cfg.initial_window);
    // Real data the sink takes later brings the window back to its target.
    CHECK(w.on_receive(1024, 2));
    const std::uint32_t back = w.on_consumed(1024, 3, 0);
    CHECK(back == 512 * 1024 + 1024);
    CHECK(w.credit() == initial);
}

TEST_CASE("window_policy: which peers buffer their credit as OpenSSH's sender does")
{
    CHECK(classify_sender("OpenSSH_9.2p1") == peer_sender::openssh);
    CHECK(classify_sender("OpenSSH_10.5p1") == peer_sender::openssh);
    CHECK(classify_sender("OpenSSH_for_Windows_8.1") == peer_sender::openssh);
    // HPN-SSH grows its buffers in large steps; Longhaul buffers little.
    CHECK(classify_sender("OpenSSH_10.2p1_hpn18.8.0") == peer_sender::other);
    CHECK(classify_sender("OpenSSH_8.9p1-hpn15v2") == peer_sender::other);
    CHECK(classify_sender("OpenSSH_7.6p1-HPN14v15") == peer_sender::other);
    CHECK(classify_sender("Longhaul_0.1") == peer_sender::other);
    CHECK(classify_sender("dropbear_2022.83") == peer_sender::other);
    CHECK(classify_sender("OpenSS") == peer_sender::other);
    CHECK(classify_sender("") == peer_sender::other);

    const window_config base = big_config();
    const window_config openssh = window_for_peer(base, "OpenSSH_9.2p1");
    CHECK(openssh.max_spare == openssh_max_spare);
    CHECK(openssh.max_window == base.max_window);
    CHECK(openssh.budget == base.budget);
    CHECK(openssh.initial_window == base.initial_window);
    for (const char* other : {"Longhaul_0.1", "OpenSSH_10.2p1_hpn18.8.0", "PuTTY_Release_0.78", ""}) {
        CAPTURE(other);
        CHECK(window_for_peer(base, other).max_spare == 0);
    }
}

TEST_CASE("window_policy: an OpenSSH sender holds little spare credit, and the window still reaches the BDP")
{
    const window_config cfg = window_for_peer(big_config(), "OpenSSH_9.2p1");
    for (std::uint64_t rtt_ms : {10, 50, 100, 200}) {
        for (std::uint64_t mbit : {100, 1000, 5000}) {
            CAPTURE(rtt_ms);
            CAPTURE(mbit);
            window_budget budget(cfg.budget);
            receive_window w(cfg, budget);
            const std::uint64_t rate = mbit * 1'000'000 / 8;
            const std::uint64_t bdp = rate * rtt_ms / 1000;
            path_sim sim(rtt_ms * 1000, rate, bdp + bdp / 4, w);
            int tcp_rtts = 0;
            for (std::uint64_t c = 10 * 1448; c < bdp; c *= 2)
                ++tcp_rtts;
            // Beyond max_spare of credit the growth is additive: max_spare
            // on top of what the last round trip delivered, and what it
            // delivered was sent under the window of the round trip before:
            // max_spare per two round trips. (The price at 5 Gbit/s x 200 ms,
            // 60 round trips; an OpenSSH sender is CPU-bound far below that.)
            const int additive = static_cast<int>(2 * bdp / cfg.max_spare);
            const int reached = sim.rtts_to_reach(std::max<std::uint64_t>(bdp, cfg.initial_window), 100);
            CHECK(reached >= 0);
            // (A measured round trip ends with the first data after one RTT:
            // a little longer than one.)
            CHECK(reached <= (tcp_rtts + additive) * 9 / 8 + 2);
            for (int i = 0; i < 20 * 64; ++i)
                sim.step();
            sim.steps = sim.window_limited_steps = 0;
            for (int i = 0; i < 20 * 64; ++i)
                sim.step();
            // What the sender held unsent never passed the bound by more than
            // a credit step and the rounding of one measured round trip.
            CHECK(sim.max_held <= cfg.max_spare + cfg.max_spare / 4);
            // Once there, the window holds what is in flight and the spare:
            // the network, not the window, is the limit.
            CHECK(w.target() >= bdp);
            CHECK(w.target() <= bdp + bdp / 4 + cfg.max_spare + cfg.max_spare / 4);
            CHECK(sim.window_limited_steps == 0);
            CHECK(budget.used() == w.budget_held());
        }
    }
}

TEST_CASE("window_policy: without the bound, the same sender would hold tens of MiB (the case it exists for)")
{
    // The policy for Longhaul, HPN-SSH and unknown peers: at 1 Gbit/s and
    // 200 ms its slow start leads with about one bandwidth-delay product of
    // spare credit, more than OpenSSH's 16 MiB channel input buffer.
    const window_config cfg = big_config();
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    const std::uint64_t rate = 125'000'000, bdp = rate / 5;
    path_sim sim(200'000, rate, bdp + bdp / 4, w);
    for (int i = 0; i < 30 * 64; ++i)
        sim.step();
    CHECK(sim.max_held > 16u << 20);
    CHECK(w.stats().peak_target >= 2 * bdp);
}

TEST_CASE("window_policy: when an OpenSSH sender's rate drops, the window comes down with it")
{
    const window_config cfg = window_for_peer(big_config(), "OpenSSH_9.2p1");
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    const std::uint64_t rate = 125'000'000, bdp = rate / 10; // 1 Gbit/s, 100 ms
    path_sim sim(100'000, rate, bdp + bdp / 4, w);
    for (int i = 0; i < 20 * 64; ++i)
        sim.step();
    REQUIRE(w.target() >= bdp);
    (void)w.take_change();
    // The path now carries a quarter of that (a loss, a competing flow).
    sim.rate_bytes_per_s = rate / 4;
    sim.cwnd_cap = (bdp + bdp / 4) / 4;
    sim.cwnd = std::min(sim.cwnd, sim.cwnd_cap);
    sim.max_held = 0;
    bool saw_spare_bound = false;
    for (int i = 0; i < 20 * 64; ++i) {
        sim.step();
        if (auto c = w.take_change())
            saw_spare_bound |= c->why == window_change::reason::spare_bound;
    }
    CHECK(saw_spare_bound);
    CHECK(w.target() <= bdp / 4 + cfg.max_spare + cfg.max_spare / 4);
    CHECK(w.target() >= bdp / 4);
    // The credit granted before the drop drains; new credit stays within the bound.
    sim.max_held = 0;
    for (int i = 0; i < 10 * 64; ++i)
        sim.step();
    CHECK(sim.max_held <= cfg.max_spare + cfg.max_spare / 4);
    CHECK(budget.used() == w.budget_held());
}

TEST_CASE("window_policy: a round trip of TCP loss recovery does not take the window away")
{
    // A round trip in which TCP repairs a loss delivers little: the data
    // waits in the receiver's out-of-order queue, still in flight, and the
    // next round trip delivers it all at once. Shrinking the window to that
    // one round trip starved the sender for the round trips after it.
    for (const char* peer : {"OpenSSH_9.2p1", "Longhaul_0.1"}) {
        CAPTURE(peer);
        const window_config cfg = window_for_peer(big_config(), peer);
        window_budget budget(cfg.budget);
        receive_window w(cfg, budget);
        const std::uint64_t rate = 125'000'000, bdp = rate / 10; // 1 Gbit/s, 100 ms
        path_sim sim(100'000, rate, bdp + bdp / 4, w);
        for (int i = 0; i < 20 * 64; ++i)
            sim.step();
        REQUIRE(w.target() >= bdp);
        // One round trip at a twentieth of the rate, then the link again.
        sim.rate_bytes_per_s = rate / 20;
        for (int i = 0; i < 64; ++i)
            sim.step();
        sim.rate_bytes_per_s = rate;
        std::uint32_t smallest = w.target();
        for (int i = 0; i < 4 * 64; ++i) {
            sim.step();
            smallest = std::min(smallest, w.target());
        }
        CHECK(smallest >= bdp);
        CHECK(budget.used() == w.budget_held());
    }
}

TEST_CASE("window_policy: an OpenSSH sender's spare credit is counted over the path's round trip, not a queue's")
{
    // The receiver's TCP estimate includes the queue at the bottleneck
    // (150 ms on a 100 ms path here); credit beyond what the path itself
    // holds only lengthens that queue or waits in the sender's buffer.
    const window_config cfg = window_for_peer(big_config(), "OpenSSH_9.2p1");
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    const std::uint64_t rate = 125'000'000, path_us = 100'000, srtt_us = 150'000;
    const std::uint64_t step_us = 1000, per_step = rate * step_us / 1'000'000;
    std::uint64_t now = 1'000'000, sender_credit = w.credit();
    for (int i = 0; i < 10'000; ++i) { // 10 s; credit goes back at once
        now += step_us;
        const auto n = static_cast<std::uint32_t>(std::min(per_step, sender_credit));
        if (n == 0)
            continue;
        REQUIRE(w.on_receive(n, now));
        sender_credit -= n;
        sender_credit += w.on_consumed(n, now, srtt_us, path_us);
    }
    const std::uint64_t path_bdp = rate * path_us / 1'000'000;
    CHECK(w.target() >= path_bdp);
    CHECK(w.target() <= path_bdp + cfg.max_spare + cfg.max_spare / 4);
    // Without the path's RTT the policy takes the smallest RTT it was given.
    receive_window v(cfg, budget);
    sender_credit = v.credit();
    for (int i = 0; i < 10'000; ++i) {
        now += step_us;
        const std::uint64_t srtt = i < 500 ? path_us : srtt_us; // the queue builds after half a second
        const auto n = static_cast<std::uint32_t>(std::min(per_step, sender_credit));
        if (n == 0)
            continue;
        REQUIRE(v.on_receive(n, now));
        sender_credit -= n;
        sender_credit += v.on_consumed(n, now, srtt);
    }
    CHECK(v.target() <= path_bdp + cfg.max_spare + cfg.max_spare / 4);
}

namespace {

// Feeds `w` a sender that delivers `bytes_per_rtt` in each of `rtts` round
// trips, in 64 even steps, consumed at once; the receiver's RTT estimate is
// `srtt_us` on a path of `path_us`. Returns the largest target seen.
std::uint32_t feed_round_trips(receive_window& w, std::uint64_t& now, std::uint64_t path_us, std::uint64_t srtt_us,
                               std::uint64_t bytes_per_rtt, int rtts)
{
    std::uint32_t largest = w.target();
    for (int i = 0; i < rtts * 64; ++i) {
        now += srtt_us / 64;
        const auto n = static_cast<std::uint32_t>(bytes_per_rtt / 64);
        REQUIRE(w.on_receive(n, now));
        w.on_consumed(n, now, srtt_us, path_us);
        largest = std::max(largest, w.target());
    }
    return largest;
}

} // namespace

TEST_CASE("window_policy: out of slow start the window holds the path and a margin, through loss recovery's bursts")
{
    // 1 Gbit/s, 200 ms: once the link is full, credit beyond the path and a
    // margin only lets TCP overflow the bottleneck's queue. The round trips
    // of loss recovery deliver a trickle, then the held-back data at once
    // (twice the link's rate and more): that burst is not the path's rate.
    const window_config cfg = big_config();
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    const std::uint64_t rate = 125'000'000, bdp = rate / 5;
    path_sim sim(200'000, rate, bdp + bdp / 4, w);
    for (int i = 0; i < 30 * 64; ++i)
        sim.step();
    const std::uint64_t bound = bdp + bdp / 16 + (4u << 20);
    CHECK(w.target() >= bdp);
    CHECK(w.target() <= bound + bound / 16);
    std::uint64_t now = sim.now + 1'000'000; // a fresh start: what the simulation's peer held is gone
    std::uint32_t largest = 0;
    for (int k = 0; k < 5; ++k) {
        largest = std::max(largest, feed_round_trips(w, now, 200'000, 200'000, bdp / 8, 1));
        largest = std::max(largest, feed_round_trips(w, now, 200'000, 200'000, bdp * 15 / 8, 1));
    }
    CHECK(largest <= (bound + bound / 16) * 9 / 8);
    CHECK(w.target() >= bdp);
    CHECK(budget.used() == w.budget_held());
}

TEST_CASE("window_policy: on a path that drops packets at random, the window also covers what waits behind the holes")
{
    // 700 Mbit/s, 50 ms, 1 % loss: every round trip has packets out of
    // order, and delivery alternates a trickle and a burst (what arrived
    // behind a hole waits in the receiving kernel for its retransmission, a
    // round trip and more). That data used credit too: the window must hold
    // the path and half as much again beside it, or the sender is held below the
    // link (0.66 of raw TCP before). Once the loss is over, the bound is
    // the path and the margin again.
    const window_config cfg = big_config();
    const std::uint64_t bdp = 87'500'000 / 20;
    const std::uint64_t path_bound = bdp + bdp / 16 + (4u << 20);
    auto run = [&](int random_loss_round_trips) {
        window_budget budget(cfg.budget);
        receive_window w(cfg, budget);
        std::uint64_t now = 1'000'000;
        for (std::uint64_t per_rtt = 1u << 20; per_rtt < bdp; per_rtt *= 2)
            feed_round_trips(w, now, 50'000, 50'000, per_rtt, 1);
        int round_trip = 0;
        for (int k = 0; k < 20; ++k) {
            for (std::uint64_t part : {bdp / 4, bdp * 7 / 4}) {
                w.set_random_loss(round_trip++ < random_loss_round_trips);
                feed_round_trips(w, now, 50'000, 50'000, part, 1);
            }
        }
        CHECK(budget.used() == w.budget_held());
        return std::uint64_t(w.target());
    };
    CHECK(run(40) >= 2 * bdp + (2u << 20));
    CHECK(run(40) <= (bdp * 5 / 2 + bdp / 16 + (4u << 20)) * 17 / 16);
    CHECK(run(0) <= path_bound + path_bound / 16);
    CHECK(run(20) <= path_bound + path_bound / 16);
}

TEST_CASE("window_policy: an OpenSSH sender on a path that drops packets at random keeps its bound")
{
    // The same lossy path (700 Mbit/s, 50 ms, 1 %) with an OpenSSH sender:
    // the data behind the holes is not added to its bound (the round
    // trip's delivery and the 4 MiB it may hold unsent). Whenever its TCP
    // is in loss recovery the sender holds all credit it has, and its
    // buffer's growth collapsed it at one path beside the bound (0.36-0.38
    // of raw TCP on the emulated link, docs/PERFORMANCE.md).
    const window_config cfg = window_for_peer(big_config(), "OpenSSH_9.2p1");
    const std::uint64_t bdp = 87'500'000 / 20;
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    std::uint64_t now = 1'000'000;
    for (std::uint64_t per_rtt = 1u << 20; per_rtt < bdp; per_rtt *= 2)
        feed_round_trips(w, now, 50'000, 50'000, per_rtt, 1);
    std::uint32_t largest = 0;
    for (int k = 0; k < 20; ++k) {
        for (std::uint64_t part : {bdp / 4, bdp * 7 / 4}) {
            w.set_random_loss(true);
            largest = std::max(largest, feed_round_trips(w, now, 50'000, 50'000, part, 1));
        }
    }
    // The loss round trips' peak delivery (7/4 of the path) and the spare.
    CHECK(largest <= bdp * 7 / 4 + cfg.max_spare + cfg.max_spare / 8);
    CHECK(w.target() >= bdp);
    CHECK(budget.used() == w.budget_held());
}

TEST_CASE("window_policy: a window that fills the path and a queue behind it is not what held the sender back")
{
    // The link is full (a queue stands: the round trip is 260 ms on a 200 ms
    // path) and the window, at its bound, is all in flight: the link, not
    // the window, is the limit, and the window does not grow for it.
    const window_config cfg = big_config();
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    const std::uint64_t rate = 125'000'000, bdp = rate / 5;
    std::uint64_t now = 1'000'000;
    // Slow start, then the link: three flat round trips end it.
    for (std::uint64_t per_rtt = 1u << 20; per_rtt < bdp; per_rtt *= 2)
        feed_round_trips(w, now, 200'000, 200'000, per_rtt, 1);
    feed_round_trips(w, now, 200'000, 200'000, bdp, 4);
    const std::uint64_t before = w.stats().window_limited_us;
    const std::uint32_t largest = feed_round_trips(w, now, 200'000, 260'000, rate * 260 / 1000, 20);
    CHECK(w.stats().window_limited_us == before);
    CHECK(largest <= (bdp + bdp / 16 + (4u << 20)) * 17 / 16);
}

TEST_CASE("window_policy: bulk channels of one connection share the margin, so the one TCP stream stays short")
{
    // Loopback: eight channels moving bulk data through one connection at
    // 300 MB/s together (the path's own round trip 50 us, the socket's 2 ms
    // under load), and sixteen channels of small requests beside them. Every
    // byte of credit is data that can queue in the one TCP stream ahead of
    // a small request: eight windows of path + 4 MiB each (or eight initial
    // windows of 2 MiB) would queue 16-32 MiB, 50-100 ms at this rate.
    // (A longer path keeps the 4 MiB margin: the next test.)
    const window_config cfg = big_config();
    window_budget budget(cfg.budget);
    std::vector<std::unique_ptr<receive_window>> bulk, small;
    for (int i = 0; i < 8; ++i)
        bulk.push_back(std::make_unique<receive_window>(cfg, budget));
    for (int i = 0; i < 16; ++i)
        small.push_back(std::make_unique<receive_window>(cfg, budget));
    const std::uint64_t path_us = 50, srtt_us = 2000, rate = 300'000'000;
    const auto per_step = static_cast<std::uint32_t>(rate / 8 * srtt_us / 64 / 1'000'000);
    std::uint64_t now = 1'000'000;
    std::uint64_t largest_total = 0;
    for (int step = 0; step < 500 * 64; ++step) { // one second
        now += srtt_us / 64;
        for (auto& w : bulk) {
            REQUIRE(w->on_receive(per_step, now));
            w->on_consumed(per_step, now, srtt_us, path_us);
        }
        if (step % 320 == 0) // a 64-byte request on each small channel every 10 ms
            for (auto& w : small) {
                REQUIRE(w->on_receive(64, now));
                w->on_consumed(64, now, srtt_us, path_us);
            }
        if (step >= 250 * 64) { // the second half: past every channel's initial window
            std::uint64_t total = 0;
            for (auto& w : bulk)
                total += std::max<std::uint64_t>(w->target(), std::uint64_t(w->credit()) + w->backlog());
            largest_total = std::max(largest_total, total);
        }
    }
    CHECK(budget.bulk_channels() == 8);
    for (auto& w : small)
        CHECK_FALSE(w->bulk());
    // The eight together: the path (what it holds is tiny here) and one
    // margin, 1 MiB on a path this short, an eighth of slack for the
    // bound's own step.
    CHECK(largest_total <= (1u << 20) + (1u << 20) / 8);
    for (auto& w : bulk)
        CHECK(w->target() >= 4 * cfg.max_packet);

    // The others stop: after a quiet spell the one left holds the whole
    // margin again, and a channel squeezed below its initial window gets
    // that back when it has been idle.
    for (int i = 0; i < 500; ++i) {
        now += srtt_us;
        REQUIRE(bulk[0]->on_receive(per_step * 64, now));
        bulk[0]->on_consumed(per_step * 64, now, srtt_us, path_us);
        if (i % 100 == 0)
            for (auto& w : bulk)
                w->on_tick(now);
    }
    CHECK(budget.bulk_channels() == 1);
    CHECK(bulk[0]->bulk());
    now += receive_window::idle_shrink_us;
    bulk[1]->on_tick(now);
    CHECK(bulk[1]->target() == bulk[1]->initial());
    bulk.clear();
    small.clear();
    CHECK(budget.bulk_channels() == 0);
    CHECK(budget.used() == 0);
}

TEST_CASE("window_policy: on a long path bulk channels share a 4 MiB margin and still fill the path")
{
    // 1 Gbit/s and 100 ms shared by four bulk channels: each holds its
    // share of the path and a quarter of the 4 MiB margin, together the
    // path and one margin, and none is below its share of the path.
    const window_config cfg = big_config();
    window_budget budget(cfg.budget);
    std::vector<std::unique_ptr<receive_window>> ws;
    for (int i = 0; i < 4; ++i)
        ws.push_back(std::make_unique<receive_window>(cfg, budget));
    const std::uint64_t rtt_us = 100'000, rate = 125'000'000, bdp = rate / 10;
    std::uint64_t now = 1'000'000;
    // Slow start to the link's rate, then flat round trips.
    // (Each channel's round trip in turn over the same span of time.)
    const auto round_trip = [&](std::uint64_t srtt_us, std::uint64_t per_rtt) {
        const std::uint64_t start = now;
        for (auto& w : ws) {
            now = start;
            feed_round_trips(*w, now, rtt_us, srtt_us, per_rtt, 1);
        }
    };
    for (std::uint64_t per_rtt = 1u << 19; per_rtt < bdp / 4; per_rtt *= 2)
        round_trip(rtt_us, per_rtt);
    for (int r = 0; r < 12; ++r)
        round_trip(rtt_us + 5000, bdp / 4);
    std::uint64_t total = 0;
    for (auto& w : ws) {
        CHECK(w->target() >= bdp / 4);
        total += w->target();
    }
    CHECK(budget.bulk_channels() == 4);
    CHECK(total <= (bdp + bdp / 16 + (4u << 20)) * 17 / 16);
}

TEST_CASE("window_policy: channels open with 128 KiB on a path under a millisecond, 2 MiB elsewhere")
{
    const window_config cfg;
    CHECK(opening_window(cfg, 0) == cfg.initial_window); // not known yet
    CHECK(opening_window(cfg, 50) == short_path_initial_window);
    CHECK(opening_window(cfg, short_path_us - 1) == short_path_initial_window);
    CHECK(opening_window(cfg, short_path_us) == cfg.initial_window);
    CHECK(opening_window(cfg, 100'000) == cfg.initial_window);
    window_config small = cfg;
    small.initial_window = 64 * 1024; // ChannelWindowMax below it
    CHECK(opening_window(small, 50) == 64 * 1024);

    // Eight bulk channels opened at once on loopback hold 1 MiB of credit
    // before any adjust, not 16 MiB.
    window_budget budget(cfg.budget);
    std::vector<std::unique_ptr<receive_window>> ws;
    std::uint64_t credit = 0;
    for (int i = 0; i < 8; ++i) {
        ws.push_back(std::make_unique<receive_window>(cfg, budget, opening_window(cfg, 50)));
        credit += ws.back()->credit();
        CHECK(ws.back()->initial() == short_path_initial_window);
    }
    CHECK(credit == 8 * short_path_initial_window);
    CHECK(budget.used() == 8 * short_path_initial_window);
}

TEST_CASE("window_policy: a lone channel opened with 128 KiB on a fast LAN fills it within a few round trips")
{
    // 10 Gbit/s, 500 us: a path of 625 KB, more than the window it opens
    // with (which would carry a fifth of the link). Window-limited at once, it
    // grows 4x per round trip; after 20 round trips (10 ms) it is behind a
    // channel opened with 2 MiB by at most what the link carries in three
    // round trips (1.5 ms, once per channel).
    const window_config cfg = big_config();
    const std::uint64_t rtt = 500, rate = 1'250'000'000;
    window_budget b1(cfg.budget), b2(cfg.budget);
    receive_window lan(cfg, b1, opening_window(cfg, rtt));
    receive_window wide(cfg, b2);
    REQUIRE(lan.initial() == short_path_initial_window);
    path_sim a(rtt, rate, 64u << 20, lan), b(rtt, rate, 64u << 20, wide);
    // The connection's TCP is past its slow start (the channel is not its
    // first): only the SSH window holds the sender back.
    a.cwnd = b.cwnd = 64u << 20;
    for (int i = 0; i < 20 * 64; ++i) {
        a.step();
        b.step();
    }
    CHECK(lan.target() > short_path_initial_window);
    CHECK(b.delivered - std::min(a.delivered, b.delivered) <= 3 * rate * rtt / 1'000'000);
    // And from then on it keeps the link full.
    const std::uint64_t before = a.delivered, before_b = b.delivered;
    for (int i = 0; i < 100 * 64; ++i) {
        a.step();
        b.step();
    }
    const std::uint64_t link = rate * (100 * 64 * (rtt / 64)) / 1'000'000; // the simulation's steps are whole microseconds
    CHECK((a.delivered - before) * 100 >= link * 99);
    CHECK(a.delivered - before == b.delivered - before_b);
}
