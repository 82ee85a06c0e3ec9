#include "sshd/server_session.hpp"

#include "channel/forward/forward_messages.hpp"
#include "channel/forward/x11_messages.hpp"
#include "channel/messages.hpp"
#include "common/match.hpp"
#include "common/text.hpp"
#include "sshd/agent_forwarding.hpp"
#include "sshd/sftp/sftp_server_main.hpp"
#include "sshd/x11_forwarding.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace longhaul {

namespace {

struct signal_name {
    const char* name;
    int number;
};
constexpr signal_name signal_names[] = {
    {"ABRT", SIGABRT}, {"ALRM", SIGALRM}, {"FPE", SIGFPE},   {"HUP", SIGHUP},   {"ILL", SIGILL},
    {"INT", SIGINT},   {"KILL", SIGKILL}, {"PIPE", SIGPIPE}, {"QUIT", SIGQUIT}, {"SEGV", SIGSEGV},
    {"TERM", SIGTERM}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
};

int signal_from_name(std::string_view n)
{
    for (const auto& s : signal_names)
        if (n == s.name)
            return s.number;
    return 0;
}

std::string name_of_signal(int sig)
{
    for (const auto& s : signal_names)
        if (s.number == sig)
            return s.name;
    return "SIG@openssh.com" + std::to_string(sig);
}

// ~/.ssh/environment: NAME=value lines, '#' comments (PermitUserEnvironment).
std::vector<std::string> read_user_environment(const std::string& home)
{
    std::vector<std::string> out;
    std::ifstream f(home + "/.ssh/environment");
    std::string line;
    while (out.size() < 1000 && std::getline(f, line)) {
        if (line.empty() || line[0] == '#' || line.find('=') == std::string::npos)
            continue;
        out.push_back(line);
    }
    return out;
}

void set_var(std::vector<std::pair<std::string, std::string>>& env, const std::string& name, const std::string& value)
{
    for (auto& kv : env) {
        if (kv.first == name) {
            kv.second = value;
            return;
        }
    }
    env.emplace_back(name, value);
}

void set_var(std::vector<std::pair<std::string, std::string>>& env, std::string_view name_eq_value)
{
    auto eq = name_eq_value.find('=');
    if (eq == std::string_view::npos || eq == 0)
        return;
    set_var(env, std::string(name_eq_value.substr(0, eq)), std::string(name_eq_value.substr(eq + 1)));
}

// OpenSSH's session_env_req() ignores env requests once more than 128
// variables are set (so it keeps 129).
constexpr std::size_t max_client_env = 128;
// ... and, beyond OpenSSH, at most this much of names and values in all: 129
// values of 64 KiB would otherwise be 8 MiB per session.
constexpr std::size_t max_client_env_bytes = 256 * 1024;

// A pty opened by this process, with no login records (unit tests, and
// nothing else: sshd always sets allocate_pty).
result<pty_grant> local_pty(const user_account& user, std::string& error)
{
    auto p = pty_pair::allocate(user.uid, user.gid, error);
    if (!p)
        return p.error();
    return pty_grant{std::move(*p), {}};
}

} // namespace

server_session::server_session(const session_environment& env) : env_(env) {}

server_session::~server_session()
{
    if (pid_ > 0 && !wait_status_ && !abandoned_)
        ::kill(pty_ ? -pid_ : pid_, SIGHUP);
    if (pty_ && env_.release_pty)
        env_.release_pty(pty_->name());
}

