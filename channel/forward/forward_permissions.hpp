// OpenSSH's forwarding permission lists, as channels.c applies them:
//
// - open lists decide where a connection may go: sshd's PermitOpen and
//   authorized_keys permitopen= (direct-tcpip, and direct-streamlocal with
//   the socket path as the host), and ssh's PermitRemoteOpen (targets of
//   reverse dynamic forwarding, -R port). An entry is host:port or
//   [v6addr]:port; the host is compared exactly (case and all), "*" is any
//   host; the port is a number, a service name, or "*" for any
//   (open_match()).
// - listen lists decide where tcpip-forward may listen: sshd's
//   PermitListen and permitlisten=. An entry is [host:]port (a bare port is
//   "*:port"); the requested host is lowercased and matched against the
//   entry's host as a wildcard pattern; port "*" is any, and port 0 (the
//   server chooses) matches only "*" (remote_open_match()). ssh asks for
//   "localhost" when no bind address was given, which PermitListen
//   "localhost:port" matches and "127.0.0.1:port" does not. As in OpenSSH
//   9.2, listen lists do not govern streamlocal-forward@openssh.com:
//   AllowStreamLocalForwarding does.
//
// A request must pass both the administrator's list (sshd_config) and the
// user's (the key's options); an empty user list permits everything, and
// so does the administrator's "any" (or no setting); "none" permits
// nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::forward {

inline constexpr int any_port = -1;         // FWD_PERMIT_ANY_PORT: "*"
inline constexpr int port_streamlocal = -2; // PORT_STREAMLOCAL: a path, not a port

enum class permission_kind { open, listen };

struct forward_permission {
    std::string host; // brackets removed ("[::1]" -> "::1")
    int port = any_port;
    bool operator==(const forward_permission&) const = default;
};

struct permission_list {
    enum class mode { any, none, list };
    mode kind = mode::any;
    std::vector<forward_permission> entries; // mode list only
    bool operator==(const permission_list&) const = default;
};

// The list from the strings sshd_config, ssh_config and authorized_keys
// keep: empty or exactly {"any"} is any, exactly {"none"} is none, else
// entries. nullopt with `why` in OpenSSH's words ("missing host in
// PermitOpen", "bad port number in PermitListen") for an entry OpenSSH's
// parser refuses; `what` names the option in that message.
std::optional<permission_list> parse_permission_list(const std::vector<std::string>& values, permission_kind kind,
                                                     std::string_view what, std::string& why);

// One list: open_match() / remote_open_match() over its entries.
bool open_list_permits(const permission_list& list, std::string_view host, int port);
bool listen_list_permits(const permission_list& list, std::string_view listen_host, int port);

// channel_connect_to_port() and channel_connect_to_path(): both lists.
bool open_permitted(const permission_list& admin, const permission_list& user, std::string_view host, int port);
bool path_open_permitted(const permission_list& admin, const permission_list& user, std::string_view path);
// check_rfwd_permission() for tcpip-forward: both lists, on the host and
// port as requested (before GatewayPorts changes the bind address).
bool listen_permitted(const permission_list& admin, const permission_list& user, std::string_view listen_host,
                      int port);

} // namespace longhaul::forward
