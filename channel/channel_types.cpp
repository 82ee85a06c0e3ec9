#include "channel/channel_types.hpp"

namespace longhaul {

void refuse_channel_open(connection& conn, channel_id id, std::string_view, byte_span)
{
    conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
}

void refuse_global_request(connection& conn, std::string_view, bool want_reply, byte_span)
{
    if (want_reply)
        conn.reply_global(false);
}

channel_type_table::channel_type_table() : registration_table(refuse_channel_open) {}

void channel_type_table::open(connection& conn, const connection_event& e) const
{
    lookup(e.name)(conn, e.channel, e.name, e.data);
}

global_request_table::global_request_table() : registration_table(refuse_global_request) {}

void global_request_table::handle(connection& conn, const connection_event& e) const
{
    lookup(e.name)(conn, e.name, e.want_reply, e.data);
}

} // namespace longhaul
