// The SSH transport layer as a sans-I/O core (RFC 4253, RFC 8308, OpenSSH
// strict key exchange). It owns no socket, thread or clock: the driver feeds
// received bytes in, drains bytes to send out, passes the time in, and reacts
// to events. A client core and a server core can be wired together in memory.
//
//   driver                          transport
//   read(sock, input_space()) ───▶  commit_input(n)
//   loop: ev = poll()         ◀───  events (payloads for the upper layer, ...)
//   send(payload)             ───▶  packets appended to the output
//   write(sock, output())     ◀───  consume_output(n)
//   timer at next_deadline()  ───▶  advance_time(now)
#pragma once

#include "common/buffer.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/private_key.hpp"
#include "common/random.hpp"
#include "common/transport/algorithms.hpp"
#include "common/transport/key_exchange.hpp"
#include "common/transport/messages.hpp"
#include "common/transport/packet_codec.hpp"
#include "common/transport/transport_state.hpp"
#include "common/transport/version.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace longhaul {

using steady_time = std::chrono::steady_clock::time_point;

struct transport_config {
    transport_role role = transport_role::client;
    std::string software_version = "Longhaul_0.1";
    std::string version_comments;
    // Name-lists in preference order; the same lists are offered for both directions.
    std::string kex_algorithms = default_kex_algorithms();
    std::string host_key_algorithms = default_host_key_algorithms();
    std::string ciphers = default_ciphers();
    std::string macs = default_macs();
    std::string compression = "none";
    // Server: host keys; host_key_algorithms is filtered to what they can sign.
    std::vector<std::shared_ptr<const private_key>> host_keys;
    // Server: host keys whose private halves are held elsewhere (sshd's
    // privileged monitor). When host_key_signer is set, host_public_keys
    // lists the keys (host_keys is not used) and every host key signature
    // comes from the callback, in private_key::sign's format. An error from
    // it, or a signature that does not verify with `key`, fails the key
    // exchange here.
    std::vector<public_key> host_public_keys;
    std::function<result<bytes>(const public_key& key, std::string_view sig_alg, byte_span data)> host_key_signer;
    // Server: certificates of the host keys (sshd's HostCertificate). A
    // certificate whose key is one of the host keys adds its certificate
    // algorithms (as allowed by host_key_algorithms) to the offer, in
    // OpenSSH's order; when one is negotiated, K_S is the certificate and
    // the certified key signs with the plain algorithm. Empty: nothing
    // about the offer changes.
    std::vector<certificate> host_certificates;
    // Server: groups for diffie-hellman-group-exchange; empty means the
    // built-in RFC 3526 groups (what sshd falls back to without a moduli file).
    gex_group_provider gex_groups;
    // OpenSSH's RekeyLimit: 0 bytes means the cipher's default; 0 s disables
    // time-based rekeying.
    std::uint64_t rekey_limit_bytes = 0;
    // A client re-keying sends its kex method's first message with its
    // KEXINIT when the server's last KEXINIT named the same algorithms first
    // (first_kex_packet_follows, RFC 4253 §7). Off only to measure it.
    bool guess_rekey = true;
    std::chrono::seconds rekey_interval{0};
    bool strict_kex = true;
    // Client: offer ext-info-c. Server: answer it with EXT_INFO carrying
    // server_sig_algs (and any extra extensions).
    bool ext_info = true;
    std::string server_sig_algs;
    std::vector<std::pair<std::string, std::string>> extra_extensions;
    // CryptoThreads for the driver (issue 13): threads that seal and open
    // packets, -1 automatic (self-tuned), 0 or 1 serial. The core itself
    // only uses an engine lent to it (set_crypto_engine()).
    int crypto_threads = -1;
};

