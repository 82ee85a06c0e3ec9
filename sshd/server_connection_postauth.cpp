// After authentication (issue 12): a user who is not root is served by a
// child that becomes the user, under a root parent that stays for the
// connection's lifetime, as OpenSSH's monitor does. The parent signs the
// key re-exchanges (the child holds no private host key), opens ptys
// outside any chroot and records their logins and logouts (utmp, wtmp,
// lastlog), and closes the PAM session at the end. A root login, or an
// sshd not started as root, opens its ptys and records them itself.
#include "sshd/detail/server_connection.hpp"

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>

namespace longhaul::detail {

using namespace privsep;

// Who the records name, as OpenSSH's record_login() is given them.
login_recorder::settings server_connection::login_settings() const
{
    login_recorder::settings s;
    s.user = session_env_.user->name;
    s.uid = session_env_.user->uid;
    s.host = login_host(facts_.remote_host, facts_.remote_address, ctx_.utmp_length);
    s.address = facts_.remote_address;
    s.print_last_log = cfg_.print_last_log;
    s.write = geteuid() == 0;
    return s;
}

// btmp (lastb), from the monitor's own verdicts; the host as the log names
// it (no -u limit, as OpenSSH's).
void server_connection::record_failed_login(const std::string& user)
{
    timeval now{};
    ::gettimeofday(&now, nullptr);
    bool bad_file = false;
    const std::string failed = write_failed_login(
        login_record_files{}.btmp, failed_login_utmpx(getpid(), user, facts_.remote_host, facts_.remote_address, now),
        bad_file);
    if (!failed.empty())
        log_.log(bad_file ? log_level::info : log_level::debug1, failed);
}

// The root parent: signs for key re-exchanges (hash-sized data, one of our
// keys) and opens ptys for the user, owned by the user, until the child is
// gone; then records the logouts still open and closes the PAM session.
// Anything else asked ends it.
void server_connection::serve_postauth_monitor(int fd, pid_t child, uid_t uid, gid_t gid)
{
    // This process only signs from now on: give the heap it no longer
    // uses back, so an idle session costs less.
    ::malloc_trim(0);
    monitor_channel mon(fd);
    login_recorder logins(login_settings(), log_);
    for (;;) {
        auto msg = mon.receive();
        if (!msg)
            break;
        const auto type = message_type(*msg, false);
        if (type == monitor_type::pty && decode_empty(monitor_type::pty, *msg)) {
            std::string error;
            auto p = pty_pair::allocate(uid, gid, error);
            if (!p)
                log_.error(error);
            pty_reply answer{.ok = bool(p), .name = p ? p->name() : std::string(), .login_message = {}};
            if (p)
                answer.login_message = logins.login(child, p->name());
            // This process's copies close with `p`: the user's are its own.
            if (!(p ? mon.send_with_fds(encode(answer), {p->master(), p->slave()}) : mon.send(encode(answer))))
                break;
            continue;
        }
        if (type == monitor_type::pty_release) {
            if (auto r = decode_pty_release_request(*msg)) {
                logins.logout(r->name);
                continue;
            }
        }
        std::optional<sign_request> q;
        if (type == monitor_type::sign)
            if (auto d = decode_sign_request(*msg))
                q = std::move(*d);
        const public_key* key = nullptr;
        if (q && is_exchange_hash_length(q->data.size()))
            key = find_host_key(q->key_blob);
        if (key == nullptr) {
            log_.error("monitor: unpermitted request from the user's process: disconnecting");
            ::kill(child, SIGKILL);
            break;
        }
        auto sig = sign_with_host_key(*key, q->algorithm, q->data);
        sign_reply r;
        if (sig) {
            r.ok = true;
            r.signature = std::move(*sig);
        }
        if (!mon.send(encode(r)))
            break;
    }
    mon.close();
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    logins.logout_all();
    if (pam_session_open_) {
        pam_->close_session();
        pam_->delete_credentials();
    }
    _exit(0);
}

const public_key* server_connection::find_host_key(byte_span blob) const
{
    for (const auto& k : ctx_.host_keys)
        if (std::ranges::equal(k->public_part().blob(), blob))
            return &k->public_part();
    for (const auto& k : ctx_.agent_host_keys)
        if (std::ranges::equal(k.blob(), blob))
            return &k;
    return nullptr;
}

result<bytes> server_connection::sign_with_host_key(const public_key& key, std::string_view alg, byte_span data)
{
    for (const auto& k : ctx_.host_keys)
        if (k->public_part().blob() == key.blob())
            return k->sign(alg, data);
    std::string error;
    auto sig = host_key_agent_.sign(key, alg, data, error);
    if (!sig)
        log_.error(error);
    return sig;
}

// The user's process: a host key signature for a key re-exchange, from
// the root parent.
result<bytes> server_connection::sign_through_monitor(const public_key& key, std::string_view alg, byte_span data)
{
    if (!postauth_monitor_ || !postauth_monitor_->send(encode(sign_request{key.blob(), std::string(alg), to_bytes(data)})))
        return errc::connection_closed;
    auto reply = postauth_monitor_->receive();
    if (!reply)
        return reply.error();
    auto r = decode_sign_reply(*reply);
    if (!r || !r->ok)
        return errc::crypto_error;
    return std::move(r->signature);
}

// The user's process: a pty from the root parent, size and modes still to
// set (the pty-req's).
result<pty_grant> server_connection::pty_through_monitor(std::string& error)
{
    if (!postauth_monitor_ || !postauth_monitor_->send(encode_empty(monitor_type::pty))) {
        error = "pty: the monitor is gone";
        return errc::connection_closed;
    }
    std::vector<int> fds;
    auto reply = postauth_monitor_->receive_with_fds(fds, max_passed_fds);
    auto r = reply ? decode_pty_reply(*reply) : result<pty_reply>(reply.error());
    if (r && r->ok && fds.size() == 2)
        return pty_grant{pty_pair::adopt(fds[0], fds[1], std::move(r->name)), std::move(r->login_message)};
    for (int fd : fds)
        ::close(fd);
    error = "pty: the monitor could not open one";
    return errc::io_error;
}

// Where the sessions' ptys come from: the root parent when there is one,
// else this process, which then records the logins itself.
void server_connection::set_pty_source()
{
    if (postauth_monitor_) {
        session_env_.allocate_pty = [this](std::string& error) { return pty_through_monitor(error); };
        session_env_.release_pty = [this](const std::string& tty) {
            if (postauth_monitor_)
                (void)postauth_monitor_->send(encode(pty_release_request{tty}));
        };
        return;
    }
    local_logins_ = std::make_unique<login_recorder>(login_settings(), log_);
    session_env_.allocate_pty = [this](std::string& error) -> result<pty_grant> {
        auto p = pty_pair::allocate(session_env_.user->uid, session_env_.user->gid, error);
        if (!p)
            return p.error();
        std::string message = local_logins_->login(getpid(), p->name());
        return pty_grant{std::move(*p), std::move(message)};
    };
    session_env_.release_pty = [this](const std::string& tty) {
        if (local_logins_)
            local_logins_->logout(tty);
    };
}

} // namespace longhaul::detail
