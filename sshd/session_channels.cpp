#include "sshd/session_channels.hpp"

#include "channel/io/connection_runner.hpp"
#include "sshd/server_session.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <csignal>

namespace longhaul {

session_channels::session_channels(boost::asio::io_context& io, connection_runner& runner, session_environment& env)
    : io_(io), runner_(runner), env_(env)
{
}

session_channels::~session_channels() = default;

void session_channels::register_in(channel_type_table& table)
{
    table.add("session", [this](connection& conn, channel_id id, std::string_view, byte_span) { open(conn, id); });
}

void session_channels::open(connection& conn, channel_id id)
{
    if (static_cast<int>(sessions_.size()) >= env_.config->max_sessions) {
        env_.log->info("no more sessions");
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    env_.session_number = counter_++;
    auto s = std::make_shared<server_session>(env_);
    s->on_finished = [this, id, self = std::weak_ptr<server_session>(s)] {
        // Not from inside the session's own callback: it may still be running.
        // By the time this runs the channel number may already belong to a
        // new session (the peer's CLOSE and its next OPEN in one batch of
        // packets): erase only this session, or the new one would never
        // hear of its process's exit (child_exited finds it here).
        boost::asio::post(io_, [this, id, self] {
            auto it = sessions_.find(id);
            if (it != sessions_.end() && it->second == self.lock())
                sessions_.erase(it);
            if (on_released)
                on_released();
        });
    };
    conn.accept(id);
    runner_.attach(id, s);
    sessions_[id] = s;
}

void session_channels::child_exited(pid_t pid, int wait_status)
{
    for (auto& [id, s] : sessions_) {
        if (s->pid() == pid) {
            s->child_exited(wait_status);
            return;
        }
    }
}

void session_channels::hang_up()
{
    for (auto& [id, s] : sessions_)
        if (s->pid() > 0)
            ::kill(-s->pid(), SIGHUP);
}

} // namespace longhaul
