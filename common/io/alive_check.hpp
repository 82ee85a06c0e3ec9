// ServerAliveInterval / ClientAliveInterval as OpenSSH counts them, as a
// pure function of the clock (no timers, no I/O; the caller arms its timer
// for the deadline returned).
//
// A probe goes out `interval` after the last input from the peer, and one
// more every `interval` while nothing comes back; the expiry that finds
// `count_max` probes unanswered ends the connection. So a peer that falls
// silent is given up (count_max + 1) x interval after its last byte, as
// ssh_config(5) and sshd_config(5) describe ("approximately 45 seconds"
// for 15 x 3) -- neither earlier (a busy link that is still delivering
// never counts) nor an interval later (counting from a fixed tick instead
// of from the last input would add up to one).
#pragma once

#include <chrono>

namespace longhaul {

class alive_check {
public:
    using clock = std::chrono::steady_clock;

    enum class action {
        wait,    // heard from the peer within the interval: nothing to send
        probe,   // send a keepalive that wants a reply
        give_up, // count_max probes went unanswered: end the connection
    };
    struct step {
        action what;
        clock::time_point next; // when to call again (wait, probe)
    };

    alive_check(std::chrono::seconds interval, int count_max) : interval_(interval), count_max_(count_max) {}

    // Called when the timer expires. last_input: when the peer's bytes last
    // arrived (the connection's start before any).
    step on_timer(clock::time_point last_input, clock::time_point now);

    int unanswered() const { return unanswered_; }

private:
    std::chrono::seconds interval_;
    int count_max_;
    int unanswered_ = 0;
    clock::time_point last_seen_{};
};

} // namespace longhaul