std::vector<std::pair<std::string, std::string>>
server_session::build_environment(const std::string& original_command) const
{
    const user_account& u = *env_.user;
    const server_config& c = *env_.config;
    std::vector<std::pair<std::string, std::string>> env;
    // Debian's sshd is built with these default paths.
    const std::string path = u.uid == 0 ? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
                                        : "/usr/local/bin:/usr/bin:/bin:/usr/games";
    // OpenSSH's do_setup_env() order. The client's variables (AcceptEnv)
    // come first, so the ones sshd sets replace them: a client never
    // chooses USER, HOME, PATH or SHELL. What the administrator or the
    // account allows (key environment=, ~/.ssh/environment under
    // PermitUserEnvironment, PAM, SetEnv) comes after, as in OpenSSH.
    for (const auto& [k, v] : client_env_)
        set_var(env, k, v);
    set_var(env, "USER", u.name);
    set_var(env, "LOGNAME", u.name);
    set_var(env, "HOME", u.home);
    set_var(env, "PATH", path);
    set_var(env, "MAIL", "/var/mail/" + u.name);
    set_var(env, "SHELL", u.shell.empty() ? "/bin/sh" : u.shell);
    if (const char* tz = std::getenv("TZ"))
        set_var(env, "TZ", tz);
    if (env_.key)
        for (const auto& e : env_.key->environment)
            set_var(env, e);
    if (c.permit_user_environment) {
        for (const auto& e : permitted_user_environment(read_user_environment(u.home), true,
                                                         c.permit_user_environment_patterns))
            set_var(env, e);
    }
    for (const auto& e : env_.pam_env)
        if (!match_pattern(std::string_view(e).substr(0, e.find('=')), "SSH_AUTH_INFO*"))
            set_var(env, e);
    for (const auto& e : c.set_env)
        set_var(env, e);
    const auto& f = env_.facts;
    set_var(env, "SSH_CLIENT", f.remote_address + " " + std::to_string(f.remote_port) + " " + std::to_string(f.local_port));
    set_var(env, "SSH_CONNECTION", f.remote_address + " " + std::to_string(f.remote_port) + " " + f.local_address + " " +
                                       std::to_string(f.local_port));
    if (!env_.tunnel_interfaces.empty())
        set_var(env, "SSH_TUNNEL", env_.tunnel_interfaces);
    if (!env_.auth_info_file.empty())
        set_var(env, "SSH_USER_AUTH", env_.auth_info_file);
    if (pty_) {
        set_var(env, "SSH_TTY", pty_->name());
        if (!term_.empty())
            set_var(env, "TERM", term_);
    }
    if (x11_)
        set_var(env, "DISPLAY", x11_->display());
    if (!original_command.empty())
        set_var(env, "SSH_ORIGINAL_COMMAND", original_command);
    if (env_.agent && !env_.agent->socket_path().empty())
        set_var(env, "SSH_AUTH_SOCK", env_.agent->socket_path());
    return env;
}

