// The SSH connection protocol (RFC 4254) as a sans-I/O core on top of the
// transport core: the channel table, open/confirm/failure, data and
// extended data with window accounting, EOF/CLOSE half-close states,
// channel and global requests with in-order replies.
//
// The program hands it every payload with a message number in 80..127 and
// gets at most one event back per message. Data events point into the
// transport's buffer (no copy); the program writes them to their sink and
// reports what the sink actually took with consumed(), which is what
// returns window credit to the peer: a slow sink pushes back on the sender.
//
// Sending data is zero-copy too: prepare_data() returns space inside the next
// packet (a read() from a socket or pipe can land there directly) and
// commit_data() frames, encrypts and queues it.
#pragma once

#include "channel/messages.hpp"
#include "channel/rtt_probe.hpp"
#include "channel/send_limit.hpp"
#include "channel/window_policy.hpp"
#include "common/transport/transport.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

using channel_id = std::uint32_t;

// Limits on what a peer can make this side hold (bounded memory): the
// window budget caps credit granted plus data buffered over all channels
// (window_policy.hpp); these cap the bookkeeping around it.
struct connection_config {
    window_config window;
    std::size_t max_channels = 8192;
    // want_reply requests of the peer not yet answered by the program, per
    // channel and for global requests; one more is a protocol error.
    std::uint32_t max_requests_owed = 256;
    // Inactivity timeouts (sshd's ChannelTimeout): a new channel's timeout
    // by its type, asked once as the channel is made, whichever side opens
    // it (OpenSSH's channel_new); unset, or zero: none. set_idle_timeout()
    // changes it later.
    std::function<std::chrono::milliseconds(std::string_view type)> idle_timeout_for;
};

enum class connection_event_type {
    none,
    open_request,   // the peer opens a channel: name = type, data = type-specific; accept() or reject()
    open_confirmed, // our open() succeeded: data = type-specific
    open_failed,    // our open() was refused: code = reason, text = description; the id is released
    data,           // data (code 0) or extended data (code = type, 1 = stderr)
    eof,            // the peer will send no more data
    close,          // the peer closed; once both sides have, the id is released
    request,        // channel request: name, want_reply, data; reply() if want_reply
    request_reply,  // reply to our want_reply channel request (success)
    global_request, // name, want_reply, data; reply_global() if want_reply
    global_reply,   // reply to our want_reply global request (success, data)
    window_opened,  // the peer granted window: more data may be sent
};

struct connection_event {
    connection_event_type type = connection_event_type::none;
    channel_id channel = 0;
    std::string_view name;
    byte_span data;
    std::uint32_t code = 0;
    std::string_view text;
    bool want_reply = false;
    bool success = false;
};

struct channel_info {
    std::string type;
    std::uint32_t remote_id = 0;
    bool open = false; // confirmed both ways
    bool eof_sent = false, eof_received = false;
    bool close_sent = false, close_received = false;
    std::uint64_t remote_window = 0;
    std::uint32_t remote_max_packet = 0;
    std::uint64_t bytes_in = 0, bytes_out = 0;
};

// What a channel did, for the connection summary when it is released.
struct channel_summary {
    channel_id id = 0;
    std::string type;
    std::uint64_t bytes_in = 0, bytes_out = 0;
    std::uint64_t lifetime_us = 0;
    window_stats receive;             // the window we granted (receive side)
    std::uint64_t send_blocked_us = 0; // time our data waited for the peer's window
    std::uint64_t rtt_us = 0;          // the estimate in use at the end
    std::uint64_t transport_rtt_us = 0, probe_rtt_us = 0, probe_min_rtt_us = 0;
};

class connection {
public:
    connection(transport& t, connection_config cfg = {});
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    // One connection-protocol message (80..127) from the transport. Protocol
    // violations disconnect the transport with a reason and return none.
    connection_event handle(byte_span payload, steady_time now);

    // --- channels ---
    result<channel_id> open(std::string_view type, byte_span type_specific = {});
    void accept(channel_id id, byte_span type_specific = {});
    void reject(channel_id id, open_failure_reason reason, std::string_view description);

    // Bytes that may be sent now (peer window and packet size).
    std::size_t send_capacity(channel_id id) const noexcept;
    // Space for up to min(max, send_capacity()) bytes inside the next packet.
    mutable_byte_span prepare_data(channel_id id, std::size_t max, std::uint32_t extended = 0);
    result<void> commit_data(channel_id id, std::size_t n);
    // Copying form: sends all of `data` (split into packets); it must fit the window.
    result<void> send_data(channel_id id, byte_span data, std::uint32_t extended = 0);

    void send_request(channel_id id, std::string_view type, bool want_reply, byte_span data = {});
    // Answers the peer's oldest unanswered want_reply request on the channel.
    void reply(channel_id id, bool success);
    void send_eof(channel_id id);
    void close(channel_id id);
    // The sink took n bytes of the channel's data: returns window credit.
    void consumed(channel_id id, std::size_t n, steady_time now);

