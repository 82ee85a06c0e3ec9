#include "ssh/client.hpp"

#include "common/physical_memory.hpp"
#include "common/text.hpp"
#include "ssh/detail/ssh_client.hpp"
#include "ssh/algorithm_names.hpp"
#include "ssh/host_key_check.hpp"
#include "ssh/known_hosts.hpp"
#include "ssh/prompt/prompt.hpp"
#include "ssh/tokens.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <iostream>


namespace longhaul::detail {

namespace {

bool is_loopback(const std::string& address)
{
    in_addr a4{};
    in6_addr a6{};
    if (inet_pton(AF_INET, address.c_str(), &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, address.c_str(), &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}

} // namespace

bool ssh_client::connect_stream()
{
    std::string error;
    if (cfg_.proxy_command && *cfg_.proxy_command != "none") {
        std::string cmd;
        try {
            cmd = expand_proxy_command(cfg_);
        } catch (const std::exception& e) {
            log_.error(e.what());
            return false;
        }
        log_.debug("Executing proxy command: exec " + cmd);
        auto s = connect_proxy_command("exec " + cmd, error);
        if (!s) {
            log_.error(error);
            return false;
        }
        stream_ = *s;
        return true;
    }
    connect_params p;
    p.host = host_;
    p.port = port_;
    p.family = cfg_.address_family == address_family::inet    ? AF_INET
               : cfg_.address_family == address_family::inet6 ? AF_INET6
                                                              : AF_UNSPEC;
    p.bind_address = cfg_.bind_address.value_or("");
    p.timeout = std::chrono::seconds(std::max(0, cfg_.connect_timeout.value_or(-1)));
    p.attempts = cfg_.connection_attempts.value_or(1);
    auto s = connect_tcp(p, error);
    if (!s) {
        log_.error(error);
        return false;
    }
    stream_ = *s;
    log_.debug("Connecting to " + host_ + " [" + stream_.peer_address + "] port " + std::to_string(port_) + ".");
    log_.debug("Connection established.");
    return true;
}

transport_config ssh_client::make_transport_config()
{
    transport_config tc;
    tc.role = transport_role::client;
    tc.kex_algorithms = cfg_.kex_algorithms.value_or(default_kex_algorithms());
    tc.ciphers = cfg_.ciphers.value_or(default_ciphers());
    tc.macs = cfg_.macs.value_or(default_macs());
    if (cfg_.host_key_algorithms) {
        tc.host_key_algorithms = *cfg_.host_key_algorithms;
    } else {
        // As OpenSSH: prefer the algorithms whose keys we already know for this host.
        known_host_keys known;
        const std::string name = known_hosts_name(host_, port_, cfg_.host_key_alias);
        for (const auto& f : cfg_.user_known_hosts_files)
            known.load_file(name, f, sink_);
        for (const auto& f : cfg_.global_known_hosts_files)
            known.load_file(name, f, sink_);
        tc.host_key_algorithms = order_host_key_algorithms(default_client_host_key_algorithms(), known);
    }
    tc.compression = cfg_.compression.value_or(false) ? "zlib@openssh.com,zlib,none" : "none";
    if (cfg_.rekey_limit && *cfg_.rekey_limit > 0)
        tc.rekey_limit_bytes = static_cast<std::uint64_t>(*cfg_.rekey_limit);
    if (cfg_.rekey_interval)
        tc.rekey_interval = std::chrono::seconds(*cfg_.rekey_interval);
    tc.crypto_threads = cfg_.crypto_threads.value_or(-1);
    return tc;
}

int ssh_client::run()
{
    host_ = cfg_.hostname.value_or(cfg_.host_arg);
    port_ = cfg_.port.value_or(22);
    if (!connect_stream())
        return 255;

    core_ = std::make_unique<transport>(make_transport_config(), rng_, std::chrono::steady_clock::now());
    log_.debug("Local version string " + core_->local_identification());
    driver_ = std::make_unique<transport_driver>(io_, stream_.fd, *core_);
    connection_config cc;
    cc.window = window_limits(cfg_.channel_window_max.value_or(0), cfg_.connection_window_max.value_or(0),
                              physical_memory_bytes());
    layer_ = std::make_unique<session_layer>(*core_, session_role::client);
    conn_ = &layer_->open_connection(cc);
    runner_ = std::make_unique<connection_runner>(io_, *driver_, *conn_);
    runner_->set_logger(&log_);
    if (cfg_.metrics.value_or(false)) {
        std::string error;
        if (!runner_->enable_metrics(cfg_.metrics_path.value_or(default_metrics_path),
                                     std::chrono::seconds(cfg_.metrics_interval.value_or(1)), error))
            log_.error(error);
    }
    // The server's forwarded-tcpip / forwarded-streamlocal opens (-R).
    remote_forwards_ = std::make_unique<client_remote_forwards>(
        *runner_, log_,
        [this](std::string_view name, const bytes& data, bool want_reply, std::function<void(bool, byte_span)> cb) {
            send_global(name, data, std::move(cb), want_reply);
        },
        cfg_.permit_remote_open);
    remote_forwards_->register_in(layer_->channel_types());
    // The server's auth-agent@openssh.com opens (-A).
    agent_forwards_ = std::make_unique<client_agent_forwarding>(*runner_, log_);
    agent_forwards_->register_in(layer_->channel_types());
    // The server's x11 opens (-X, -Y).
    x11_forwards_ = std::make_unique<client_x11_forwarding>(*runner_, log_);
    x11_forwards_->register_in(layer_->channel_types());
    // No global request of the server is served.
    layer_->global_requests().set_unknown([this](connection& conn, std::string_view name, bool want_reply, byte_span) {
        log_.debug("client_input_global_request: rtype " + printable(name) + " want_reply " +
                   std::to_string(want_reply));
        if (want_reply)
            conn.reply_global(false);
    });
    runner_->on_global_reply = [this](bool success, byte_span data) {
        // Replies come in the order of the requests (RFC 4254 §4).
        if (global_replies_.empty())
            return;
        auto cb = std::move(global_replies_.front());
        global_replies_.pop_front();
        if (cb)
            cb(success, data);
    };

    // ConnectTimeout also bounds the banner exchange, as in ssh.
    if (cfg_.connect_timeout && *cfg_.connect_timeout > 0) {
        banner_timer_.expires_after(std::chrono::seconds(*cfg_.connect_timeout));
        banner_timer_.async_wait([this](const boost::system::error_code& ec) {
            if (ec || finished_)
                return;
            log_.error("Connection timed out during banner exchange");
            log_.error("Connection to " + host_ + " port " + std::to_string(port_) + " timed out");
            finish(255);
        });
    }
    signals_.add(SIGINT);
    signals_.add(SIGTERM);
    signals_.add(SIGHUP);
    signals_.add(SIGWINCH);
    std::function<void(const boost::system::error_code&, int)> on_signal = [this, &on_signal](
                                                                                const boost::system::error_code& ec,
                                                                                int sig) {
        if (ec || finished_)
            return;
        if (sig == SIGWINCH) {
            if (session_)
                session_->window_changed();
            mux_window_changed();
            signals_.async_wait(on_signal);
            return;
        }
        // VERBOSE, as OpenSSH's client loop says it: a ProxyJump hop is
        // ended by SIGHUP every time, silently.
        log_.verbose("Killed by signal " + std::to_string(sig) + ".");
        finish(255);
    };
    signals_.async_wait(on_signal);

    driver_->start([this](const transport_event& ev) { on_transport_event(ev); },
                   [this](std::error_code) {
                       if (!finished_)
                           finish(status_);
                   });
    io_.run();
    raw_.reset();
    if (stream_.proxy_pid > 0)
        kill(stream_.proxy_pid, SIGHUP);
    return status_;
}

void ssh_client::finish_when_channels_closed()
{
    if (finished_)
        return;
    // OpenSSH's channel_still_open: any channel but listeners (ours are not
    // channels), opening ones included; the session's own may linger until
    // its CLOSE is answered.
    std::size_t others = conn_->channel_count();
    if (session_ && conn_->exists(session_->id))
        --others;
    if (others > 0 || mux_busy()) // mux clients keep a master
        return;
    if (session_ && session_->tty())
        log_.info("Connection to " + host_ + " closed.");
    finish(session_status_);
}

void ssh_client::finish(int status)
{
    if (finished_)
        return;
    finished_ = true;
    status_ = status;
    banner_timer_.cancel();
    alive_timer_.cancel();
    boost::system::error_code ignored;
    signals_.cancel(ignored);
    stop_mux();
    if (forwards_)
        forwards_->stop();
    if (remote_forwards_)
        remote_forwards_->stop();
    if (agent_forwards_)
        agent_forwards_->stop();
    if (x11_forwards_)
        x11_forwards_->stop();
    if (tunnel_)
        tunnel_->stop();
    if (runner_)
        runner_->stop();
    if (core_ && !core_->closed())
        core_->disconnect(disconnect_reason::by_application, "disconnected by user");
    if (driver_)
        driver_->close();
    raw_.reset();
}

void ssh_client::on_transport_event(const transport_event& ev)
{
    on_session_event(layer_->handle(ev, std::chrono::steady_clock::now()));
    pump_session();
}

void ssh_client::on_session_event(const session_event& e)
{
    switch (e.type) {
    case session_event_type::transport: report_transport_event(*e.transport); break;
    case session_event_type::first_kex: on_first_kex(); break;
    case session_event_type::client_auth: on_auth_event(*e.client_auth); break;
    case session_event_type::authenticated: on_authenticated(); break;
    case session_event_type::channel:
        runner_->dispatch(e.channel);
        if (session_closed_)
            finish_when_channels_closed();
        break;
    default: break;
    }
}

void ssh_client::report_transport_event(const transport_event& ev)
{
    switch (ev.type) {
    case transport_event_type::banner_line: log_.debug("kex_exchange_identification: banner line: " + std::string(ev.text)); break;
    case transport_event_type::peer_version:
        version_seen_ = true;
        banner_timer_.cancel();
        log_.debug("Remote protocol version " + core_->peer_identification().proto + ", remote software version " +
                   printable(core_->peer_identification().software));
        break;
    case transport_event_type::host_key: on_host_key(*ev.host_key); break;
    case transport_event_type::kex_complete:
        log_.debug("rekey completed");
        if (core_->stats().kex_guesses_right > guesses_logged_) {
            // The server took the ephemeral key we sent with our KEXINIT:
            // this re-exchange cost one round trip, not two.
            guesses_logged_ = core_->stats().kex_guesses_right;
            log_.debug("rekey: the server took our first key exchange packet with KEXINIT (guessed)");
        }
        break;
    case transport_event_type::debug:
        if (ev.always_display)
            log_.info(std::string(ev.text));
        else
            log_.debug("Remote: " + std::string(ev.text));
        break;
    case transport_event_type::unimplemented:
        log_.debug("Received SSH2_MSG_UNIMPLEMENTED for " + std::to_string(ev.seq));
        break;
    case transport_event_type::disconnected: report_disconnect(ev); break;
    default: break;
    }
}

void ssh_client::report_disconnect(const transport_event& ev)
{
    if (finished_)
        return;
    const std::string addr = stream_.peer_address == "UNKNOWN" ? "UNKNOWN" : stream_.peer_address;
    const std::string from = addr + " port " + std::to_string(stream_.proxy_pid > 0 ? 65535 : port_);
    std::string text(ev.text);
    if (!ev.local) {
        log_.info("Received disconnect from " + from + ":" + std::to_string(static_cast<std::uint32_t>(ev.reason)) +
                  ": " + text);
        log_.info("Disconnected from " + from);
    } else if (ev.error == errc::connection_closed) {
        if (!version_seen_)
            log_.error("kex_exchange_identification: Connection closed by remote host");
        log_.error("Connection closed by " + from);
    } else if (ev.error == errc::no_matching_algorithm) {
        log_.error("Unable to negotiate with " + from + ": " + text);
    } else if (ev.error == errc::strict_kex_violation) {
        // OpenSSH's ssh_packet_disconnect(): one line, nothing more.
        log_.info("Disconnecting " + from + ": " + text);
    } else if (ev.error == errc::host_key_rejected) {
        // verify_host_key already printed why.
    } else if (ev.error != errc::ok) {
        log_.error(text);
        log_.error("ssh_dispatch_run_fatal: Connection to " + from + ": " + std::string(to_string(ev.error)));
    }
    finish(session_ && status_ != 255 ? status_ : 255);
}

void ssh_client::on_host_key(const public_key& key)
{
    if (auto refusal = host_key_length_refusal(cfg_, key)) {
        log_.error(*refusal);
        core_->reject_host_key(*refusal);
        driver_->flush();
        finish(255);
        return;
    }
    // verify_host_key logs "Server host key: ..." (or "Server host
    // certificate: ..."), once, as OpenSSH does.
    const auto& server_cert = core_->server_host_certificate();
    const certificate* cert = server_cert ? &*server_cert : nullptr;
    host_key_target target;
    target.hostname = host_;
    target.port = port_;
    if (stream_.proxy_pid < 0) {
        target.address = stream_.peer_address;
        target.loopback = is_loopback(stream_.peer_address);
    }
    host_key_prompter ui;
    ui.read_line = [](const std::string& prompt) { return read_line(prompt); };
    host_key_verdict v = verify_host_key(cfg_, target, key, cert, *inv_.env, ui, rng_, sink_);
    if (!v.fatal.empty())
        log_.error(v.fatal);
    if (!v.accepted) {
        log_.error(std::string(host_key_verification_failed));
        core_->reject_host_key(host_key_verification_failed);
        driver_->flush();
        finish(255);
        return;
    }
    core_->accept_host_key();
}

void ssh_client::pump_session()
{
    for (;;) {
        if (finished_)
            return;
        const session_event e = layer_->poll(std::chrono::steady_clock::now());
        if (e.type == session_event_type::none) {
            driver_->flush();
            return;
        }
        on_session_event(e);
    }
}

void ssh_client::send_global(std::string_view name, const bytes& data, std::function<void(bool, byte_span)> on_reply,
                             bool want_reply)
{
    if (want_reply)
        global_replies_.push_back(std::move(on_reply));
    conn_->send_global_request(name, want_reply, data);
    driver_->flush();
}

// ServerAliveInterval: a probe once the server has been silent for the
// interval; ServerAliveCountMax of them unanswered end ssh with 255
// (alive_check.hpp: OpenSSH's count; logged at INFO, as OpenSSH does).
void ssh_client::arm_keepalive()
{
    const int interval = cfg_.server_alive_interval.value_or(0);
    if (interval <= 0)
        return;
    if (!alive_)
        alive_.emplace(std::chrono::seconds(interval), cfg_.server_alive_count_max.value_or(3));
    alive_timer_.expires_at(alive_next_);
    alive_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec || finished_)
            return;
        const auto step = alive_->on_timer(driver_->last_input(), std::chrono::steady_clock::now());
        if (step.what == alive_check::action::give_up) {
            log_.info("Timeout, server " + host_ + " not responding.");
            finish(255);
            return;
        }
        if (step.what == alive_check::action::probe) {
            // Anything the server sends answers it; the reply is certain to come.
            send_global("keepalive@openssh.com", {}, nullptr);
            driver_->flush();
        }
        alive_next_ = step.next;
        arm_keepalive();
    });
}

} // namespace longhaul::detail

namespace longhaul {

int run_client(client_invocation& inv)
{
    if (auto status = detail::try_mux_client(inv))
        return *status;
    detail::ssh_client c(inv);
    return c.run();
}

} // namespace longhaul
