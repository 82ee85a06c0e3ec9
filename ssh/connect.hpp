// Establishing the byte stream to the server: TCP with ConnectTimeout,
// ConnectionAttempts, AddressFamily and BindAddress, or a ProxyCommand child
// whose stdin/stdout are one end of a socketpair.
#pragma once

#include "common/result.hpp"

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <string>

namespace longhaul {

struct connect_params {
    std::string host;
    int port = 22;
    int family = AF_UNSPEC; // AddressFamily
    std::string bind_address;
    std::chrono::seconds timeout{0}; // ConnectTimeout; 0 = the system's
    int attempts = 1;                // ConnectionAttempts
};

struct connected_stream {
    int fd = -1;
    pid_t proxy_pid = -1; // ProxyCommand child, if any
    std::string peer_address; // numeric address (for known_hosts CheckHostIP and messages)
    int peer_port = 0;
};

// Connects to the first address that answers, trying every resolved address
// per attempt, one second apart between attempts (as ssh does). `error` is the
// user-facing message, e.g. "ssh: connect to host h port 22: Connection refused".
result<connected_stream> connect_tcp(const connect_params& p, std::string& error);

// Runs `command` (already %-expanded) with /bin/sh -c; its stdin and stdout
// are a socketpair whose other end is returned.
result<connected_stream> connect_proxy_command(const std::string& command, std::string& error);

} // namespace longhaul
