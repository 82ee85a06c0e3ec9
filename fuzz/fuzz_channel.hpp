// How the fuzz targets answer connection-protocol events, the way ssh and
// sshd would: accept or refuse opens, decode session requests with the
// channel/messages codecs, reply, return credit for data, send some data
// back, close what the peer closed. `choice` (an input byte, or a counter)
// varies the answers.
#pragma once

#include "channel/connection.hpp"
#include "channel/messages.hpp"

#include <algorithm>
#include <cstdint>

namespace longhaul::fuzz {

inline void decode_session_request(std::string_view name, byte_span data)
{
    if (name == "pty-req") {
        if (auto p = pty_request::decode(data))
            (void)decode_terminal_modes(p->modes);
    } else if (name == "window-change") {
        (void)window_change_request::decode(data);
    } else if (name == "env") {
        (void)env_request::decode(data);
    } else if (name == "exec" || name == "subsystem") {
        (void)string_request::decode(data);
    } else if (name == "signal") {
        (void)signal_request::decode(data);
    } else if (name == "exit-status") {
        (void)exit_status_request::decode(data);
    } else if (name == "exit-signal") {
        (void)exit_signal_request::decode(data);
    }
}

inline void answer_connection_event(connection& c, const connection_event& ev, std::uint32_t choice, steady_time now)
{
    const channel_id id = ev.channel;
    switch (ev.type) {
    case connection_event_type::open_request:
        if (ev.name == "session" || (choice & 1))
            c.accept(id);
        else
            c.reject(id, open_failure_reason::unknown_channel_type, "unknown channel type");
        break;
    case connection_event_type::data: {
        // Sometimes the sink takes only part of it now (the rest never).
        const std::size_t n = (choice & 2) ? ev.data.size() / 2 : ev.data.size();
        c.consumed(id, n, now);
        break;
    }
    case connection_event_type::request:
        decode_session_request(ev.name, ev.data);
        if (ev.want_reply && c.exists(id))
            c.reply(id, (choice & 4) == 0);
        break;
    case connection_event_type::eof:
        if (c.exists(id) && (choice & 8))
            c.send_eof(id);
        break;
    case connection_event_type::close:
        if (c.exists(id))
            c.close(id);
        break;
    case connection_event_type::global_request:
        if (ev.want_reply)
            c.reply_global((choice & 16) != 0);
        break;
    case connection_event_type::open_confirmed:
    case connection_event_type::window_opened:
        if (c.exists(id)) {
            // Send what the window allows, up to 2 KiB (more costs time, not coverage).
            const std::size_t n = std::min<std::size_t>(c.send_capacity(id), 2048);
            if (n > 0) {
                bytes data(n, 'x');
                (void)c.send_data(id, data, (choice & 32) ? extended_data_stderr : 0);
            }
        }
        break;
    default: break;
    }
}

// Invariants that hold whatever the peer sent.
inline void check_channels(const connection& c)
{
    for (channel_id id = 0; id < 64; ++id) {
        if (!c.exists(id))
            continue;
        const channel_info& i = c.info(id);
        if (c.send_capacity(id) > i.remote_window)
            std::abort();
    }
}

} // namespace longhaul::fuzz
