// connection's sending side: opening channels, data within the peer's
// window (and send_limit's share of a fixed one), requests, EOF and CLOSE,
// global requests. The peer's messages are handled in connection.cpp.
#include "channel/connection.hpp"
#include "channel/connection_channel.hpp"

#include "common/wire.hpp"

#include <algorithm>
#include <cstring>

namespace longhaul {

using connection_detail::data_header;
using connection_detail::extended_header;

result<channel_id> connection::open(std::string_view type, byte_span type_specific)
{
    auto id = allocate(type);
    if (!id)
        return id;
    channel* c = find(*id);
    c->local_open = true;
    bytes m;
    wire_writer(m).u8(msg::channel_open).string(type).u32(*id).u32(c->rx.initial()).u32(cfg_.window.max_packet)
        .raw(type_specific);
    send_message(m);
    return id;
}

std::size_t connection::send_capacity(channel_id id) const noexcept
{
    const channel* c = find(id);
    if (c == nullptr || !c->info.open || c->info.eof_sent || c->info.close_sent || c->info.close_received)
        return 0;
    // The limit keeps room in the one TCP stream for the other channels'
    // data: a lone channel (the one channel of an `ssh -W` hop) has none to
    // protect, and limiting a relay only moves its queue into the relayed
    // connection's own.
    const std::uint64_t path = path_rtt_us();
    if (peer_window_fixed_ && live_ > 1 && path != 0 && path < short_path_us)
        return static_cast<std::size_t>(c->send.capacity(c->peer_opened, c->info.remote_window, c->info.remote_max_packet));
    return static_cast<std::size_t>(c->info.remote_window);
}

mutable_byte_span connection::prepare_data(channel_id id, std::size_t max, std::uint32_t extended)
{
    const channel* c = find(id);
    const std::size_t header = extended ? extended_header : data_header;
    std::size_t n = std::min(max, send_capacity(id));
    if (c != nullptr)
        n = std::min<std::size_t>(n, c->info.remote_max_packet);
    n = std::min(n, max_payload_size - header);
    if (n == 0)
        return {};
    auto room = transport_.prepare_payload(header + n);
    pending_room_ = room;
    pending_header_ = header;
    pending_channel_ = id;
    room[0] = extended ? msg::channel_extended_data : msg::channel_data;
    store_u32(room.data() + 1, c->info.remote_id);
    if (extended)
        store_u32(room.data() + 5, extended);
    return room.subspan(header, n);
}

result<void> connection::commit_data(channel_id id, std::size_t n)
{
    channel* c = find(id);
    if (c == nullptr || id != pending_channel_ || pending_header_ == 0)
        return errc::invalid_argument;
    const std::size_t header = pending_header_;
    pending_header_ = 0;
    if (n == 0)
        return {};
    if (n > c->info.remote_window || header + n > pending_room_.size())
        return errc::invalid_argument;
    // The length field sits just before the data, whichever header form.
    store_u32(pending_room_.data() + header - 4, static_cast<std::uint32_t>(n));
    c->info.remote_window -= n;
    c->info.bytes_out += n;
    data_since_tick_ = true;
    if (c->info.remote_window == 0)
        c->window_empty_since_us = std::max<std::uint64_t>(now_us_, 1);
    return transport_.commit_payload(header + n);
}

result<void> connection::send_data(channel_id id, byte_span data, std::uint32_t extended)
{
    if (data.size() > send_capacity(id))
        return errc::too_large;
    while (!data.empty()) {
        auto room = prepare_data(id, data.size(), extended);
        if (room.empty())
            return errc::invalid_argument;
        std::memcpy(room.data(), data.data(), room.size());
        if (auto r = commit_data(id, room.size()); !r)
            return r;
        data = data.subspan(room.size());
    }
    return {};
}

void connection::send_request(channel_id id, std::string_view type, bool want_reply, byte_span data)
{
    channel* c = find(id);
    if (c == nullptr || !c->info.open || c->info.close_sent)
        return;
    if (want_reply)
        ++c->replies_pending;
    bytes m;
    wire_writer(m).u8(msg::channel_request).u32(c->info.remote_id).string(type).boolean(want_reply).raw(data);
    send_message(m);
}

void connection::reply(channel_id id, bool success)
{
    channel* c = find(id);
    if (c == nullptr || c->replies_owed == 0)
        return;
    --c->replies_owed;
    if (c->info.close_sent)
        return;
    bytes m;
    wire_writer(m).u8(success ? msg::channel_success : msg::channel_failure).u32(c->info.remote_id);
    send_message(m);
}

void connection::send_eof(channel_id id)
{
    channel* c = find(id);
    if (c == nullptr || !c->info.open || c->info.eof_sent || c->info.close_sent)
        return;
    c->info.eof_sent = true;
    bytes m;
    wire_writer(m).u8(msg::channel_eof).u32(c->info.remote_id);
    send_message(m);
}

void connection::close(channel_id id)
{
    channel* c = find(id);
    if (c == nullptr || c->info.close_sent)
        return;
    if (c->awaiting_accept) {
        reject(id, open_failure_reason::administratively_prohibited, "closed");
        return;
    }
    // A channel still waiting for the peer's confirmation cannot be closed
    // yet (the peer's id is unknown); the close goes out once it confirms.
    c->info.close_sent = true;
    if (!c->info.open)
        return;
    bytes m;
    wire_writer(m).u8(msg::channel_close).u32(c->info.remote_id);
    send_message(m);
    if (c->info.close_received)
        release(id);
}

void connection::send_global_request(std::string_view name, bool want_reply, byte_span data)
{
    if (want_reply)
        global_replies_pending_.push_back(false);
    bytes m;
    wire_writer(m).u8(msg::global_request).string(name).boolean(want_reply).raw(data);
    send_message(m);
}

void connection::reply_global(bool success, byte_span data)
{
    if (global_replies_owed_ == 0)
        return;
    --global_replies_owed_;
    bytes m;
    wire_writer(m).u8(success ? msg::request_success : msg::request_failure);
    if (success)
        wire_writer(m).raw(data);
    send_message(m);
}

} // namespace longhaul
