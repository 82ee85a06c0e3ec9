// Outbound connections for forwarding, on the event loop: sshd's
// direct-tcpip / direct-streamlocal targets and ssh's -R targets. The name
// is resolved and each address tried in turn (Asio's resolver and
// async_connect); the callback gets the connected descriptor, released
// from Asio (non-blocking, close-on-exec), or -1 and the failure in
// OpenSSH's words for its log line and the reason text of the refusal.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace boost::asio {
class io_context;
}

namespace longhaul {

struct connect_failure {
    std::string log_line; // "connect_to HOST port N: failed." and the like
    std::string reason;   // strerror's text, for CHANNEL_OPEN_FAILURE
};

using connect_callback = std::function<void(int fd, const connect_failure& failure)>;

// A connection in progress; destroying it abandons the attempt (the
// callback is then never called).
class pending_connect {
public:
    virtual ~pending_connect() = default;
};

std::unique_ptr<pending_connect> connect_tcp(boost::asio::io_context& io, const std::string& host, int port,
                                             connect_callback done);
std::unique_ptr<pending_connect> connect_unix(boost::asio::io_context& io, const std::string& path,
                                              connect_callback done);

} // namespace longhaul
