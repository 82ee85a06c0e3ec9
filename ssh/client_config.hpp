// The ssh client's options: everything ssh_config(5) and the command line
// can set, one field per keyword.
//
// While files are read a field is "unset" (nullopt / empty list), and the
// first value found wins: command line, then ~/.ssh/config, then
// /etc/ssh/ssh_config, as in OpenSSH. fill_default_options() then gives
// every scalar field its default, so after load_client_config() callers may
// dereference them (`*cfg.port`). Fields OpenSSH leaves unset by default
// (proxy_command, host_key_alias, bind_address, ...) stay nullopt.
#pragma once

#include "common/log.hpp"
#include "common/text_parse.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace longhaul {

// Where `Metrics yes` writes when MetricsPath is not set (appended to).
inline constexpr const char* default_metrics_path = "ssh_metrics";

enum class strict_host_key_checking { off, accept_new, yes, ask };
enum class request_tty { no, yes, force, automatic };
enum class session_type { none, subsystem, normal }; // normal: shell or command (OpenSSH's "default")
enum class control_master { no, yes, ask, automatic, autoask };
enum class tunnel_request { no, point_to_point, ethernet };
enum class canonicalize_hostname { no, yes, always };
enum class pubkey_authentication { no, all, unbound, host_bound }; // all: "yes"
enum class yes_no_ask { no, yes, ask };                             // UpdateHostKeys, VerifyHostKeyDNS
enum class add_keys_to_agent { no, yes, ask, confirm };
enum class address_family { any, inet, inet6 };
enum class key_fingerprint_hash { md5, sha1, sha256, sha384, sha512 };

// Port value of a forwarding endpoint that is a Unix socket path.
inline constexpr int port_streamlocal = -2;
// EscapeChar none / -e none.
inline constexpr int escape_char_none = -2;
// TunnelDevice "any" and the error value of tunnel device parsing are
// tun_id_any and tun_id_error (common/text_parse.hpp).

// One LocalForward / RemoteForward / DynamicForward (and -L/-R/-D/-W).
struct forward_spec {
    std::optional<std::string> listen_host; // bind address; nullopt = default
    int listen_port = 0;                    // port_streamlocal when listen_path is set
    std::optional<std::string> listen_path;
    std::optional<std::string> connect_host; // "socks" for dynamic forwards
    int connect_port = 0;                    // port_streamlocal when connect_path is set
    std::optional<std::string> connect_path;

    bool operator==(const forward_spec&) const = default;
    // Dynamic (SOCKS) when the connect side is "socks" (or absent, as OpenSSH
    // treats a path-only local forward when printing).
    bool is_dynamic() const { return connect_host && *connect_host == "socks"; }
};

struct identity_file {
    std::string path;          // as configured; expanded by the caller when loading
    bool user_provided = false; // from the command line or the user's own config
    bool operator==(const identity_file&) const = default;
};

struct permitted_cname {
    std::string source_list;
    std::string target_list;
};

struct client_config {
    // The host as given on the command line (`ssh -G` prints it as "host").
    std::string host_arg;

    // Connection
    std::optional<std::string> hostname;
    std::optional<int> port;
    std::optional<std::string> user;
    std::optional<longhaul::address_family> address_family;
    std::optional<std::string> bind_address;
    std::optional<std::string> bind_interface;
    std::optional<int> connection_attempts;
    std::optional<int> connect_timeout;       // seconds; -1 = none (no timeout)
    std::optional<bool> tcp_keep_alive;
    std::optional<int> server_alive_interval; // seconds; 0 = off
    std::optional<int> server_alive_count_max;
    std::optional<int> ip_qos_interactive;    // IP TOS/DSCP values
    std::optional<int> ip_qos_bulk;
    std::optional<long long> rekey_limit;     // bytes; 0 = cipher default
    std::optional<int> rekey_interval;        // seconds; 0 = none
    // Longhaul: receive-window limits per channel and per connection (bytes; 0 = auto).
    std::optional<std::uint64_t> channel_window_max, connection_window_max;
    // Longhaul: periodic per-channel window metrics to a file (HPN-SSH's names).
    std::optional<bool> metrics;
    std::optional<std::string> metrics_path;
    std::optional<int> metrics_interval; // seconds
    // Longhaul: threads that seal and open packets; -1 = auto (self-tuned), 0 = serial.
    std::optional<int> crypto_threads;
    std::optional<bool> compression;

    // Proxying. ProxyJump is kept apart (jump_*), as OpenSSH does: after
    // loading, jump_host set means "connect through ProxyJump" (see
    // proxy_jump_command()) and proxy_command is then unset; "none" values
    // of either are cleared by fill_default_options().
    std::optional<std::string> proxy_command; // verbatim rest of the line
    std::optional<std::string> jump_user;
    std::optional<std::string> jump_host;     // "none" only transiently while reading
    std::optional<int> jump_port;
    std::optional<std::string> jump_extra;    // earlier hops: "a,b" of "a,b,c"
    std::optional<bool> proxy_use_fdpass;

