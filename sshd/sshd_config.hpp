// sshd_config(5): loading the server configuration (files, Include, -o
// lines), evaluating Match blocks per connection, and printing the result
// the way `sshd -T` does. The behaviour and the messages follow OpenSSH 9.2
// as Debian 12 ships it, so that an administrator's existing configuration
// and habits (sshd -t, sshd -T -C ...) carry over unchanged.
#pragma once

#include "common/keys/fingerprint.hpp"
#include "common/result.hpp"
#include "sshd/penalty_table.hpp"

#include <sys/socket.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

enum class permit_root_login_mode { no, yes, prohibit_password, forced_commands_only };
enum class address_family_mode { any, inet, inet6 };
enum class compression_mode { no, delayed };           // "yes" means delayed, as in OpenSSH
enum class forwarding_mode { no, yes, local, remote }; // AllowTcpForwarding / AllowStreamLocalForwarding
enum class gateway_ports_mode { no, yes, client_specified };
enum class ignore_rhosts_mode { no, yes, shosts_only };
enum class tunnel_mode { no, point_to_point, ethernet, yes };
enum class syslog_level { quiet, fatal, error, info, verbose, debug1, debug2, debug3 };
enum class syslog_facility { daemon, user, auth, authpriv, local0, local1, local2, local3, local4, local5, local6, local7 };

// "DEBUG1" -> debug1 and so on, case-insensitive, as LogLevel accepts them.
std::optional<syslog_level> parse_syslog_level(std::string_view name);
std::string_view syslog_level_name(syslog_level l) noexcept; // "INFO", "DEBUG" (for debug1), ...
std::optional<syslog_facility> parse_syslog_facility(std::string_view name);
std::string_view syslog_facility_name(syslog_facility f) noexcept;
// The <syslog.h> facility for openlog() (LOG_AUTH for auth, ...).
int syslog_facility_code(syslog_facility f) noexcept;

// One socket to listen on, resolved when the configuration is loaded
// (OpenSSH resolves ListenAddress names at start-up too).
struct listen_address {
    sockaddr_storage addr{};
    socklen_t addr_len = 0;
    std::string host; // numeric form, without brackets
    int port = 0;
    std::string rdomain; // empty: none
};

struct subsystem_config {
    std::string name;
    std::string command; // the program (first word)
    std::string args;    // the program and its arguments, joined by single spaces
};

// The effective configuration for the server or for one connection. Values
// are what sshd_config says (with OpenSSH 9.2's defaults filled in); where
// this server does not implement a feature yet the configured value is kept
// (so -T prints it) and the *_enabled() accessors report it off.
struct server_config {
    // --- Listening and start-up (global only) ---
    std::vector<int> ports;
    address_family_mode address_family = address_family_mode::any;
    std::vector<listen_address> listen_addresses; // in OpenSSH's -T order
    std::vector<std::string> host_key_files;
    std::vector<std::string> host_certificate_files;
    std::string host_key_agent;  // empty: none
    std::string pid_file = "/run/sshd.pid"; // empty: none
    std::string moduli_file = "/etc/ssh/moduli";
    std::string xauth_location = "/usr/bin/xauth"; // empty: none
    int login_grace_time = 120;                      // seconds, 0: none
    syslog_facility log_facility = syslog_facility::auth;
    bool use_pam = false;
    bool use_dns = false;
    bool print_motd = true;
    bool print_last_log = true;
    bool strict_modes = true;
    bool tcp_keep_alive = true;
    bool permit_user_environment = false;
    std::string permit_user_environment_patterns; // "LANG,LC_*" form; empty: all names when enabled
    compression_mode compression = compression_mode::delayed;
    fingerprint_hash fingerprint = fingerprint_hash::sha256;
    std::string version_addendum; // empty: none
    bool debian_banner = true;    // Debian: append the distribution to the version string
    std::vector<subsystem_config> subsystems;
    int max_startups_begin = 10, max_startups_rate = 30, max_startups = 100;
    int per_source_max_startups = INT_MAX; // INT_MAX: none
    int per_source_netblock_ipv4 = 32, per_source_netblock_ipv6 = 128;
    penalty_settings per_source_penalties;  // PerSourcePenalties (sshd/penalty_table.hpp)
    std::string per_source_penalty_exempt; // PerSourcePenaltyExemptList; empty: none
    std::string security_key_provider = "internal";
    std::string gssapi_kex_algorithms =
        "gss-group14-sha256-,gss-group16-sha512-,gss-nistp256-sha256-,gss-curve25519-sha256-,gss-group14-sha1-,gss-gex-sha1-";
    bool gssapi_cleanup_credentials = true;
    bool gssapi_strict_acceptor_check = true;
    bool gssapi_key_exchange = false;
    bool gssapi_store_credentials_on_rekey = false;
    bool kerberos_or_local_passwd = true;
    bool kerberos_ticket_cleanup = true;
    bool ignore_user_known_hosts = false;