enum class transport_event_type {
    none,          // nothing more until more input, time or a decision
    banner_line,   // client: a line the server sent before its version (text)
    peer_version,  // the peer's identification line was received (text)
    host_key,      // client: the server proved possession of host_key; call accept_host_key() or reject_host_key()
    kex_complete,  // new keys are in force in both directions
    payload,       // a message for the upper layer (payload[0] is its number; seq for UNIMPLEMENTED replies)
    ext_info,      // the peer's EXT_INFO was received (see extensions())
    debug,         // SSH_MSG_DEBUG (text, always_display)
    unimplemented, // the peer did not implement our message with sequence number seq
    disconnected,  // the connection is over (reason, text, local)
};

struct transport_event {
    transport_event_type type = transport_event_type::none;
    byte_span payload;
    std::uint32_t seq = 0;
    std::string_view text;
    disconnect_reason reason = disconnect_reason::by_application;
    errc error = errc::ok; // disconnected: the local error, or peer_disconnected / connection_closed
    bool local = false;
    bool always_display = false;
    const public_key* host_key = nullptr;
    // host_key: the server's certificate when a certificate algorithm was
    // negotiated (host_key is then the key it certifies), else nullptr.
    const certificate* host_certificate = nullptr;
};

class transport {
public:
    transport(transport_config config, random_source& rng, steady_time now);
    // Continues a connection another process established (sshd's monitor
    // taking over from its sandboxed child, issue 12): no version line and
    // no KEXINIT are sent, the keys, sequence numbers and counters are
    // `state`'s, and poll() processes state.unread_input before anything
    // read later. `config` must have state's role; a server's needs the
    // host keys for later key exchanges. A state that is invalid (see
    // validate_transport_state()) or keys that cannot be set up leave the
    // core closed: poll() reports `disconnected` and nothing is sent.
    transport(transport_config config, random_source& rng, steady_time now, transport_state state);
    ~transport();
    transport(const transport&) = delete;
    transport& operator=(const transport&) = delete;

    // --- input ---
    // Space to read into (at most `max`, possibly less when the input buffer
    // is full: read nothing then, poll() first). Invalidates earlier events.
    mutable_byte_span input_space(std::size_t max = 256 * 1024);
    void commit_input(std::size_t n);
    void feed(byte_span bytes);
    // The byte stream from the peer has ended.
    void input_eof();

    // --- events ---
    // Processes buffered input until something happens. Spans in the event
    // are valid until the next call on this transport.
    transport_event poll();

    // --- output ---
    // Every packet in it is sealed (with a crypto engine, the packets queued
    // since the last call are sealed here, as one batch).
    byte_span output() { return sender_.output().data(); }
    void consume_output(std::size_t n) noexcept
    {
        n = std::min(n, sender_.output().size());
        sender_.consume_output(n);
        stats_.bytes_out += n;
    }
    std::size_t output_size() const noexcept { return sender_.output().size(); }
    // Output plus the payloads held back during a key exchange: what a
    // producer's backpressure must count, or a rekey at full speed lets it
    // queue a whole channel window in memory.
    std::size_t queued_size() const noexcept { return output_size() + deferred_bytes_; }

    // --- sending upper-layer messages ---
    // Messages sent during a key exchange are held and sent after NEWKEYS.
    result<void> send(byte_span payload);
    // Zero-copy form of send(): fill up to `max` bytes, then commit.
    mutable_byte_span prepare_payload(std::size_t max);
    result<void> commit_payload(std::size_t len);
    void send_unimplemented(std::uint32_t seq);
    void send_ignore(std::size_t len);
    void send_debug(bool always_display, std::string_view message);