    // Algorithms: the configured spec while reading ("+x", "-x*", "^x" or a
    // list); the assembled list after fill_default_options (host_key_algorithms
    // stays nullopt when not configured, so the caller can order it by the
    // keys known for the host, as OpenSSH does).
    std::optional<std::string> ciphers;
    std::optional<std::string> macs;
    std::optional<std::string> kex_algorithms;
    std::optional<std::string> host_key_algorithms;
    std::optional<std::string> ca_signature_algorithms;
    std::optional<std::string> hostbased_accepted_algorithms;
    std::optional<std::string> pubkey_accepted_algorithms;

    // Host authentication
    std::optional<longhaul::strict_host_key_checking> strict_host_key_checking;
    std::vector<std::string> user_known_hosts_files;   // "none" alone = no files
    std::vector<std::string> global_known_hosts_files; // "none" alone = no files
    std::optional<bool> hash_known_hosts;
    std::optional<bool> check_host_ip;
    std::optional<longhaul::yes_no_ask> update_hostkeys;
    std::optional<std::string> host_key_alias; // lowercased after loading
    std::optional<longhaul::yes_no_ask> verify_host_key_dns;
    std::optional<bool> visual_host_key;
    std::optional<std::string> revoked_host_keys;
    std::optional<std::string> known_hosts_command;
    std::optional<bool> no_host_authentication_for_localhost;
    std::optional<longhaul::key_fingerprint_hash> fingerprint_hash;

    // User authentication
    std::optional<bool> batch_mode;
    std::optional<longhaul::pubkey_authentication> pubkey_authentication;
    std::optional<bool> password_authentication;
    std::optional<bool> kbd_interactive_authentication;
    std::optional<std::string> kbd_interactive_devices;
    std::optional<bool> hostbased_authentication;
    std::optional<std::string> preferred_authentications;
    std::optional<int> number_of_password_prompts;
    std::vector<identity_file> identity_files;
    std::vector<identity_file> certificate_files;
    std::optional<bool> identities_only;
    std::optional<std::string> identity_agent; // "none", "SSH_AUTH_SOCK", a path or $VAR
    std::optional<longhaul::add_keys_to_agent> add_keys_to_agent;
    int add_keys_to_agent_lifespan = 0; // seconds; 0 = unlimited
    std::optional<std::string> pkcs11_provider;
    std::optional<std::string> security_key_provider;
    std::optional<bool> enable_ssh_keysign;
    std::optional<int> required_rsa_size;
    // GSSAPI: accepted and printed, not implemented.
    std::optional<bool> gssapi_authentication;
    std::optional<bool> gssapi_delegate_credentials;
    std::optional<bool> gssapi_key_exchange;
    std::optional<bool> gssapi_trust_dns;
    std::optional<bool> gssapi_renewal_forces_rekey;
    std::optional<std::string> gssapi_client_identity;
    std::optional<std::string> gssapi_server_identity;
    std::optional<std::string> gssapi_kex_algorithms;

    // Session
    std::optional<longhaul::request_tty> request_tty;
    std::optional<longhaul::session_type> session_type;
    std::optional<bool> stdin_null;
    std::optional<bool> fork_after_authentication;
    std::optional<std::string> remote_command;
    std::optional<std::string> local_command;
    std::optional<bool> permit_local_command;
    std::vector<std::string> send_env; // name patterns
    std::vector<std::string> set_env;  // "NAME=value"
    std::optional<int> escape_char;    // a byte value or escape_char_none
    std::optional<bool> enable_escape_commandline;
    std::optional<longhaul::log_level> log_level;
    std::optional<std::string> log_facility; // SyslogFacility name, uppercase
    std::vector<std::string> log_verbose;

    // Forwarding
    std::optional<bool> forward_agent;
    std::optional<std::string> forward_agent_sock_path;
    std::optional<bool> forward_x11;
    std::optional<bool> forward_x11_trusted;
    std::optional<int> forward_x11_timeout;
    std::optional<std::string> xauth_location;
    std::optional<bool> gateway_ports;
    std::optional<bool> exit_on_forward_failure;
    std::optional<bool> clear_all_forwardings;
    std::vector<forward_spec> local_forwards;  // LocalForward and DynamicForward
    std::vector<forward_spec> remote_forwards;
    std::vector<std::string> permit_remote_open; // "any", "none" or host:port entries
    std::optional<std::string> stdio_forward_host; // -W
    int stdio_forward_port = 0;
    std::optional<unsigned> stream_local_bind_mask;
    std::optional<bool> stream_local_bind_unlink;
    std::optional<longhaul::tunnel_request> tunnel;
    std::optional<int> tunnel_local;  // tun_id_any for "any"
    std::optional<int> tunnel_remote;

    // Multiplexing
    std::optional<longhaul::control_master> control_master;
    std::optional<std::string> control_path;
    std::optional<bool> control_persist;
    int control_persist_timeout = 0; // seconds; 0 = forever

    // Host name canonicalization (parsed; no DNS canonicalization is done)
    std::optional<longhaul::canonicalize_hostname> canonicalize_hostname;
    std::vector<std::string> canonical_domains;
    std::optional<int> canonicalize_max_dots;
    std::optional<bool> canonicalize_fallback_local;
    std::vector<permitted_cname> canonicalize_permitted_cnames;

    // Parsing
    std::optional<std::string> ignore_unknown;
};

} // namespace longhaul
