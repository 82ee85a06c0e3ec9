// The session layer: the glue between the transport core, user
// authentication and the connection core, one copy for ssh and sshd.
//
// Sans-I/O like the cores it joins: the program hands it every transport
// event (and the time) and acts on what comes back; bytes go out through
// the transport as always. The layer
//   - routes payloads by message number: SERVICE_REQUEST/ACCEPT (5, 6) and
//     50..79 to the authentication machine, 80..127 to the connection core
//     once the user is authenticated and the program opened it, anything
//     else out of place is answered UNIMPLEMENTED (RFC 4253 §11.4);
//   - pumps the authentication machine: its messages go to the transport
//     (a server's are held until their minimum delay, next_deadline()),
//     the events only the program can answer (prompts, agent signatures,
//     password and PAM checks, log lines) come back from poll();
//   - hands off at success: transport.user_authenticated() (compression,
//     automatic rekeying), then an `authenticated` event;
//   - answers the peer's channel opens and global requests from its
//     registration tables (channel_types.hpp), and returns every other
//     connection event for the program's channel handlers.
//
// Use: on each transport event, handle(ev, now) and act on the result,
// then poll(now) until it returns none; after answering an auth event
// (client_auth_machine()->answer_prompt(...), server_auth_machine()->
// answer_password(...)), poll again. Events and their spans stay valid
// until the next call.
#pragma once

#include "channel/channel_types.hpp"
#include "channel/connection.hpp"
#include "common/auth/client_auth.hpp"
#include "common/auth/server_auth.hpp"
#include "common/transport/transport.hpp"

#include <deque>
#include <memory>
#include <optional>

namespace longhaul {

enum class session_role { client, server };

enum class session_event_type {
    none,
    transport,       // a transport event the program reports: version, banner, host key,
                     // rekey done, debug, unimplemented, disconnected (event.transport)
    first_kex,       // the first key exchange completed: start the authentication machine
    client_auth,     // for the program: log, banner, prompt, sign, failed, disconnect
                     // (the transport already has the DISCONNECT) (event.client_auth)
    server_auth,     // for the program: log, check_password, kbdint_* (event.server_auth)
    auth_disconnect, // server: the machine's DISCONNECT left after its delay (max tries, a
                     // protocol error); the transport is closing
    authenticated,   // success; the transport knows. event.client_auth or event.server_auth
                     // carries the method (client) or the user and methods (server)
    channel,         // a connection event for the program's channel handlers (event.channel)
};

struct session_event {
    session_event_type type = session_event_type::none;
    const transport_event* transport = nullptr;
    client_auth_event* client_auth = nullptr;
    server_auth_event* server_auth = nullptr;
    connection_event channel;
};

class session_layer {
public:
    session_layer(transport& t, session_role role);
    ~session_layer();
    session_layer(const session_layer&) = delete;
    session_layer& operator=(const session_layer&) = delete;

    session_role role() const noexcept { return role_; }
    transport& core() noexcept { return transport_; }

    // The authentication machine of the side, started after the first key
    // exchange (the client after it accepted the host key).
    void start_client_auth(client_auth_config cfg);
    void start_server_auth(server_auth_config cfg, server_auth_policy policy);
    client_auth* client_auth_machine() noexcept { return client_auth_.get(); }
    server_auth* server_auth_machine() noexcept { return server_auth_.get(); }
    bool authenticated() const noexcept { return authenticated_; }
    // Server: carries on a connection whose key exchange and user
    // authentication another process did (sshd's sandboxed child hands
    // the transport to its monitor): connection messages are served once
    // open_connection() is called, further authentication requests ignored.
    void resume_authenticated() noexcept
    {
        kex_done_ = true;
        authenticated_ = true;
    }

    // The connection core, opened when the program is ready to serve
    // channels: ssh before it connects, sshd once it runs as the user.
    // Connection messages before both that and authentication are
    // answered UNIMPLEMENTED.
    connection& open_connection(connection_config cfg);
    connection* conn() noexcept { return conn_.get(); }

    channel_type_table& channel_types() noexcept { return channel_types_; }
    global_request_table& global_requests() noexcept { return global_requests_; }

    // One transport event: routed, and what the program must act on now.
    session_event handle(const transport_event& ev, steady_time now);
    // Events of the authentication machine, one at a time; none when idle.
    session_event poll(steady_time now);
    // When held authentication output is due (server): poll() then.
    std::optional<steady_time> next_deadline() const;

private:
    session_event route(const transport_event& ev, steady_time now);
    session_event poll_client();
    session_event poll_server(steady_time now);
    void hold(server_auth_event ev);
    bool release_held(steady_time now);

    transport& transport_;
    session_role role_;
    std::unique_ptr<client_auth> client_auth_;
    std::unique_ptr<server_auth> server_auth_;
    std::unique_ptr<connection> conn_;
    channel_type_table channel_types_;
    global_request_table global_requests_;
    bool kex_done_ = false;
    bool authenticated_ = false;
    // The event poll() returned last (its storage).
    client_auth_event client_event_;
    server_auth_event server_event_;
    // Server: authentication output held until its minimum delay after
    // the request arrived (server_auth_event::min_elapsed), in order.
    struct held_output {
        steady_time at;
        server_auth_event ev;
    };
    std::deque<held_output> held_;
    steady_time request_time_{};
};

} // namespace longhaul
