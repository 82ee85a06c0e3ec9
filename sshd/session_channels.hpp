// sshd's "session" channel type: one server_session (shell, command or
// subsystem) per channel, at most MaxSessions at once. An entry of the
// session layer's channel-type table, like each forwarding kind will be.
#pragma once

#include "channel/channel_types.hpp"

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>

namespace boost::asio {
class io_context;
}

namespace longhaul {

class connection_runner;
class server_session;
struct session_environment;

class session_channels {
public:
    // `env` is shared by every session and must outlive them.
    session_channels(boost::asio::io_context& io, connection_runner& runner, session_environment& env);
    ~session_channels();
    session_channels(const session_channels&) = delete;
    session_channels& operator=(const session_channels&) = delete;

    // Adds the "session" entry to the table.
    void register_in(channel_type_table& table);

    // A child process was reaped: its session hears of it.
    void child_exited(pid_t pid, int wait_status);
    // The connection is over: SIGHUP to every session's process group.
    void hang_up();

    // A session ended and was released (UnusedConnectionTimeout's clock).
    std::function<void()> on_released;

private:
    void open(connection& conn, channel_id id);

    boost::asio::io_context& io_;
    connection_runner& runner_;
    session_environment& env_;
    std::map<channel_id, std::shared_ptr<server_session>> sessions_;
    int counter_ = 0;
};

} // namespace longhaul
