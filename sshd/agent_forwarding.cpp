#include "sshd/agent_forwarding.hpp"

#include "channel/forward/forward_messages.hpp"
#include "channel/io/listen_sockets.hpp"
#include "common/text.hpp"
#include "common/temp_name.hpp"
#include "sshd/forward_settings.hpp"
#include "sshd/server_session.hpp"

#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace longhaul {

agent_forwarding::agent_forwarding(boost::asio::io_context& io, connection_runner& runner,
                                   const session_environment& env)
    : io_(io), runner_(runner), env_(env), channels_(runner)
{
}

agent_forwarding::~agent_forwarding()
{
    channels_.stop_all();
    listener_.reset(); // removes the socket
    remove_directory();
}

void agent_forwarding::remove_directory() noexcept
{
    if (!dir_.empty())
        ::rmdir(dir_.c_str());
    dir_.clear();
}

bool agent_forwarding::request(connection& conn)
{
    if (!agent_forwarding_enabled(env_)) {
        env_.log->debug("session_auth_agent_req: agent forwarding disabled");
        return false;
    }
    // OpenSSH answers only the connection's first request; later sessions
    // share its socket.
    if (asked_)
        return false;
    asked_ = true;
    std::string dir = fill_temp_template("/tmp/ssh-XXXXXXXXXX");
    if (::mkdtemp(dir.data()) == nullptr) {
        conn.core().send_debug(false, std::string("Agent forwarding disabled: mkdtemp() failed: ") +
                                          std::strerror(errno));
        return false;
    }
    dir_ = dir;
    const std::string path = dir_ + "/agent." + std::to_string(::getpid());
    std::string error;
    // The directory (0700, the user's) guards the socket; the umask keeps
    // the socket itself the user's alone too.
    const int fd = listen_unix(path, 0177, false, error);
    if (fd < 0) {
        env_.log->error(printable(error));
        remove_directory();
        return false;
    }
    listener_ = std::make_unique<fd_listener>(io_, fd, path, [this](int c) { accepted(c); });
    path_ = path;
    return true;
}

void agent_forwarding::accepted(int fd)
{
    auto id = runner_.conn().open(forward::agent_channel_type, {});
    if (!id) {
        ::close(fd);
        return;
    }
    auto ch = std::make_shared<socket_channel>(fd);
    ch->on_refused = [this, cid = *id](std::uint32_t reason, std::string_view text) {
        env_.log->debug("channel " + std::to_string(cid) + ": agent open failed: reason " + std::to_string(reason) +
                        ": " + printable(text));
    };
    channels_.add(*id, ch);
    runner_.flush();
}

} // namespace longhaul
