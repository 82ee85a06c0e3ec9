// The forwarding decisions of sshd and ssh that depend on settings only,
// as OpenSSH 9.2 makes them (serverloop.c, session.c, channels.c):
// whether a kind of forwarding is enabled at all (AllowTcpForwarding,
// AllowStreamLocalForwarding, DisableForwarding, the key's
// no-port-forwarding / restrict), which address a listener binds
// (GatewayPorts: channel_fwd_bind_addr), the bind host ssh puts in
// tcpip-forward (channel_rfwd_bind_host), how ssh finds the -R forward a
// forwarded-tcpip belongs to, and the refusal lines sshd logs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace longhaul::forward {

// AllowTcpForwarding / AllowStreamLocalForwarding.
enum class forwarding_allowed { no, yes, local, remote };

// local: the client connects through the server (direct-tcpip,
// direct-streamlocal, ssh -L); remote: the server listens for the client
// (tcpip-forward, streamlocal-forward, ssh -R).
enum class forward_direction { local, remote };

struct forwarding_settings {
    forwarding_allowed tcp = forwarding_allowed::yes;
    forwarding_allowed streamlocal = forwarding_allowed::yes;
    bool disable_forwarding = false;       // DisableForwarding yes
    bool key_permits_forwarding = true;    // false: no-port-forwarding or restrict
};

bool tcp_forwarding_enabled(const forwarding_settings& s, forward_direction d) noexcept;
bool streamlocal_forwarding_enabled(const forwarding_settings& s, forward_direction d) noexcept;
// serverloop.c's gate for tcpip-forward, before the permission lists:
// enabled for remote, and a port 0 request must want the reply that
// carries the port.
bool tcpip_forward_enabled(const forwarding_settings& s, int port, bool want_reply) noexcept;

// GatewayPorts: ssh_config's yes/no, sshd_config's yes/no/clientspecified.
enum class gateway_ports { no, yes, client_specified };

// Where a forwarding listener binds. `wildcard`: every address (AI_PASSIVE
// with no host: 0.0.0.0 and ::); else `address` when set, a name or
// address to resolve and bind; else loopback (no host without AI_PASSIVE:
// 127.0.0.1 and ::1).
struct bind_address {
    bool wildcard = false;
    std::optional<std::string> address;
    // sshd tells the client (SSH_MSG_DEBUG) when GatewayPorts yes overrode
    // the address it asked for.
    std::optional<std::string> debug_message;
    bool operator==(const bind_address&) const = default;
};

// channel_fwd_bind_addr(): `listen_address` is the requested address
// (nullopt: none given, ssh's -L port:host:hostport), `is_client` true
// for ssh's -L/-D listeners, false for sshd's tcpip-forward listeners.
// `old_forward_addr` is OpenSSH's SSH_OLD_FORWARD_ADDR compatibility flag
// (peers that send "0.0.0.0" to mean every address): only the server
// looks at it.
bind_address forward_bind_address(std::optional<std::string_view> listen_address, bool is_client, gateway_ports gp,
                                  bool old_forward_addr = false);

// channel_rfwd_bind_host(): the address ssh puts in tcpip-forward for
// -R's bind address: none -> "localhost", "" or "*" -> "", else as given.
std::string_view remote_forward_bind_host(std::optional<std::string_view> listen_address) noexcept;

// open_listen_match_tcpip(..., translate): whether a forwarded-tcpip for
// reported_host:reported_port belongs to the -R forward configured with
// listen_address:listen_port (listen_port: the allocated port once the
// server chose one for port 0).
bool remote_forward_matches(std::optional<std::string_view> listen_address, int listen_port,
                            std::string_view reported_host, int reported_port) noexcept;

// sshd's log lines (logit, INFO) and the client debug messages for
// refusals, in OpenSSH 9.2's words (each compared with Debian's sshd's
// log); peer text is made printable and cut as OpenSSH cuts it (%.100s).
std::string refused_local_forward_log(std::string_view originator, int originator_port, std::string_view target,
                                      int target_port);
std::string refused_streamlocal_forward_log(std::string_view originator, int originator_port,
                                            std::string_view target);
// (OpenSSH 9.2 names the client in the host:port line, not in the path one.)
std::string denied_connect_log(std::string_view remote_ip, int remote_port, std::string_view host, int port);
std::string denied_connect_path_log(std::string_view path);
std::string denied_remote_forward_log(std::string_view remote_ip, int remote_port, std::string_view listen_host,
                                      int listen_port);
std::string denied_remote_streamlocal_log(std::string_view remote_ip, int remote_port, std::string_view path);
inline constexpr std::string_view port_forwarding_disabled_debug = "Server has disabled port forwarding.";
inline constexpr std::string_view streamlocal_forwarding_disabled_debug =
    "Server has disabled streamlocal forwarding.";
inline constexpr std::string_view port_forwarding_refused_debug = "port forwarding refused";

} // namespace longhaul::forward