    // --- global requests ---
    void send_global_request(std::string_view name, bool want_reply, byte_span data = {});
    void reply_global(bool success, byte_span data = {});

    // --- measurements and time ---
    // The transport connection's round-trip time from TCP_INFO (0: not a TCP
    // socket). Without it the core measures the RTT itself with
    // keepalive@openssh.com requests (rtt_probe); window growth needs one.
    // `min_rtt`: TCP's smallest RTT (0: not known), the path without queues.
    // `out_of_order`: the socket's count of packets received out of order
    // (TCP_INFO's tcpi_rcv_ooopack; 0: not known). Samples (one per runner
    // period) that keep adding to it for random_loss_samples() in a row
    // mean a path that drops packets at random, not one slow start's
    // overshoot: receive_window::set_random_loss.
    void set_rtt(std::chrono::microseconds rtt, std::chrono::microseconds min_rtt = {},
                 std::uint64_t out_of_order = 0) noexcept
    {
        transport_rtt_us_ = static_cast<std::uint64_t>(rtt.count());
        transport_min_rtt_us_ = static_cast<std::uint64_t>(min_rtt.count());
        reordering_samples_ = out_of_order > transport_out_of_order_ ? reordering_samples_ + 1 : 0;
        transport_out_of_order_ = out_of_order;
    }
    // The runner samples TCP_INFO and ticks the core once per period.
    static constexpr std::uint64_t sample_period_us = 200'000;
    // n samples in a row put at least n - 2 whole periods between the first
    // growth of the count and the last; that span must outlast a slow
    // start's overshoot, whose recovery takes one to three round trips. So
    // 5 samples (1 s) at 200 ms, 4 at 100 ms, 3 (600 ms) at 50 ms and below:
    // a fixed 5 spent a second of a short path at the bound without the
    // holes' allowance (issue 9's loss cell).
    static constexpr int random_loss_samples(std::uint64_t rtt_us) noexcept
    {
        const std::uint64_t periods = (3 * rtt_us + sample_period_us - 1) / sample_period_us;
        return 2 + static_cast<int>(std::clamp<std::uint64_t>(periods, 1, 8));
    }
    // The estimate the window policy uses: TCP's when known, else the probes'.
    // The SSH peer can be further away than the TCP peer: the inner
    // connection of a jump host reaches sshd over the hop's socket beside it
    // (TCP sees microseconds, the client is 100 ms away), and the window must
    // cover the whole way its adjusts travel. So a probe round trip well
    // above TCP's (more than twice it plus relay_margin_us) wins, when TCP's
    // is that of a hop nearby (below relay_max_transport_us). The margin
    // covers what a bulk sender has queued ahead of a probe's answer (its
    // socket buffer: 14-16 ms from Debian's sshd on a 0.2 ms link); below
    // it a relay's extra round trip is worth less than the initial window.
    // The cap: on a long direct path a probe answered behind a bulk
    // sender's queues reads long too (505 ms against TCP's 201 ms, an scp
    // upload's slow start at 200 ms); taken for a relay it made the window
    // think a queue stood and leave slow start at once (a ramp of 4 MiB per
    // half second). A relay whose first hop is that far gets TCP's round
    // trip, and a window-limited channel grows past it anyway.
    static constexpr std::uint64_t relay_margin_us = 20'000;
    static constexpr std::uint64_t relay_max_transport_us = 10'000;
    // With TCP's estimate in hand the first probe waits this long after the
    // first tick: right after authentication the peer may still be setting
    // itself up (OpenSSH's privilege-separated child takes the connection
    // over) and answered the first probe after 57 ms on a 0.2 ms link,
    // which read as a relay.
    static constexpr std::uint64_t first_cross_check_delay_us = 1'000'000;
    std::uint64_t rtt_us() const noexcept
    {
        const std::uint64_t probe = probe_.estimate_us();
        if (transport_rtt_us_ == 0)
            return probe;
        const bool relay = transport_rtt_us_ < relay_max_transport_us && probe > 2 * transport_rtt_us_ + relay_margin_us;
        return relay ? probe : transport_rtt_us_;
    }
    // The path's round trip without queues: TCP's minimum when TCP's
    // estimate is the one in use (0 while TCP has none), else the probes'
    // estimate itself, which is already their minimum. (Not 0 there: the
    // policy would keep the smallest estimate it was ever given, TCP's
    // microseconds to the hop from before the switch, and read the relay's
    // whole round trip as a standing queue.)
    std::uint64_t path_rtt_us() const noexcept
    {
        const std::uint64_t rtt = rtt_us();
        if (rtt != transport_rtt_us_)
            return rtt;
        return transport_min_rtt_us_ != 0 ? std::min(transport_min_rtt_us_, rtt) : 0;
    }
    const rtt_probe& probe() const noexcept { return probe_; }
    // Periodic (a few times a second): idle windows shrink, RTT probes go out.
    void tick(steady_time now);