    // Algorithm lists after "+ - ^" are applied, as comma-separated
    // name-lists. ciphers, macs, kex_algorithms, host_key_algorithms and
    // pubkey_accepted_algorithms hold only what this build implements
    // (OpenSSH's list filtered; a configuration naming umac-64 still loads);
    // the others are OpenSSH's lists as configured (unused here).
    std::string ciphers;
    std::string macs;
    std::string kex_algorithms;
    std::string host_key_algorithms;
    // The certificate algorithms HostKeyAlgorithms allows (in its order),
    // kept apart so that host_key_algorithms and `sshd -T` stay as before:
    // offered only for keys with a HostCertificate.
    std::string host_certificate_algorithms;
    // HostKeyAlgorithms as `sshd -T` prints it, as OpenSSH's does: the
    // configured list with its certificate algorithms, in its order (less
    // the security-key ones, which this server cannot serve).
    std::string host_key_algorithms_shown;
    std::string pubkey_accepted_algorithms;
    std::string hostbased_accepted_algorithms;
    std::string ca_signature_algorithms;

    // --- Settings a Match block may change ---
    permit_root_login_mode permit_root_login = permit_root_login_mode::prohibit_password;
    bool pubkey_authentication = true;
    bool password_authentication = true;
    bool kbd_interactive_authentication = true;
    bool permit_empty_passwords = false;
    bool hostbased_authentication = false;
    bool hostbased_uses_name_from_packet_only = false;
    bool kerberos_authentication = false;
    bool gssapi_authentication = false;
    ignore_rhosts_mode ignore_rhosts = ignore_rhosts_mode::yes;
    std::vector<std::string> authentication_methods; // empty: "any"
    int max_auth_tries = 6;
    int max_sessions = 10;
    int client_alive_interval = 0;
    int client_alive_count_max = 3;
    int required_rsa_size = 1024;
    int unused_connection_timeout = 0; // seconds, 0: none
    std::vector<std::string> channel_timeouts;
    syslog_level log_level = syslog_level::info;
    std::vector<std::string> log_verbose;
    std::uint64_t rekey_limit = 0; // bytes, 0: the cipher's default
    int rekey_interval = 0;        // seconds, 0: none
    // Receive-window limits per channel and per connection, bytes (0: auto).
    std::uint64_t channel_window_max = 0;
    std::uint64_t connection_window_max = 0;
    // Threads that seal and open packets: -1 = auto (self-tuned), 0 = serial.
    int crypto_threads = -1;
    int ipqos_interactive = 0x10;  // Debian keeps lowdelay/throughput
    int ipqos_bulk = 0x08;
    std::vector<std::string> authorized_keys_files{".ssh/authorized_keys", ".ssh/authorized_keys2"};
    std::string authorized_keys_command;      // empty: none
    std::string authorized_keys_command_user; // empty: none
    std::string authorized_principals_file;
    std::string authorized_principals_command;
    std::string authorized_principals_command_user;
    std::string trusted_user_ca_keys;
    std::string revoked_keys;
    bool pubkey_auth_touch_required = false;
    bool pubkey_auth_verify_required = false;
    std::vector<std::string> allow_users, deny_users, allow_groups, deny_groups;
    std::vector<std::string> accept_env;
    std::vector<std::string> set_env; // "NAME=value"
    std::string banner;               // empty: none
    std::string force_command;        // empty: none
    std::string chroot_directory;     // empty: none
    bool permit_tty = true;
    bool permit_user_rc = true;
    bool expose_auth_info = false;
    forwarding_mode allow_tcp_forwarding = forwarding_mode::yes;
    forwarding_mode allow_stream_local_forwarding = forwarding_mode::yes;
    bool allow_agent_forwarding = true;
    bool disable_forwarding = false;
    gateway_ports_mode gateway_ports = gateway_ports_mode::no;
    std::vector<std::string> permit_open;   // empty: any
    std::vector<std::string> permit_listen; // empty: any
    tunnel_mode permit_tunnel = tunnel_mode::no;
    bool x11_forwarding = false;
    int x11_display_offset = 10;
    bool x11_use_localhost = true;
    int stream_local_bind_mask = 0177;
    bool stream_local_bind_unlink = false;

    // What the server does with the features of later issues: off until
    // they exist (unsupported_settings() lists what was asked for).
    bool tunnel_enabled() const noexcept { return false; }
};

// A configuration problem, with OpenSSH's wording and file:line. what() is
// every message, one per line, ready for stderr; sshd exits 255 as OpenSSH's
// fatal() does (see exit_status()).
class config_error : public std::runtime_error {
public:
    explicit config_error(const std::string& message, int exit_status = 255)
        : std::runtime_error(message), exit_status_(exit_status)
    {
    }
    // 255 like OpenSSH's fatal(); 1 for an unreadable file or a bad -o option.
    int exit_status() const noexcept { return exit_status_; }

private:
    int exit_status_;
};

