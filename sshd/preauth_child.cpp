#include "sshd/preauth_child.hpp"

#include "channel/session/session_layer.hpp"
#include "common/random.hpp"
#include "common/text.hpp"
#include "common/transport/transport_state.hpp"
#include "sshd/connection_log.hpp"
#include "sshd/privsep/monitor_channel.hpp"
#include "sshd/privsep/monitor_messages.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <cerrno>
#include <chrono>
#include <optional>

namespace longhaul {

namespace {

using clock_type = std::chrono::steady_clock;
using namespace privsep;

// Reading from the client pauses while this much output waits (a client
// that sends requests and never reads cannot grow the child).
constexpr std::size_t preauth_output_pause = 4 * 1024 * 1024;
// How long the hand-off may take to write what is queued when there is
// no LoginGraceTime to bound it.
constexpr auto handoff_write_limit = std::chrono::seconds(30);

class preauth_child {
public:
    explicit preauth_child(preauth_child_setup s)
        : setup_(std::move(s)), monitor_(setup_.monitor_fd), log_("sshd", setup_.level)
    {
        // Each line waits for the monitor's acknowledgement, so it is in
        // the log before anything the child does next reaches the client
        // (a DISCONNECT after "maximum authentication attempts exceeded").
        log_.to_function([this](log_level l, std::string_view text) {
            std::string line(text.substr(0, max_log_line));
            if (text.size() > max_log_line)
                line.replace(max_log_line - 3, 3, "...");
            if (!decode_verdict(monitor_type::log, call(encode(log_request{l, std::move(line)}))))
                monitor_failed();
        });
    }

    int run();

private:
    // One request to the monitor and its reply; a dead or confused monitor
    // ends the child (nothing can be decided without it).
    bytes call(const bytes& request);
    [[noreturn]] void monitor_failed();

    server_auth_policy make_policy();
    void start_auth();
    // Hands transport events and the session layer's events to the
    // handlers; true once the client is authenticated.
    bool process();
    bool on_session_event(const session_event& e);
    void on_auth_event(server_auth_event& ev);
    void write_some();
    bool wait(std::optional<clock_type::time_point> deadline);
    void acknowledge_now();
    std::optional<clock_type::time_point> next_deadline() const;
    int hand_off();
    int finish_closed();
    void close_inherited_descriptors();
    server_auth* auth() noexcept { return layer_ ? layer_->server_auth_machine() : nullptr; }