bool server_session::start_program(std::string_view kind, std::string client_command)
{
    if (pid_ > 0 || abandoned_)
        return false;
    const server_config& c = *env_.config;
    logger& log = *env_.log;
    // ChannelTimeout knows the session by its request from here on, a
    // subsystem only when it is configured (OpenSSH's session.c labels the
    // channel before it runs the program, ForceCommand or not).
    bool configured = kind != "subsystem";
    for (const auto& s : c.subsystems)
        configured = configured || s.name == client_command;
    if (configured)
        runner->conn().set_idle_timeout(
            id, channel_timeout_for(env_.channel_timeouts, session_timeout_type(kind, client_command)));
    std::string command = client_command;
    std::string original;
    // ForceCommand wins over a key's command=, which wins over the client's.
    if (!c.force_command.empty() && c.force_command != "none") {
        log.debug("forced-command (config) '" + c.force_command + "'");
        original = client_command;
        command = c.force_command;
    } else if (env_.key && env_.key->options.force_command) {
        log.debug("forced-command (key-option) '" + *env_.key->options.force_command + "'");
        original = client_command;
        command = *env_.key->options.force_command;
    } else if (kind == "subsystem") {
        const subsystem_config* found = nullptr;
        for (const auto& s : c.subsystems)
            if (s.name == client_command)
                found = &s;
        if (found == nullptr) {
            log.error("subsystem request for " + printable(client_command) + " by user " + env_.user->name + " failed, subsystem not found");
            return false;
        }
        command = found->args;
    }
    // internal-sftp, as the subsystem or forced: the session child serves
    // SFTP in-process (sshd/sftp); forced on anything but the sftp
    // subsystem, the session is refused as OpenSSH refuses it.
    const bool internal_sftp = sftp::is_internal_sftp(command);
    if (internal_sftp && kind != "subsystem")
        log.error("Connection from user " + env_.user->name + " " + env_.facts.remote_address + " port " +
                  std::to_string(env_.facts.remote_port) + ": refusing non-sftp session");
    const auto& f = env_.facts;
    const std::string who = " for " + env_.user->name + " from " + f.remote_address + " port " +
                            std::to_string(f.remote_port) + " id " + std::to_string(env_.session_number);
    if (kind == "subsystem")
        log.info("Starting session: subsystem '" + printable(client_command) + "'" + who);
    else if (command.empty())
        log.info("Starting session: shell" + (pty_ ? " on " + pty_->name().substr(5) : std::string()) + who);
    else
        log.info("Starting session: " + std::string(pty_ ? "command on " + pty_->name().substr(5) : "command") + who);

    if (env_.set_qos)
        env_.set_qos(pty_ || x11_);
    session_spawn req;
    req.user = env_.user;
    req.command = command;
    req.environment = build_environment(original);
    req.pty = pty_ ? &*pty_ : nullptr;
    req.in_chroot = env_.chrooted;
    // A user's own ~/.ssh/rc never runs for a subsystem or under the
    // administrator's ForceCommand: an sftp-only user could otherwise upload
    // one and get a shell (OpenSSH's do_rc_files() skips it in both cases).
    const bool admin_forced = !c.force_command.empty() && c.force_command != "none";
    req.run_user_rc = kind != "subsystem" && !admin_forced && c.permit_user_rc &&
                      (!env_.key || env_.key->options.permit_user_rc);
    if (x11_) {
        req.x11.protocol = x11_->protocol();
        req.x11.cookie = x11_->cookie();
        req.x11.auth_display = x11_->auth_display();
        req.x11.xauth = c.xauth_location;
    }
    // A login shell on a pty shows the last login and /etc/motd, as
    // OpenSSH's do_login() (only from do_exec_pty()).
    req.print_motd = c.print_motd && pty_ && command.empty();
    if (pty_ && command.empty())
        req.login_message = login_message_;
    if (internal_sftp && kind == "subsystem") {
        sftp::server_invocation inv;
        inv.argv = sftp::split_internal_sftp_command(command);
        inv.user = {env_.user->name, env_.user->uid, env_.user->home};
        for (const auto& [k, v] : req.environment)
            if (k == "SSH_CONNECTION")
                inv.ssh_connection = v;
        req.run_in_process = [inv = std::move(inv)] { return sftp::sftp_server_main(inv); };
    } else if (internal_sftp) {
        req.run_in_process = [] {
            static constexpr char message[] = "This service allows sftp connections only.\n";
            (void)!::write(STDOUT_FILENO, message, sizeof message - 1);
            return 1;
        };
    }
    std::string error;
    auto s = spawn_session(req, error);
    if (!s) {
        log.error(error);
        return false;
    }
    pid_ = s->pid;
    if (pty_)
        pty_master_ = s->in; // owned by stdin_ from here on
    stdin_ = std::make_shared<fd_sink>(*runner, id, s->in, true);
    stdout_ = std::make_shared<fd_source>(*runner, id, s->out, 0, true);
    fcntl(s->in, F_SETFL, fcntl(s->in, F_GETFL) | O_NONBLOCK);
    fcntl(s->out, F_SETFL, fcntl(s->out, F_GETFL) | O_NONBLOCK);
    std::weak_ptr<server_session> self = weak_from_this();
    stdout_->on_eof = [self](int) {
        if (auto s = self.lock()) {
            s->stdout_done_ = true;
            s->maybe_finish();
        }
    };
    if (s->err >= 0) {
        fcntl(s->err, F_SETFL, fcntl(s->err, F_GETFL) | O_NONBLOCK);
        stderr_ = std::make_shared<fd_source>(*runner, id, s->err, extended_data_stderr, true);
        stderr_->on_eof = [self](int) {
            if (auto s = self.lock()) {
                s->stderr_done_ = true;
                s->maybe_finish();
            }
        };
        stderr_->start();
    } else {
        stderr_done_ = true;
    }
    stdout_->start();
    return true;
}

