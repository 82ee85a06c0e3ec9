// Registration tables for what a peer may ask of the connection: the
// channel types it may open (RFC 4254 §5.1) and the global requests it may
// send (§4), name -> handler, as OpenSSH's channel handler tables and Go's
// HandleChannelOpen. Each kind (session, direct-tcpip, forwarded-tcpip,
// direct-streamlocal@openssh.com, tcpip-forward, ...) is one entry, written
// in its own file by the program that serves it; the session layer
// (channel/session/) looks every CHANNEL_OPEN and GLOBAL_REQUEST up here.
// A name without an entry goes to the table's `unknown` handler, by
// default a refusal. No I/O here: entries that need sockets capture what
// they need.
#pragma once

#include "channel/connection.hpp"

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace longhaul {

// The peer's CHANNEL_OPEN of `type`. The handler answers it, now or later:
// conn.accept(id, ...) or conn.reject(id, reason, description).
using channel_open_handler =
    std::function<void(connection& conn, channel_id id, std::string_view type, byte_span type_specific)>;

// The peer's GLOBAL_REQUEST `name`. With want_reply the handler answers it
// with conn.reply_global() before returning: replies go in request order,
// and the next request's handler may answer at once.
using global_request_handler =
    std::function<void(connection& conn, std::string_view name, bool want_reply, byte_span data)>;

template <class Handler>
class registration_table {
public:
    explicit registration_table(Handler unknown) : unknown_(std::move(unknown)) {}

    // Registers the handler of `name`, replacing an earlier one.
    void add(std::string name, Handler h) { entries_[std::move(name)] = std::move(h); }
    void remove(std::string_view name)
    {
        if (auto it = entries_.find(name); it != entries_.end())
            entries_.erase(it);
    }
    bool contains(std::string_view name) const { return entries_.find(name) != entries_.end(); }
    // What names without an entry get.
    void set_unknown(Handler h) { unknown_ = std::move(h); }
    // The entry for `name`, or the unknown handler.
    const Handler& lookup(std::string_view name) const
    {
        auto it = entries_.find(name);
        return it == entries_.end() ? unknown_ : it->second;
    }

private:
    std::map<std::string, Handler, std::less<>> entries_;
    Handler unknown_;
};

// Unknown types are refused "administratively prohibited", "open failed"
// (what OpenSSH's sshd and ssh answer), with no log line of their own.
class channel_type_table : public registration_table<channel_open_handler> {
public:
    channel_type_table();
    // Answers an open_request event through its entry.
    void open(connection& conn, const connection_event& e) const;
};

// Unknown requests are answered with failure when the peer wants a reply.
class global_request_table : public registration_table<global_request_handler> {
public:
    global_request_table();
    // Answers a global_request event through its entry.
    void handle(connection& conn, const connection_event& e) const;
};

void refuse_channel_open(connection& conn, channel_id id, std::string_view type, byte_span type_specific);
void refuse_global_request(connection& conn, std::string_view name, bool want_reply, byte_span data);

} // namespace longhaul