    // --- control ---
    void accept_host_key();
    void reject_host_key(std::string_view why);
    // Starts a key re-exchange unless one is running.
    void request_rekey();
    // Sends DISCONNECT and closes; poll() then reports `disconnected`.
    void disconnect(disconnect_reason reason, std::string_view description);
    // User authentication succeeded (server: SUCCESS sent; client: SUCCESS
    // received). Starts zlib@openssh.com and allows automatic rekeying:
    // like OpenSSH, no re-exchange is started by volume or time before
    // this (OpenSSH's sshd refuses KEXINIT during user authentication).
    void user_authenticated();
    // Server: from now on host key signatures (key re-exchanges) come from
    // `signer`, and this core lets go of the private keys (sshd's process
    // that serves a user holds none; its root parent signs). Refused
    // (protocol_error) during a key exchange.
    result<void> use_host_key_signer(
        std::function<result<bytes>(const public_key& key, std::string_view sig_alg, byte_span data)> signer);
    void advance_time(steady_time now);
    // Lends a crypto engine (issue 13): packets are then sealed and opened
    // in batches on its threads. It takes effect once the user is
    // authenticated (no thread is started for a peer that has not logged
    // in, and sshd and ssh -f fork at that point). nullptr: serial again.
    // The engine must outlive the transport or be withdrawn first.
    void set_crypto_engine(crypto_engine* engine);
    // When advance_time() should next be called (time-based rekey), if ever.
    std::optional<steady_time> next_deadline() const;

    // --- state ---
    bool closed() const noexcept { return closed_; }
    // True once the first key exchange completed in both directions.
    bool established() const noexcept { return established_; }
    bool kex_in_progress() const noexcept { return kex_.active; }
    // True when a payload sent now goes out at once, not held for a key
    // exchange (RFC 4253 §7.1: from our KEXINIT to our NEWKEYS).
    bool may_send_now() const noexcept;
    bool strict_kex() const noexcept { return strict_; }
    const negotiated_algorithms& algorithms() const noexcept { return algs_; }
    const identification& peer_identification() const noexcept { return peer_id_; }
    const std::string& local_identification() const noexcept { return local_id_; }
    byte_span session_id() const noexcept { return session_id_; }
    const std::map<std::string, std::string>& peer_extensions() const noexcept { return peer_extensions_; }
    // The server's host key of the first key exchange (later ones must use
    // it): the client's accepted one, or the one the server signed with.
    const std::optional<public_key>& server_host_key() const noexcept { return host_key_; }
    // The certificate the server presented in the first key exchange (a
    // certificate algorithm was negotiated; server: the one it sent), else
    // empty. publickey-hostbound and session-bind name it rather than the
    // key, as OpenSSH's initial_hostkey.
    const std::optional<certificate>& server_host_certificate() const noexcept { return host_certificate_; }
    // Client: the server's signature of the first exchange hash (the
    // session id), as sent: with the key and the session id it lets an
    // agent check which host a connection authenticates to
    // (session-bind@openssh.com).
    byte_span server_signature() const noexcept { return server_signature_; }
    const transport_stats& stats() const noexcept { return stats_; }
    std::uint32_t send_sequence() const noexcept { return sender_.sequence(); }
    std::uint32_t receive_sequence() const noexcept { return receiver_.sequence(); }
    const transport_config& config() const noexcept { return config_; }
    transport_role role() const noexcept { return config_.role; }

    // --- hand-off (issue 12) ---
    // The state another process needs to carry on the connection (the
    // import constructor). Only between packets of an established
    // connection: errc::protocol_error during a key exchange, before the
    // first one completed or while its kex_complete event is pending;
    // errc::unsupported once a compression stream took data (its history
    // cannot be moved; zlib@openssh.com started by user_authenticated() has
    // none until the next packet); errc::incomplete while output is queued
    // or held back or packets were opened ahead (drain and retry);
    // errc::connection_closed when closed or at the end of input.
    // export_refusal() says why in words.
    result<transport_state> export_state() const;
    // Empty when export_state() would succeed.
    std::string_view export_refusal() const noexcept;

private:
    struct kex_state {
        bool active = false;          // KEXINIT sent or received, NEWKEYS not yet both ways
        bool kexinit_sent = false;
        bool peer_kexinit = false;
        bool ignore_guess = false;    // drop the peer's wrongly guessed first kex packet
        bool guess_sent = false;      // we (client) sent our first kex packet with KEXINIT
        bool hash_done = false;       // exchange hash final (and host key verified)
        bool newkeys_sent = false;
        bool newkeys_received = false;
        std::uint32_t kexinit_seq = 0; // our KEXINIT's sequence number (a peer may refuse it)
        bytes our_kexinit, peer_kexinit_payload;
        negotiated_algorithms algs;
        std::unique_ptr<key_exchange> run;
    };

