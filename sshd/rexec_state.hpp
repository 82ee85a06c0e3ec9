// What sshd's listener hands to the fresh copy of itself it executes for
// every connection (OpenSSH 9.8+ re-executes sshd-session the same way): a
// new process image per connection gets its own address-space layout and
// stack protector, so what one connection learns of memory says nothing
// about the next, and no state of the listener's heap is inherited.
//
// The listener encodes the state once, at start-up, into a sealed memfd;
// each connection's process gets it as descriptor rexec_state_fd, parses
// the very bytes the listener parsed (configuration and Include files,
// host key files, the moduli file) and closes it before anything touches
// the network. The state holds private keys: the memfd is never writable
// after sealing, and every decoded copy lives in wiped memory.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"
#include "sshd/sshd_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace longhaul {

// Descriptors of a re-executed connection process: the socket on 0 and 1,
// stderr kept, then these.
inline constexpr int rexec_state_fd = 3;
inline constexpr int rexec_startup_fd = 4;
// The hidden option that marks a re-executed connection process (OpenSSH's
// sshd uses -R for the same).
inline constexpr const char* rexec_flag = "-R";

// Bounds the decoder enforces (the encoder refuses more, too).
inline constexpr std::size_t rexec_max_state = 64u << 20;
inline constexpr std::size_t rexec_max_files = 4096;
inline constexpr std::size_t rexec_max_keys = 64;

struct rexec_state {
    config_sources config;
    std::vector<secret_bytes> host_keys; // private key files as read, in HostKey order
    std::optional<std::string> moduli;   // the ModuliFile as read; none when unreadable
    std::vector<bytes> agent_host_keys;  // HostKeyAgent: public key blobs, in HostKey order
};

result<secret_bytes> encode_rexec_state(const rexec_state& state);
// invalid_format for anything malformed, truncated or over the bounds.
result<rexec_state> decode_rexec_state(byte_span encoded);

// A sealed, close-on-exec memfd holding `encoded`; -1 with `error` set.
int make_rexec_state_fd(byte_span encoded, std::string& error);
// Reads the whole descriptor from offset 0 (at most rexec_max_state bytes).
result<secret_bytes> read_rexec_state_fd(int fd);

// In the listener's child for one connection: the socket becomes
// descriptors 0 and 1, the state rexec_state_fd, the startup pipe (or -1)
// rexec_startup_fd, and this very program image (/proc/self/exe, even if
// the file was replaced on disk since) runs again with rexec_flag after
// argv[0]. Returns only on failure, with `error` set.
void exec_connection_process(int socket_fd, int state_fd, int startup_fd, char** argv, std::string& error);

} // namespace longhaul