void server_session::on_request(std::string_view name, bool want_reply, byte_span data)
{
    const server_config& c = *env_.config;
    connection& conn = runner->conn();
    bool ok = false;
    if (name == "pty-req") {
        auto req = pty_request::decode(data);
        const bool allowed = c.permit_tty && (!env_.key || env_.key->options.permit_pty);
        if (req && allowed && !pty_ && pid_ < 0) {
            std::string error;
            auto p = env_.allocate_pty ? env_.allocate_pty(error) : local_pty(*env_.user, error);
            if (p) {
                p->pty.configure(*req);
                pty_ = std::move(p->pty);
                login_message_ = std::move(p->login_message);
                term_ = req->term;
                ok = true;
            } else {
                env_.log->error(error);
            }
        } else if (!allowed) {
            env_.log->debug("Pty allocation disabled.");
        }
    } else if (name == "env") {
        if (auto e = env_request::decode(data); e && client_env_.size() > max_client_env) {
            // As OpenSSH's session_env_req(): a client cannot make the
            // session's environment (and this process) grow without bound.
            env_.log->debug2("Ignoring env request " + printable(e->name) + ": too many env vars");
        } else if (e && client_env_bytes_ + e->name.size() + e->value.size() > max_client_env_bytes) {
            env_.log->debug2("Ignoring env request " + printable(e->name) + ": too much env data");
        } else if (e) {
            for (const auto& pattern : c.accept_env) {
                if (match_pattern(e->name, pattern)) {
                    client_env_.emplace_back(e->name, e->value);
                    client_env_bytes_ += e->name.size() + e->value.size();
                    ok = true;
                    break;
                }
            }
            if (!ok)
                env_.log->debug("Ignored env " + printable(e->name));
        }
    } else if (name == "shell") {
        ok = start_program("shell", "");
    } else if (name == "exec" || name == "subsystem") {
        if (auto s = string_request::decode(data))
            ok = start_program(name, s->value);
    } else if (name == "window-change") {
        if (auto w = window_change_request::decode(data); w && pty_) {
            // Before the program starts the pty_pair still holds the master.
            const int fd = pty_master_ >= 0 ? pty_master_ : pty_->master();
            set_window_size(fd, w->cols, w->rows, w->width_px, w->height_px);
            ok = true;
        }
    } else if (name == "signal") {
        if (auto s = signal_request::decode(data); s && pid_ > 0 && !wait_status_) {
            if (int sig = signal_from_name(s->name)) {
                env_.log->debug("session_signal_req: signal " + s->name + ", killpg(" + std::to_string(pid_) + ")");
                ok = ::kill(pty_ ? -pid_ : pid_, sig) == 0;
            }
        }
    } else if (name == "break") {
        if (pty_master_ >= 0) {
            tcsendbreak(pty_master_, 0);
            ok = true;
        }
    } else if (name == "eow@openssh.com") {
        // The client will read nothing more: stop the program's output.
        if (stdout_)
            stdout_->stop();
        if (stderr_)
            stderr_->stop();
        stdout_done_ = stderr_done_ = true;
        maybe_finish();
        return;
    } else if (name == forward::agent_request_name) {
        // The request carries nothing; one that does is refused, as this
        // session refuses any request it cannot decode.
        ok = data.empty() && env_.agent != nullptr && env_.agent->request(conn);
    } else if (name == forward::x11_request_name) {
        // Only before the program starts, as OpenSSH answers it only on a
        // larval session.
        if (env_.x11 != nullptr && pid_ < 0) {
            auto d = env_.x11->request(conn, data, x11_ != nullptr);
            if (d) {
                x11_ = std::move(d);
                ok = true;
            }
        }
    } else {
        env_.log->debug("session_input_channel_req: unknown request " + printable(name));
    }
    if (want_reply)
        conn.reply(id, ok);
    runner->flush();
}