    preauth_child_setup setup_;
    monitor_channel monitor_;
    logger log_;
    system_random rng_;
    std::optional<transport> core_;
    std::optional<session_layer> layer_;
    clock_type::time_point started_ = clock_type::now();
    bool eof_ = false;
    bool write_failed_ = false;
    bool closed_ = false;
};

[[noreturn]] void preauth_child::monitor_failed() { _exit(preauth_exit_failed); }

bytes preauth_child::call(const bytes& request)
{
    if (!monitor_.send(request))
        monitor_failed();
    auto reply = monitor_.receive();
    if (!reply)
        monitor_failed();
    return std::move(*reply);
}

server_auth_policy preauth_child::make_policy()
{
    server_auth_policy p;
    p.lookup_user = [this](std::string_view user) {
        auto r = decode_lookup_user_reply(call(encode(lookup_user_request{std::string(user)})));
        if (!r)
            monitor_failed();
        log_.set_level(r->level);
        return user_lookup{r->status, r->is_root, std::move(r->settings)};
    };
    p.key_allowed = [this](std::string_view, const public_key& key, bool with_signature) {
        auto r = decode_key_allowed_reply(call(encode(key_allowed_request{key.blob(), with_signature})));
        if (!r)
            monitor_failed();
        // The key's options stay with the monitor, which applies them.
        return key_decision{r->allowed, r->forced_command, nullptr};
    };
    // A certificate goes to the monitor as the client sent it; the monitor
    // parses and checks it again itself before it reads any file for it.
    p.certificate_allowed = [this](std::string_view, const certificate& cert, bool with_signature) {
        auto r = decode_key_allowed_reply(call(encode(key_allowed_request{cert.blob(), with_signature})));
        if (!r)
            monitor_failed();
        return key_decision{r->allowed, r->forced_command, nullptr};
    };
    // The monitor parses the key again and reads every file itself.
    p.host_allowed = [this](std::string_view, const public_key& key, const certificate* cert, std::string_view host,
                            std::string_view user) {
        const bytes blob = cert ? cert->blob() : key.blob();
        auto r = decode_verdict(monitor_type::host_allowed,
                                call(encode(host_allowed_request{blob, std::string(host), std::string(user)})));
        if (!r)
            monitor_failed();
        return *r;
    };
    p.account_check = [this](std::string_view) {
        auto r = decode_account_reply(call(encode_empty(monitor_type::account_check)));
        if (!r)
            monitor_failed();
        return account_decision{r->allowed, r->message};
    };
    p.verify_signature = [this](byte_span key_blob, std::string_view alg, byte_span data, byte_span sig) {
        verify_pubkey_request q{to_bytes(key_blob), std::string(alg), to_bytes(data), to_bytes(sig)};
        auto r = decode_verdict(monitor_type::verify_pubkey, call(encode(q)));
        if (!r)
            monitor_failed();
        return *r;
    };
    return p;
}

void preauth_child::start_auth()
{
    server_auth_config ac;
    ac.settings = setup_.settings;
    ac.remote_ip = setup_.facts.remote_address;
    ac.remote_port = setup_.facts.remote_port;
    ac.session_id = to_bytes(core_->session_id());
    ac.host_key_blob = server_host_key_blob(*core_);
    ac.timing_secret = setup_.timing_secret;
    ac.verdicts_logged_by_monitor = true;
    layer_->start_server_auth(std::move(ac), make_policy());
}

void preauth_child::on_auth_event(server_auth_event& ev)
{
    switch (ev.type) {
    case server_auth_event_type::log: log_.log(to_log_level(ev.level), ev.text); break;
    case server_auth_event_type::check_password: {
        auto r = decode_verdict(monitor_type::password, call(encode(password_request{std::move(ev.password)})));
        if (!r)
            monitor_failed();
        auth()->answer_password(*r);
        break;
    }
    case server_auth_event_type::kbdint_start: {
        auto r = decode_kbdint_reply(monitor_type::kbdint_start,
                                     call(encode(kbdint_start_request{ev.submethods})));
        if (!r)
            monitor_failed();
        auth()->answer_kbdint(std::move(*r));
        break;
    }
    case server_auth_event_type::kbdint_respond: {
        auto r = decode_kbdint_reply(monitor_type::kbdint_respond,
                                     call(encode(kbdint_respond_request{std::move(ev.responses)})));
        if (!r)
            monitor_failed();
        auth()->answer_kbdint(std::move(*r));
        break;
    }
    case server_auth_event_type::kbdint_abort: (void)monitor_.send(encode_empty(monitor_type::kbdint_abort)); break;
    default: break;
    }
}

bool preauth_child::on_session_event(const session_event& e)
{
    switch (e.type) {
    case session_event_type::transport:
        if (e.transport->type == transport_event_type::peer_version)
            log_.debug("Remote protocol version " + core_->peer_identification().proto +
                       ", remote software version " + printable(core_->peer_identification().software));
        else if (e.transport->type == transport_event_type::disconnected) {
            log_disconnect(log_, setup_.facts, *e.transport, auth(), nullptr);
            closed_ = true;
        }
        return false;
    case session_event_type::first_kex: start_auth(); return false;
    case session_event_type::server_auth: on_auth_event(*e.server_auth); return false;
    case session_event_type::auth_disconnect:
        if (auth()->max_tries_exceeded())
            (void)monitor_.send(encode_empty(monitor_type::max_tries));
        return false;
    case session_event_type::authenticated: return true;
    default: return false;
    }
}

bool preauth_child::process()
{
    for (;;) {
        const auto now = clock_type::now();
        for (;;) {
            const session_event e = layer_->poll(now);
            if (e.type == session_event_type::none)
                break;
            if (on_session_event(e))
                return true;
        }
        if (closed_)
            return false;
        const transport_event ev = core_->poll();
        if (ev.type == transport_event_type::none)
            return false;
        if (on_session_event(layer_->handle(ev, clock_type::now())))
            return true;
    }
}

void preauth_child::write_some()
{
    while (!write_failed_ && core_->output_size() > 0) {
        const byte_span out = core_->output();
        const ssize_t n = ::write(setup_.write_fd, out.data(), out.size());
        if (n > 0) {
            core_->consume_output(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        write_failed_ = true;
    }
}

std::optional<clock_type::time_point> preauth_child::next_deadline() const
{
    std::optional<clock_type::time_point> d;
    if (setup_.login_grace_time > 0)
        d = started_ + std::chrono::seconds(setup_.login_grace_time);
    if (auto held = layer_->next_deadline(); held && (!d || *held < *d))
        d = held;
    return d;
}

// Waits for the socket (or the deadline); false when the wait failed.
bool preauth_child::wait(std::optional<clock_type::time_point> deadline)
{
    pollfd fds[2];
    nfds_t n = 0;
    const bool want_read = !eof_ && core_->output_size() < preauth_output_pause;
    const bool want_write = core_->output_size() > 0 && !write_failed_;
    if (setup_.read_fd == setup_.write_fd) {
        fds[n++] = {setup_.read_fd, static_cast<short>((want_read ? POLLIN : 0) | (want_write ? POLLOUT : 0)), 0};
    } else {
        if (want_read)
            fds[n++] = {setup_.read_fd, POLLIN, 0};
        if (want_write)
            fds[n++] = {setup_.write_fd, POLLOUT, 0};
    }
    int timeout_ms = -1;
    if (deadline) {
        const auto left = *deadline - clock_type::now();
        timeout_ms = left <= clock_type::duration::zero()
                         ? 0
                         : static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
    }
    const int r = ::poll(fds, n, timeout_ms);
    if (r < 0 && errno != EINTR)
        return false;
    if (!want_read)
        return true;
    // Read what the kernel has (the descriptor is non-blocking).
    for (;;) {
        auto space = core_->input_space(256 * 1024);
        if (space.empty())
            return true;
        const ssize_t got = ::read(setup_.read_fd, space.data(), space.size());
        if (got > 0) {
            acknowledge_now();
            core_->commit_input(static_cast<std::size_t>(got));
            if (static_cast<std::size_t>(got) < space.size())
                return true;
            continue;
        }
        if (got == 0) {
            eof_ = true;
            core_->input_eof();
            return true;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return true;
        eof_ = true;
        core_->input_eof();
        return true;
    }
}

// What was just read is acknowledged at once rather than after the
// kernel's delayed-ACK timer (40 ms): a client that leaves Nagle on (OpenSSH's
// ssh without a tty) holds its second message of a pair (KEXDH_INIT after
// KEXINIT, SERVICE_REQUEST after NEWKEYS) until the first is acknowledged,
// and before authentication this side has nothing to send that would carry
// the ACK. Two such stalls were 80 of a 190 ms login. Not a socket (sshd -i
// on pipes): the call fails and nothing changes. The sandbox allows exactly
// this option.
void preauth_child::acknowledge_now()
{
    const int one = 1;
    (void)::setsockopt(setup_.read_fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

// The child keeps the connection's descriptors, the monitor's and (when
// it reports sandbox violations there) stderr; everything else it
// inherited from the monitor and the listener (the event loop's
// descriptors, the log file or syslog socket) is closed, and 0-2 point at
// /dev/null unless they are the connection's (sshd -i): whatever the child
// logs goes through the monitor.
void preauth_child::close_inherited_descriptors()
{
    ::closelog();
    std::vector<int> keep{setup_.read_fd, setup_.write_fd, setup_.monitor_fd};
    if (setup_.sandbox.report_fd >= 0)
        keep.push_back(setup_.sandbox.report_fd);
    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2; ++fd)
        if (null_fd >= 0 && std::find(keep.begin(), keep.end(), fd) == keep.end())
            ::dup2(null_fd, fd);
    for (int fd = 0; fd <= 2; ++fd)
        keep.push_back(fd);
    if (null_fd > 2)
        ::close(null_fd);
    std::sort(keep.begin(), keep.end());
    keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
    unsigned next = 0;
    for (int fd : keep) {
        if (fd < 0)
            continue;
        if (static_cast<unsigned>(fd) > next)
            ::close_range(next, static_cast<unsigned>(fd) - 1, 0);
        next = static_cast<unsigned>(fd) + 1;
    }
    ::close_range(next, ~0U, 0);
}

int preauth_child::run()
{
    for (int fd : {setup_.read_fd, setup_.write_fd}) {
        const int fl = ::fcntl(fd, F_GETFL);
        if (fl >= 0)
            (void)::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    }
    setup_.transport.host_key_signer = [this](const public_key& key, std::string_view alg,
                                              byte_span data) -> result<bytes> {
        auto r = decode_sign_reply(call(encode(sign_request{key.blob(), std::string(alg), to_bytes(data)})));
        if (!r)
            monitor_failed();
        if (!r->ok)
            return errc::crypto_error;
        return std::move(r->signature);
    };
    // Groups come from the monitor, which holds the ModuliFile and logs
    // what OpenSSH's monitor logs of the choice.
    setup_.transport.gex_groups = [this](std::uint32_t min, std::uint32_t preferred,
                                         std::uint32_t max) -> std::optional<dh_group> {
        auto r = decode_moduli_reply(call(encode(moduli_request{min, preferred, max})));
        if (!r)
            monitor_failed();
        if (!r->ok)
            return std::nullopt;
        return std::move(r->group);
    };
    close_inherited_descriptors();
    // Everything that may open a file or set up process state happens
    // before the sandbox: the transport core (OpenSSL's algorithm tables,
    // the random source) is made here, used only inside.
    core_.emplace(std::move(setup_.transport), rng_, clock_type::now());
    layer_.emplace(*core_, session_role::server);
    std::string error;
    if (!enter_preauth_sandbox(setup_.sandbox, error)) {
        log_.error("fatal: privilege separation sandbox: " + error);
        return preauth_exit_failed;
    }
    for (;;) {
        if (process())
            return hand_off();
        write_some();
        if (closed_ || write_failed_)
            return finish_closed();
        const auto deadline = next_deadline();
        if (setup_.login_grace_time > 0 && clock_type::now() >= started_ + std::chrono::seconds(setup_.login_grace_time))
            return preauth_exit_timeout; // the monitor logs it, as OpenSSH's does

        if (!wait(deadline))
            return preauth_exit_failed;
    }
}

// The connection ended before authentication: what is queued (a
// DISCONNECT) goes out if the client still reads it.
int preauth_child::finish_closed()
{
    const auto until = clock_type::now() + std::chrono::seconds(1);
    while (!write_failed_ && core_->output_size() > 0 && clock_type::now() < until) {
        pollfd p{setup_.write_fd, POLLOUT, 0};
        (void)::poll(&p, 1, 100);
        write_some();
    }
    return preauth_exit_closed;
}

int preauth_child::hand_off()
{
    // The SUCCESS and anything before it must be on the wire: the state
    // handed over starts after them.
    const auto until = setup_.login_grace_time > 0
                           ? std::max(started_ + std::chrono::seconds(setup_.login_grace_time),
                                      clock_type::now() + std::chrono::seconds(1))
                           : clock_type::now() + handoff_write_limit;
    write_some();
    while (!write_failed_ && core_->output_size() > 0) {
        if (clock_type::now() >= until)
            return preauth_exit_closed;
        pollfd p{setup_.write_fd, POLLOUT, 0};
        (void)::poll(&p, 1, 100);
        write_some();
    }
    if (write_failed_)
        return preauth_exit_closed;
    auto state = core_->export_state();
    if (!state) {
        log_.error("privilege separation: cannot hand the connection over: " + std::string(to_string(state.error())));
        return preauth_exit_failed;
    }
    auto r = decode_verdict(monitor_type::authenticated,
                            call(encode(authenticated_request{encode_transport_state(*state)})));
    return r && *r ? preauth_exit_handed_off : preauth_exit_closed;
}

} // namespace

int run_preauth_child(preauth_child_setup setup)
{
    preauth_child child(std::move(setup));
    return child.run();
}

} // namespace longhaul