// Facts about a connection that Match criteria test. Each attribute is
// optional: in a real connection sshd knows them all; `sshd -T -C` may leave
// some out, and then (as in OpenSSH's test mode) criteria on them do not match,
// except LocalPort whose absence is an error.
struct connection_info {
    std::optional<std::string> user;
    std::vector<std::string> groups;   // names of the user's primary and supplementary groups
    std::optional<std::string> host;   // canonical host name with UseDNS, else the address
    std::optional<std::string> address;
    std::optional<std::string> local_address;
    std::optional<int> local_port;
    std::optional<std::string> rdomain;
    bool test = false; // from -C
};

// Parses `sshd -C` specifications: "user=alice,host=h,addr=1.2.3.4,laddr=...,
// lport=22,rdomain=x". The user's groups are looked up on this machine.
// On failure `error` holds OpenSSH's message ("Invalid test mode
// specification foo=bar").
result<connection_info> parse_connection_spec(std::string_view spec, std::string& error);

// Names of the primary and supplementary groups of a local user (empty when
// the user does not exist).
std::vector<std::string> user_group_names(const std::string& user);

// The bytes a configuration was parsed from: every file read (the main one
// and what Include named) and what each Include pattern matched. sshd
// re-executes itself for every connection (main.cpp) and parses exactly
// these again, so an edit on disk takes effect at SIGHUP only, as OpenSSH's
// re-executed sshd-session receives its configuration from the listener.
struct config_sources {
    std::vector<std::pair<std::string, std::string>> files;             // path, contents, in reading order
    std::vector<std::pair<std::string, std::vector<std::string>>> globs; // Include pattern, files matched
};

struct config_load_options {
    std::string path = "/etc/ssh/sshd_config";
    std::vector<std::string> command_line;            // -o lines, applied first ("command-line" line 0)
    std::vector<int> command_line_ports;              // -p: config Port lines are then ignored
    std::vector<std::string> command_line_host_keys;  // -h: host keys before any HostKey line
    std::string include_base = "/etc/ssh";            // where relative Include paths point
    bool allow_include = true;     // false: Include matches nothing (fuzzing)
    bool resolve_addresses = true; // false: ListenAddress names are not resolved (fuzzing)
    // Set: files and Include patterns come from here, never from disk (a
    // file or pattern it lacks reads as missing / matching nothing).
    std::shared_ptr<const config_sources> replay;
};

// A line for sshd's log at a level, as OpenSSH would write it. The
// libraries here return these instead of logging themselves.
struct log_message {
    syslog_level level;
    std::string text;
};
// What the parser wants logged, e.g. (INFO)
// "/etc/ssh/sshd_config line 3: Deprecated option RSAAuthentication".
using config_notice = log_message;

class sshd_config {
public:
    // Reads options.path and what it includes. Throws config_error with
    // OpenSSH's messages ("<file>: line 3: Bad configuration option: Foo" and
    // "<file>: terminating, 1 bad configuration options"; "<file> line 3:
    // Badly formatted port number."; "<file>: No such file or directory").
    static sshd_config load(const config_load_options& options);
    // The same for text in memory named `filename` (tests, fuzzing).
    static sshd_config parse(std::string_view text, const std::string& filename,
                             const config_load_options& options = {});

    sshd_config(sshd_config&&) noexcept;
    sshd_config& operator=(sshd_config&&) noexcept;
    ~sshd_config();

    // The configuration outside every Match block (what the listener uses).
    const server_config& global() const noexcept;
    // What load() read (empty after parse()).
    const config_sources& sources() const noexcept;
    // The configuration for one connection: the global one with the
    // settings of every matching Match block applied (first value wins
    // among the blocks; a block's value overrides the global one). Throws
    // config_error for a test-mode spec missing a required attribute.
    server_config for_connection(const connection_info& info) const;
    // Whether any Match block exists (sshd may then skip re-evaluation).
    bool has_match_blocks() const noexcept;

    // Deprecated/unsupported keyword notices met while loading.
    const std::vector<config_notice>& notices() const noexcept;

    struct impl;

private:
    explicit sshd_config(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

// `sshd -T`: one "keyword value" line per setting, lowercase keywords, in
// OpenSSH 9.2's order and formats.
std::string dump(const server_config& config);

// Settings that ask for something this server does not do yet (GSSAPI,
// Kerberos), one log line each, e.g.
// "GSSAPIAuthentication/GSSAPIKeyExchange yes: not supported yet, treated as no". sshd
// logs them at start (and may log them per connection after Match).
std::vector<std::string> unsupported_settings(const server_config& config);

} // namespace longhaul