    bool is_client() const noexcept { return config_.role == transport_role::client; }
    transport_event handle_version();
    transport_event dispatch(const received_packet& pkt);
    transport_event handle_kexinit(const received_packet& pkt);
    transport_event handle_kex_message(const received_packet& pkt);
    transport_event handle_newkeys(const received_packet& pkt);
    transport_event handle_ext_info(byte_span payload);
    transport_event handle_disconnect(byte_span payload);
    transport_event after_exchange_hash();
    void send_kexinit();
    void send_newkeys();
    void send_ext_info();
    bool install_keys(bool outgoing);
    void finish_kex();
    void flush_deferred();
    void maybe_rekey();
    // Bytes under one key in one direction: RekeyLimit, at most the cipher's own bound.
    std::uint64_t rekey_limit_for(std::string_view cipher) const;
    transport_event fail(errc e, std::string description);
    transport_event fail(errc e, disconnect_reason reason, std::string description);
    // Closes (sending DISCONNECT unless the peer is gone); poll() reports it.
    void close_with(errc e, disconnect_reason reason, std::string description);
    transport_event closed_event();
    // A server host key: its public half, and the local private key that
    // signs with it (nullptr when config_.host_key_signer does).
    struct host_key_ref {
        const public_key* key = nullptr;
        const private_key* local = nullptr;
        // For a certificate algorithm: the certificate sent as K_S.
        const certificate* cert = nullptr;
    };
    std::string our_host_key_algorithms() const;
    kex_context make_kex_context(const negotiated_algorithms& algs, bytes our_kexinit, bytes peer_kexinit) const;
    host_key_ref host_key_for(std::string_view alg) const;
    std::vector<const public_key*> host_key_list() const; // the server's keys, in order
    void import_state(transport_state& state);
    std::pair<errc, std::string_view> export_blocker() const noexcept;

    transport_config config_;
    random_source& rng_;
    steady_time now_;
    steady_time last_kex_time_;

    std::string local_id_;
    identification peer_id_;
    bool version_received_ = false;
    std::size_t pre_version_lines_ = 0;
    std::string line_; // last banner line, for the event

    byte_buffer in_;
    bool eof_ = false;
    packet_sender sender_;
    packet_receiver receiver_;

    kex_state kex_;
    negotiated_algorithms algs_;
    // Client: the names the server's last KEXINIT listed first (kex, host
    // key), from which a re-exchange predicts whether its guess is right.
    std::string peer_first_kex_, peer_first_host_key_;
    bool established_ = false;
    bool strict_ = false;
    bool peer_wants_ext_info_ = false;
    bool awaiting_host_key_ = false;
    bool authenticated_ = false;
    crypto_engine* crypto_engine_ = nullptr;
    bool kex_complete_pending_ = false;
    std::uint64_t rekey_limit_out_ = ~std::uint64_t(0);
    std::uint64_t rekey_limit_in_ = ~std::uint64_t(0);
    bytes session_id_;
    std::optional<public_key> host_key_;
    std::optional<certificate> host_certificate_;
    bytes server_signature_;
    std::map<std::string, std::string> peer_extensions_;
    std::uint32_t ext_info_received_ = 0; // EXT_INFO messages taken from the peer
    // The keys in force each way, kept for export_state().
    direction_keys out_keys_, in_keys_;

    std::deque<bytes> deferred_;
    std::size_t deferred_bytes_ = 0;
    bytes staging_;           // prepare_payload() target while sending is deferred
    bool staging_deferred_ = false;

    bool closed_ = false;
    bool close_reported_ = false;
    transport_event close_event_;
    std::string close_text_;
    std::string debug_text_;
    transport_stats stats_;
};

} // namespace longhaul