    // --- inactivity (sshd's ChannelTimeout) ---
    // A channel whose timeout is not zero and that carries no data either
    // way for that long is reported by idle_expired(). Set again (a session
    // named by its shell, exec or subsystem request), the channel keeps the
    // time of its last data, as OpenSSH's channel_set_xtype() does.
    void set_idle_timeout(channel_id id, std::chrono::milliseconds timeout);
    std::chrono::milliseconds idle_timeout(channel_id id) const;
    // The open channels idle past their timeout at `now`, each reported
    // once; the program closes them as it closes that kind of channel. The
    // core sees data as it is framed and as it arrives, so a call notes
    // whether any moved since the previous one: called periodically (the
    // runner's tick), a channel is reported between its timeout and its
    // timeout plus two periods after its last data (or after it opened),
    // never before.
    std::vector<channel_id> idle_expired(steady_time now);

    // Reports for -v lines and the connection summary (optional).
    std::function<void(channel_id, const window_change&)> on_window_change;
    std::function<void(const channel_summary&)> on_channel_released;
    // Each RTT probe answered: the sample, and TCP's estimate at the time (0: none).
    std::function<void(std::uint64_t probe_us, std::uint64_t transport_us)> on_rtt_sample;

    // The connection is over (closed or cut off): reports each channel still
    // open through on_channel_released, as if it had closed, so a transfer
    // cut short still leaves its summary. The channels stay allocated.
    void report_open_channels() const;
    // The summary of every channel that exists now, in id order (ssh's ~#).
    std::vector<channel_summary> open_channels() const;

    // --- state ---
    bool exists(channel_id id) const noexcept;
    const channel_info& info(channel_id id) const;
    std::size_t channel_count() const noexcept { return live_; }
    // The peer's want_reply global requests the program has not answered yet.
    std::uint32_t global_replies_owed() const noexcept { return global_replies_owed_; }
    const receive_window& window(channel_id id) const;
    // Time our data on the channel has waited for the peer's window so far.
    std::uint64_t send_blocked_us(channel_id id) const;
    const window_budget& budget() const noexcept { return budget_; }
    // The limits in force; the window's follow the peer's kind of sender
    // once the first channel exists (window_for_peer).
    const connection_config& config() const noexcept { return cfg_; }
    transport& core() noexcept { return transport_; }

private:
    struct channel;
    channel* find(channel_id id) const noexcept;
    channel* peer_channel(std::uint32_t id, std::string_view what);
    result<channel_id> allocate(std::string_view type);
    void release(channel_id id);
    channel_summary summary_of(channel_id id, const channel& c) const;
    void protocol_error(std::string message);
    void send_message(const bytes& m);
    void report_window_change(channel_id id, receive_window& rx);
    void maybe_probe(std::uint64_t now_us);

    connection_event on_open(byte_span payload);
    connection_event on_open_confirmation(byte_span payload);
    connection_event on_open_failure(byte_span payload);
    connection_event on_window_adjust(byte_span payload, steady_time now);
    connection_event on_data(byte_span payload, bool extended, steady_time now);
    connection_event on_eof_or_close(byte_span payload, bool is_close);
    connection_event on_request(byte_span payload);
    connection_event on_request_reply(byte_span payload, bool success);
    connection_event on_global_request(byte_span payload);
    connection_event on_global_reply(byte_span payload, bool success);

    transport& transport_;
    connection_config cfg_;
    window_budget budget_;
    std::vector<std::unique_ptr<channel>> channels_;
    std::size_t live_ = 0;
    // Our want_reply global requests awaiting the peer, in order: true for
    // the core's own RTT probes, whose answers are not reported.
    std::deque<bool> global_replies_pending_;
    std::uint32_t global_replies_owed_ = 0;    // the peer's awaiting us
    std::uint64_t transport_rtt_us_ = 0;
    std::uint64_t transport_min_rtt_us_ = 0;
    std::uint64_t transport_out_of_order_ = 0;
    int reordering_samples_ = 0; // set_rtt samples in a row with more packets out of order
    std::uint64_t first_tick_us_ = 0;
    rtt_probe probe_;
    std::uint64_t now_us_ = 0;                 // the latest time the core was given
    bool idle_timeouts_ = false;               // some channel was given an inactivity timeout
    bool data_since_tick_ = false;             // channel data moved since the last tick
    bool peer_sender_known_ = false;           // cfg_.window adjusted to the peer's software
    bool peer_window_fixed_ = false;           // the peer's windows are fixed (send_limit applies)
    mutable_byte_span pending_room_;           // the prepared data packet, header included
    std::size_t pending_header_ = 0;
    channel_id pending_channel_ = 0;
    std::string text_;                         // storage for event text
};

} // namespace longhaul