void server_session::on_data(byte_span data, std::uint32_t)
{
    if (stdin_)
        stdin_->write(data);
    else
        runner->consumed(id, data.size());
}

void server_session::on_eof()
{
    // A pty has no separate input to close; for pipes EOF closes the program's stdin.
    if (stdin_ && !pty_)
        stdin_->eof();
}

void server_session::on_close()
{
    closed_by_peer_ = true;
    if (pid_ > 0 && !wait_status_ && !abandoned_)
        ::kill(pty_ ? -pid_ : pid_, SIGHUP);
    if (stdout_)
        stdout_->stop();
    if (stderr_)
        stderr_->stop();
    runner->conn().close(id);
    runner->flush();
    maybe_finish();
}

void server_session::on_writable()
{
    if (stdout_)
        stdout_->pump();
    if (stderr_)
        stderr_->pump();
}

void server_session::child_exited(int wait_status)
{
    wait_status_ = wait_status;
    // With a pty, processes the shell left behind can hold the slave open:
    // send what is buffered, then end (as sshd does).
    if (pty_ && stdout_ && !stdout_done_)
        stdout_->finish_when_drained();
    maybe_finish();
}

void server_session::maybe_finish()
{
    if (finished_)
        return;
    if (!closed_by_peer_ && (!wait_status_ || !stdout_done_ || !stderr_done_))
        return;
    send_exit_and_close();
    // An abandoned session does not wait for its program.
    if (!closed_by_peer_ || (pid_ > 0 && !wait_status_ && !abandoned_))
        return;
    finished_ = true;
    if (on_finished)
        on_finished();
}

void server_session::abandon()
{
    if (abandoned_ || exit_sent_ || closed_by_peer_)
        return;
    abandoned_ = true;
    exit_sent_ = true; // no exit status after this: the program may still be running
    if (stdout_)
        stdout_->stop();
    if (stderr_)
        stderr_->stop();
    stdin_.reset(); // closes the program's stdin, or the pty's master
    pty_master_ = -1;
    stdout_done_ = stderr_done_ = true;
    x11_.reset(); // its display's listeners, as session_close_by_channel's
    // A program that has ended (its output not yet all sent) still has its
    // status reported: OpenSSH sends it when the program is reaped.
    if (wait_status_)
        send_exit_status();
    connection& conn = runner->conn();
    conn.send_eof(id);
    conn.close(id);
    runner->flush();
}

void server_session::send_exit_and_close()
{
    if (exit_sent_)
        return;
    exit_sent_ = true;
    connection& conn = runner->conn();
    if (wait_status_ && !closed_by_peer_) {
        send_exit_status();
        conn.send_eof(id);
    }
    conn.close(id);
    runner->flush();
}

void server_session::send_exit_status()
{
    const int st = *wait_status_;
    if (WIFEXITED(st)) {
        runner->conn().send_request(id, "exit-status", false,
                                    exit_status_request{std::uint32_t(WEXITSTATUS(st))}.encode());
    } else if (WIFSIGNALED(st)) {
        exit_signal_request e{name_of_signal(WTERMSIG(st)), WCOREDUMP(st) != 0, "", ""};
        runner->conn().send_request(id, "exit-signal", false, e.encode());
    }
}

} // namespace longhaul
