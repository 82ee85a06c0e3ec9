#include "channel/connection.hpp"
#include "channel/connection_channel.hpp"

#include "common/text.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <cstring>

namespace longhaul {

namespace {

using connection_detail::micros;

// The most this side will ever advertise (DESIGN: at most 2^31 - 1).
constexpr std::uint32_t max_advertised_window = 0x7fffffffu;

} // namespace

connection::connection(transport& t, connection_config cfg)
    : transport_(t), cfg_(cfg), budget_(cfg.window.budget)
{
    cfg_.window.initial_window = std::min(cfg_.window.initial_window, max_advertised_window);
    cfg_.window.max_window = std::clamp(cfg_.window.max_window, cfg_.window.initial_window, max_advertised_window);
}

connection::~connection() = default;

connection::channel* connection::find(channel_id id) const noexcept
{
    return id < channels_.size() ? channels_[id].get() : nullptr;
}

bool connection::exists(channel_id id) const noexcept { return find(id) != nullptr; }

const channel_info& connection::info(channel_id id) const { return find(id)->info; }
const receive_window& connection::window(channel_id id) const { return find(id)->rx; }
std::uint64_t connection::send_blocked_us(channel_id id) const { return find(id)->send_blocked_us; }

result<channel_id> connection::allocate(std::string_view type)
{
    // Every channel's window comes out of the connection's budget: with too
    // little left for even a small window, no new channel.
    if (live_ >= cfg_.max_channels || budget_.available() < min_initial_window(cfg_.window))
        return errc::too_large;
    if (!peer_sender_known_) {
        // Channels open only after authentication, so the peer's
        // identification is known by now: the window policy takes its kind
        // of sender into account (window_for_peer) from the first channel.
        const std::string& software = transport_.peer_identification().software;
        if (!software.empty()) {
            cfg_.window = window_for_peer(cfg_.window, software);
            peer_window_fixed_ = classify_sender(software) == peer_sender::openssh;
            peer_sender_known_ = true;
        }
    }
    channel_id id = 0;
    while (id < channels_.size() && channels_[id])
        ++id;
    if (id == channels_.size())
        channels_.emplace_back();
    channels_[id] = std::make_unique<channel>(cfg_.window, budget_, opening_window(cfg_.window, path_rtt_us()));
    channels_[id]->info.type = std::string(type);
    channels_[id]->created_us = now_us_;
    ++live_;
    if (cfg_.idle_timeout_for)
        set_idle_timeout(id, cfg_.idle_timeout_for(type));
    return id;
}

channel_summary connection::summary_of(channel_id id, const channel& c) const
{
    channel_summary s;
    s.id = id;
    s.type = c.info.type;
    s.bytes_in = c.info.bytes_in;
    s.bytes_out = c.info.bytes_out;
    s.lifetime_us = now_us_ > c.created_us ? now_us_ - c.created_us : 0;
    s.receive = c.rx.stats();
    s.send_blocked_us = c.send_blocked_us;
    s.rtt_us = rtt_us();
    s.transport_rtt_us = transport_rtt_us_;
    s.probe_rtt_us = probe_.srtt_us();
    s.probe_min_rtt_us = probe_.min_us();
    return s;
}

void connection::report_open_channels() const
{
    if (!on_channel_released)
        return;
    for (const auto& s : open_channels())
        on_channel_released(s);
}

std::vector<channel_summary> connection::open_channels() const
{
    std::vector<channel_summary> out;
    for (channel_id id = 0; id < channels_.size(); ++id)
        if (channels_[id])
            out.push_back(summary_of(id, *channels_[id]));
    return out;
}

void connection::release(channel_id id)
{
    channel* c = find(id);
    if (c == nullptr)
        return;
    if (on_channel_released)
        on_channel_released(summary_of(id, *c));
    channels_[id].reset();
    --live_;
    while (!channels_.empty() && !channels_.back())
        channels_.pop_back();
}

void connection::protocol_error(std::string message)
{
    transport_.disconnect(disconnect_reason::protocol_error, message);
}

void connection::send_message(const bytes& m) { (void)transport_.send(m); }

connection::channel* connection::peer_channel(std::uint32_t id, std::string_view what)
{
    channel* c = find(id);
    if (c == nullptr || c->awaiting_accept || c->info.close_received) {
        protocol_error(std::string(what) + " for nonexistent channel " + std::to_string(id));
        return nullptr;
    }
    return c;
}

// ---------------------------------------------------------------- inbound

connection_event connection::handle(byte_span payload, steady_time now)
{
    if (payload.empty())
        return {};
    now_us_ = std::max(now_us_, micros(now));
    switch (payload[0]) {
    case msg::channel_data: return on_data(payload, false, now);
    case msg::channel_extended_data: return on_data(payload, true, now);
    case msg::channel_window_adjust: return on_window_adjust(payload, now);
    case msg::channel_open: return on_open(payload);
    case msg::channel_open_confirmation: return on_open_confirmation(payload);
    case msg::channel_open_failure: return on_open_failure(payload);
    case msg::channel_eof: return on_eof_or_close(payload, false);
    case msg::channel_close: return on_eof_or_close(payload, true);
    case msg::channel_request: return on_request(payload);
    case msg::channel_success: return on_request_reply(payload, true);
    case msg::channel_failure: return on_request_reply(payload, false);
    case msg::global_request: return on_global_request(payload);
    case msg::request_success: return on_global_reply(payload, true);
    case msg::request_failure: return on_global_reply(payload, false);
    default: break;
    }
    return {};
}

connection_event connection::on_open(byte_span payload)
{
    wire_reader r(payload.subspan(1));
    auto type = r.text(256);
    const std::uint32_t sender = r.u32();
    const std::uint32_t window = r.u32();
    const std::uint32_t max_packet = r.u32();
    auto extra = r.rest();
    if (!r.ok()) {
        protocol_error("malformed SSH_MSG_CHANNEL_OPEN");
        return {};
    }
    auto id = allocate(type);
    if (!id) {
        bytes m;
        wire_writer(m).u8(msg::channel_open_failure).u32(sender)
            .u32(static_cast<std::uint32_t>(open_failure_reason::resource_shortage)).string("too many channels").string("");
        send_message(m);
        return {};
    }
    channel* c = find(*id);
    c->awaiting_accept = true;
    c->info.remote_id = sender;
    c->info.remote_window = window;
    c->peer_opened = window;
    c->info.remote_max_packet = max_packet;
    return {.type = connection_event_type::open_request, .channel = *id, .name = c->info.type, .data = extra};
}

void connection::accept(channel_id id, byte_span type_specific)
{
    channel* c = find(id);
    if (c == nullptr || !c->awaiting_accept)
        return;
    c->awaiting_accept = false;
    c->local_open = true;
    c->info.open = true;
    bytes m;
    wire_writer(m).u8(msg::channel_open_confirmation).u32(c->info.remote_id).u32(id).u32(c->rx.initial())
        .u32(cfg_.window.max_packet).raw(type_specific);
    send_message(m);
}

void connection::reject(channel_id id, open_failure_reason reason, std::string_view description)
{
    channel* c = find(id);
    if (c == nullptr || !c->awaiting_accept)
        return;
    bytes m;
    wire_writer(m).u8(msg::channel_open_failure).u32(c->info.remote_id).u32(static_cast<std::uint32_t>(reason))
        .string(description).string("");
    send_message(m);
    release(id);
}

connection_event connection::on_open_confirmation(byte_span payload)
{
    wire_reader r(payload.subspan(1));
    const std::uint32_t recipient = r.u32();
    const std::uint32_t sender = r.u32();
    const std::uint32_t window = r.u32();
    const std::uint32_t max_packet = r.u32();
    auto extra = r.rest();
    if (!r.ok()) {
        protocol_error("malformed SSH_MSG_CHANNEL_OPEN_CONFIRMATION");
        return {};
    }
    channel* c = find(recipient);
    if (c == nullptr || c->info.open || c->awaiting_accept) {
        protocol_error("open confirmation for non-opening channel " + std::to_string(recipient));
        return {};
    }
    c->info.open = true;
    c->info.remote_id = sender;
    c->info.remote_window = window;
    c->peer_opened = window;
    c->info.remote_max_packet = max_packet;
    if (c->info.close_sent) {
        // Closed by the program before the peer confirmed: close it now.
        bytes m;
        wire_writer(m).u8(msg::channel_close).u32(sender);
        send_message(m);
        return {};
    }
    return {.type = connection_event_type::open_confirmed, .channel = recipient, .data = extra};
}

connection_event connection::on_open_failure(byte_span payload)
{
    wire_reader r(payload.subspan(1));
    const std::uint32_t recipient = r.u32();
    const std::uint32_t reason = r.u32();
    auto description = r.text(4096);
    if (!r.ok()) {
        protocol_error("malformed SSH_MSG_CHANNEL_OPEN_FAILURE");
        return {};
    }
    channel* c = find(recipient);
    if (c == nullptr || c->info.open || c->awaiting_accept) {
        protocol_error("open failure for non-opening channel " + std::to_string(recipient));
        return {};
    }
    text_ = printable(description);
    release(recipient);
    return {.type = connection_event_type::open_failed, .channel = recipient, .code = reason, .text = text_};
}

connection_event connection::on_window_adjust(byte_span payload, steady_time now)
{
    wire_reader r(payload.subspan(1));
    const std::uint32_t recipient = r.u32();
    const std::uint32_t add = r.u32();
    if (!r.finish()) {
        protocol_error("malformed SSH_MSG_CHANNEL_WINDOW_ADJUST");
        return {};
    }
    channel* c = peer_channel(recipient, "window adjust");
    if (c == nullptr)
        return {};
    // A window is a uint32: a peer that pushes it past 2^32 - 1 is broken.
    if (c->info.remote_window + add > 0xffffffffull) {
        protocol_error("channel " + std::to_string(recipient) + ": adjust " + std::to_string(add) +
                       " overflows remote window " + std::to_string(c->info.remote_window));
        return {};
    }
    if (c->window_empty_since_us != 0 && add > 0) {
        // Our data waited this long for the peer's window: the sender's
        // ground truth of "window-limited".
        const std::uint64_t t = micros(now);
        c->send_blocked_us += t > c->window_empty_since_us ? t - c->window_empty_since_us : 0;
        c->window_empty_since_us = 0;
    }
    c->info.remote_window += add;
    c->send.on_return(add, micros(now));
    return {.type = connection_event_type::window_opened, .channel = recipient};
}

connection_event connection::on_data(byte_span payload, bool extended, steady_time now)
{
    wire_reader r(payload.subspan(1));
    const std::uint32_t recipient = r.u32();
    const std::uint32_t code = extended ? r.u32() : 0;
    auto data = r.string(max_payload_size);
    if (!r.finish()) {
        protocol_error(extended ? "malformed SSH_MSG_CHANNEL_EXTENDED_DATA" : "malformed SSH_MSG_CHANNEL_DATA");
        return {};
    }
    channel* c = peer_channel(recipient, "data");
    if (c == nullptr)
        return {};
    if (!c->info.open || c->info.eof_received) {
        protocol_error("channel " + std::to_string(recipient) + ": data " +
                       (c->info.open ? "after EOF" : "before the channel was confirmed"));
        return {};
    }
    if (!c->rx.on_receive(static_cast<std::uint32_t>(data.size()), micros(now))) {
        protocol_error("channel " + std::to_string(recipient) + ": peer ignored channel window");
        return {};
    }
    c->info.bytes_in += data.size();
    data_since_tick_ = true;
    if (extended && code != extended_data_stderr) {
        // Unknown extended data types are discarded (RFC 4254 §5.2). They
        // used the peer's credit, and no credit comes back for them until
        // the sink takes real data: junk cannot keep the window turning.
        c->rx.on_discarded(static_cast<std::uint32_t>(data.size()));
        return {};
    }
    return {.type = connection_event_type::data, .channel = recipient, .data = data, .code = code};
}

connection_event connection::on_eof_or_close(byte_span payload, bool is_close)
{
    wire_reader r(payload.subspan(1));
    const std::uint32_t recipient = r.u32();
    if (!r.finish()) {
        protocol_error(is_close ? "malformed SSH_MSG_CHANNEL_CLOSE" : "malformed SSH_MSG_CHANNEL_EOF");
        return {};
    }
    channel* c = peer_channel(recipient, is_close ? "close" : "eof");
    if (c == nullptr)
        return {};
    if (!is_close) {
        c->info.eof_received = true;
        return {.type = connection_event_type::eof, .channel = recipient};
    }
    c->info.close_received = true;
    c->info.eof_received = true;
    if (c->info.close_sent)
        release(recipient);
    return {.type = connection_event_type::close, .channel = recipient};
}

connection_event connection::on_request(byte_span payload)
{
    wire_reader r(payload.subspan(1));
    const std::uint32_t recipient = r.u32();
    auto name = r.text(256);
    const bool want_reply = r.boolean();
    auto data = r.rest();
    if (!r.ok()) {
        protocol_error("malformed SSH_MSG_CHANNEL_REQUEST");
        return {};
    }
    channel* c = peer_channel(recipient, "request");
    if (c == nullptr)
        return {};
    if (want_reply && c->replies_owed >= cfg_.max_requests_owed) {
        protocol_error("channel " + std::to_string(recipient) + ": too many requests awaiting a reply");
        return {};
    }
    if (want_reply)
        ++c->replies_owed;
    return {.type = connection_event_type::request, .channel = recipient, .name = name, .data = data,
            .want_reply = want_reply};
}

connection_event connection::on_request_reply(byte_span payload, bool success)
{
    wire_reader r(payload.subspan(1));
    const std::uint32_t recipient = r.u32();
    if (!r.finish()) {
        protocol_error("malformed channel request reply");
        return {};
    }
    channel* c = peer_channel(recipient, "request reply");
    if (c == nullptr)
        return {};
    if (c->replies_pending == 0) {
        protocol_error("channel " + std::to_string(recipient) + ": unexpected request reply");
        return {};
    }
    --c->replies_pending;
    return {.type = connection_event_type::request_reply, .channel = recipient, .success = success};
}

connection_event connection::on_global_request(byte_span payload)
{
    wire_reader r(payload.subspan(1));
    auto name = r.text(256);
    const bool want_reply = r.boolean();
    auto data = r.rest();
    if (!r.ok()) {
        protocol_error("malformed SSH_MSG_GLOBAL_REQUEST");
        return {};
    }
    if (want_reply && global_replies_owed_ >= cfg_.max_requests_owed) {
        protocol_error("too many global requests awaiting a reply");
        return {};
    }
    if (want_reply)
        ++global_replies_owed_;
    return {.type = connection_event_type::global_request, .name = name, .data = data, .want_reply = want_reply};
}

connection_event connection::on_global_reply(byte_span payload, bool success)
{
    if (global_replies_pending_.empty()) {
        protocol_error("unexpected global request reply");
        return {};
    }
    const bool probe = global_replies_pending_.front();
    global_replies_pending_.pop_front();
    if (probe) {
        const std::uint64_t sent = probe_.sent_at();
        probe_.answered(now_us_);
        if (on_rtt_sample)
            on_rtt_sample(now_us_ > sent ? now_us_ - sent : 0, transport_rtt_us_);
        return {};
    }
    return {.type = connection_event_type::global_reply, .data = payload.subspan(1), .success = success};
}

// ---------------------------------------------------------------- outbound

void connection::consumed(channel_id id, std::size_t n, steady_time now)
{
    channel* c = find(id);
    if (c == nullptr || n == 0)
        return;
    now_us_ = std::max(now_us_, micros(now));
    c->rx.set_random_loss(reordering_samples_ >= random_loss_samples(rtt_us()));
    const std::uint32_t credit = c->rx.on_consumed(static_cast<std::uint32_t>(std::min<std::size_t>(n, 0xffffffffu)),
                                                   micros(now), rtt_us(), path_rtt_us());
    report_window_change(id, c->rx);
    if (credit == 0 || c->info.close_sent || c->info.close_received || c->info.eof_received)
        return;
    bytes m;
    wire_writer(m).u8(msg::channel_window_adjust).u32(c->info.remote_id).u32(credit);
    send_message(m);
}

void connection::tick(steady_time now)
{
    const std::uint64_t us = micros(now);
    now_us_ = std::max(now_us_, us);
    for (channel_id id = 0; id < channels_.size(); ++id) {
        if (auto& c = channels_[id]) {
            c->rx.on_tick(us);
            report_window_change(id, c->rx);
        }
    }
    maybe_probe(us);
}

void connection::set_idle_timeout(channel_id id, std::chrono::milliseconds timeout)
{
    channel* c = find(id);
    if (c == nullptr)
        return;
    c->idle_timeout_us = timeout.count() > 0 ? static_cast<std::uint64_t>(timeout.count()) * 1000 : 0;
    idle_timeouts_ = idle_timeouts_ || c->idle_timeout_us != 0;
}

std::chrono::milliseconds connection::idle_timeout(channel_id id) const
{
    const channel* c = find(id);
    return std::chrono::milliseconds(c == nullptr ? 0 : c->idle_timeout_us / 1000);
}

std::vector<channel_id> connection::idle_expired(steady_time now)
{
    std::vector<channel_id> out;
    if (!idle_timeouts_)
        return out;
    const std::uint64_t us = micros(now);
    now_us_ = std::max(now_us_, us);
    for (channel_id id = 0; id < channels_.size(); ++id) {
        channel* c = channels_[id].get();
        // Only channels open both ways (OpenSSH's SSH_CHANNEL_OPEN): one
        // still opening has no timer yet, a closing one is ending anyway.
        if (c == nullptr || c->idle_timeout_us == 0 || c->idle_reported || !c->info.open || c->info.close_sent ||
            c->info.close_received)
            continue;
        const std::uint64_t moved = c->info.bytes_in + c->info.bytes_out;
        if (c->idle_since_us == 0 || moved != c->idle_seen_bytes) {
            c->idle_since_us = std::max<std::uint64_t>(us, 1);
            c->idle_seen_bytes = moved;
            continue;
        }
        if (us >= c->idle_since_us + c->idle_timeout_us) {
            c->idle_reported = true;
            out.push_back(id);
        }
    }
    return out;
}

void connection::maybe_probe(std::uint64_t now_us)
{
    // Only while data moves: an idle connection needs no RTT, and an idle
    // session should stay silent on the wire.
    // Without TCP's estimate the first probe goes out at the first tick,
    // right after authentication, before any bulk data can queue up in
    // front of it; with it, a second later (first_cross_check_delay_us).
    const bool active = data_since_tick_ || probe_.samples() == 0;
    data_since_tick_ = false;
    if (first_tick_us_ == 0)
        first_tick_us_ = now_us;
    if (transport_rtt_us_ != 0 && probe_.samples() == 0 && now_us < first_tick_us_ + first_cross_check_delay_us)
        return;
    if (!active || transport_.closed() || !probe_.due(now_us, transport_rtt_us_ != 0))
        return;
    bytes m;
    wire_writer(m).u8(msg::global_request).string("keepalive@openssh.com").boolean(true);
    send_message(m);
    global_replies_pending_.push_back(true);
    probe_.sent(now_us);
}

void connection::report_window_change(channel_id id, receive_window& rx)
{
    auto change = rx.take_change();
    if (change && on_window_change)
        on_window_change(id, *change);
}

} // namespace longhaul
