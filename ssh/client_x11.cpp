#include "ssh/client_x11.hpp"

#include "channel/forward/x11_setup.hpp"
#include "channel/io/connection_runner.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/random.hpp"
#include "common/text.hpp"
#include "common/temp_name.hpp"
#include "ssh/client_config.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

extern char** environ;

namespace longhaul {

namespace {

// OpenSSH's X11_TIMEOUT_SLACK: the generated cookie outlives ssh's
// willingness to forward by this much.
constexpr int x11_timeout_slack = 60;

// Runs argv (no shell: the display name is checked but never interpreted)
// with stdin and stderr on /dev/null; its stdout, up to 64 KiB. Exit
// status, -1 when it could not run.
int run_xauth(const std::vector<std::string>& args, std::string& out)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv;
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int r = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (r != 0) {
        ::close(fds[0]);
        return -1;
    }
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (out.size() < 64 * 1024)
            out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string x11_command_text(const std::vector<std::string>& args)
{
    std::string s;
    for (const auto& a : args)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

// The first line of `xauth list`: "display protocol hexdata".
bool parse_xauth_list(const std::string& out, std::string& proto, std::string& data)
{
    std::istringstream in(out.substr(0, out.find('\n')));
    std::string display;
    return static_cast<bool>(in >> display >> proto >> data) && proto.size() <= 511 && data.size() <= 511;
}

bool x11_decode_hex(const std::string& hex, bytes& out)
{
    if (hex.size() % 2 != 0)
        return false;
    out.clear();
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        const int hi = hex_digit_value(hex[i]), lo = hex_digit_value(hex[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
    }
    return true;
}

int connect_x11_unix(unsigned display, std::string& error)
{
    const std::string path = "/tmp/.X11-unix/X" + std::to_string(display);
    // Linux X servers listen in the abstract namespace too; OpenSSH tries it first.
    for (bool abstract : {true, false}) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            error = std::string("socket: ") + std::strerror(errno);
            return -1;
        }
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        const std::size_t off = abstract ? 1 : 0;
        std::memcpy(addr.sun_path + off, path.c_str(), path.size());
        const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + off + path.size() + (abstract ? 0 : 1));
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0)
            return fd;
        const int e = errno;
        ::close(fd);
        if (!abstract) {
            error = "connect " + path + ": " + std::strerror(e);
            return -1;
        }
    }
    return -1;
}

} // namespace

int connect_x11_display(const std::string& display, std::string& error, logger& log)
{
    auto t = forward::parse_x11_display(display, error);
    if (!t)
        return -1;
    if (t->local_socket)
        return connect_x11_unix(t->display, error);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    const std::string port = std::to_string(t->port());
    addrinfo* res = nullptr;
    if (const int r = ::getaddrinfo(t->host.c_str(), port.c_str(), &hints, &res); r != 0) {
        error = t->host.substr(0, 100) + ": unknown host. (" + ::gai_strerror(r) + ")";
        return -1;
    }
    int fd = -1, last = 0;
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
        fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            log.debug2(std::string("socket: ") + std::strerror(errno));
            continue;
        }
        if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        last = errno;
        log.debug2("connect " + t->host.substr(0, 100) + " port " + port + ": " + std::strerror(last));
        ::close(fd);
        fd = -1;
    }
    ::freeaddrinfo(res);
    if (fd < 0) {
        error = "connect " + t->host.substr(0, 100) + " port " + port + ": " + std::strerror(last);
        return -1;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// An "x11" channel: the X client's connection setup is held until it is
// whole and checked (the peer's window bounds it, and x11_setup_max), then
// passes, rewritten, to the socket_channel joined to the display, and
// everything after it as it comes.
class x11_client_channel : public channel_handler, public std::enable_shared_from_this<x11_client_channel> {
public:
    x11_client_channel(int fd, std::string protocol, const bytes& fake, const bytes& real, logger& log,
                       std::optional<std::chrono::steady_clock::time_point> refuse_after)
        : inner_(std::make_shared<socket_channel>(fd)), protocol_(std::move(protocol)), fake_(fake), real_(real),
          log_(log), refuse_after_(refuse_after)
    {
    }

    std::function<void()> on_finished;

    void start()
    {
        inner_->runner = runner;
        inner_->id = id;
        std::weak_ptr<x11_client_channel> self = weak_from_this();
        inner_->on_finished = [self] {
            if (auto s = self.lock())
                s->finish();
        };
        inner_->start();
    }
    void stop()
    {
        done_ = true;
        inner_->stop();
    }

    void on_data(byte_span data, std::uint32_t extended) override
    {
        if (checked_ || extended != 0) {
            if (!rejected_)
                inner_->on_data(data, extended);
            else
                runner->consumed(id, data.size());
            return;
        }
        pending_.insert(pending_.end(), data.begin(), data.end());
        if (refuse_after_ && std::chrono::steady_clock::now() >= *refuse_after_) {
            log_.verbose("Rejected X11 connection after ForwardX11Timeout expired");
            return reject();
        }
        auto r = forward::x11_check_setup(pending_, protocol_, fake_, real_);
        if (r.verdict == forward::x11_setup_verdict::incomplete && pending_.size() < forward::x11_setup_max)
            return;
        if (r.verdict != forward::x11_setup_verdict::accepted) {
            if (!r.reason.empty())
                log_.debug2(r.reason);
            return reject();
        }
        checked_ = true;
        bytes whole;
        whole.swap(pending_);
        inner_->on_data(whole, 0);
    }
    void on_eof() override
    {
        if (!rejected_)
            inner_->on_eof();
    }
    void on_close() override
    {
        if (rejected_) {
            finish();
            return;
        }
        inner_->on_close();
    }
    void on_writable() override
    {
        if (!rejected_)
            inner_->on_writable();
    }

private:
    // OpenSSH's channel_pre_x11_open on a bad setup: the display never
    // sees a byte; the channel's input and output both end.
    void reject()
    {
        log_.info("X11 connection rejected because of wrong authentication.");
        rejected_ = checked_ = true;
        inner_->stop();
        runner->consumed(id, pending_.size());
        pending_.clear();
        connection& c = runner->conn();
        if (c.exists(id)) {
            c.send_eof(id);
            c.close(id);
        }
        runner->flush();
    }
    void finish()
    {
        if (done_)
            return;
        done_ = true;
        if (on_finished)
            on_finished();
    }

    std::shared_ptr<socket_channel> inner_;
    std::string protocol_;
    bytes fake_, real_;
    logger& log_;
    std::optional<std::chrono::steady_clock::time_point> refuse_after_;
    bytes pending_;
    bool checked_ = false;
    bool rejected_ = false;
    bool done_ = false;
};

client_x11_forwarding::client_x11_forwarding(connection_runner& runner, logger& log) : runner_(runner), log_(log) {}

client_x11_forwarding::~client_x11_forwarding() = default;

std::optional<forward::x11_request> client_x11_forwarding::prepare(const client_config& cfg)
{
    enabled_ = cfg.forward_x11.value_or(false);
    if (!enabled_)
        return std::nullopt;
    const char* env_display = std::getenv("DISPLAY");
    if (env_display == nullptr) {
        log_.debug("X11 forwarding requested but DISPLAY not set");
        return std::nullopt;
    }
    const std::string display = env_display;
    char bad = 0;
    if (!forward::x11_display_valid(display, bad)) {
        log_.debug(std::string("Invalid character '") + bad + "' in DISPLAY");
        log_.info("DISPLAY \"" + printable(display) + "\" invalid; disabling X11 forwarding");
        return std::nullopt;
    }
    const bool trusted = cfg.forward_x11_trusted.value_or(true);
    const int timeout = cfg.forward_x11_timeout.value_or(1200);
    std::string xauth = cfg.xauth_location.value_or("/usr/bin/xauth");
    struct stat st {};
    if (!xauth.empty() && ::stat(xauth.c_str(), &st) != 0) {
        log_.debug("No xauth program.");
        xauth.clear();
    }
    std::string proto, data;
    bool got = false;
    if (!xauth.empty()) {
        const std::string xdisplay = forward::x11_xauth_display_name(display);
        std::string dir, file;
        bool generated = false;
        if (!trusted) {
            dir = fill_temp_template("/tmp/ssh-XXXXXXXXXX");
            if (::mkdtemp(dir.data()) == nullptr) {
                log_.error(std::string("client_x11_get_proto: mkdtemp: ") + std::strerror(errno));
                return std::nullopt;
            }
            file = dir + "/xauthfile";
            std::vector<std::string> gen{xauth, "-f", file, "generate", xdisplay,
                                         std::string(forward::x11_default_protocol), "untrusted"};
            if (timeout != 0) {
                gen.push_back("timeout");
                gen.push_back(std::to_string(static_cast<unsigned>(timeout) + x11_timeout_slack));
                if (!refuse_after_)
                    refuse_after_ = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
            }
            log_.debug2("client_x11_get_proto: xauth command: " + x11_command_text(gen));
            std::string ignored;
            generated = run_xauth(gen, ignored) == 0;
        }
        if (trusted || generated) {
            std::vector<std::string> list{xauth};
            if (generated) {
                list.push_back("-f");
                list.push_back(file);
            }
            list.push_back("list");
            list.push_back(xdisplay);
            log_.debug2("x11_get_proto: " + x11_command_text(list));
            std::string out;
            run_xauth(list, out);
            got = parse_xauth_list(out, proto, data);
        }
        if (!file.empty())
            ::unlink(file.c_str());
        if (!dir.empty())
            ::rmdir(dir.c_str());
    }
    system_random rng;
    if (!trusted && !got) {
        log_.error("Warning: untrusted X11 forwarding setup failed: xauth key data not generated");
        return std::nullopt;
    }
    bytes real;
    if (!got) {
        log_.info("Warning: No xauth data; using fake authentication data for X11 forwarding.");
        proto = std::string(forward::x11_default_protocol);
        real.resize(16);
        rng.fill(real);
    } else if (!x11_decode_hex(data, real) || real.empty()) {
        log_.error("x11_request_forwarding: bad authentication data: " + printable(data.substr(0, 100)));
        return std::nullopt;
    }
    bytes fake(real.size());
    rng.fill(fake);
    display_ = display;
    protocol_ = proto;
    real_cookie_ = std::move(real);
    fake_cookie_ = fake;
    log_.debug("Requesting X11 forwarding with authentication spoofing.");
    return forward::x11_request{false, proto, to_hex(fake), forward::x11_screen_of(display)};
}

void client_x11_forwarding::register_in(channel_type_table& table)
{
    table.add(std::string(forward::x11_channel_type),
              [this](connection& conn, channel_id id, std::string_view, byte_span data) { open(conn, id, data); });
}

void client_x11_forwarding::open(connection& conn, channel_id id, byte_span data)
{
    auto refuse = [&] {
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        runner_.flush();
    };
    if (!enabled_) {
        log_.error("Warning: ssh server tried X11 forwarding.");
        log_.error("Warning: this is probably a break-in attempt by a malicious server.");
        return refuse();
    }
    if (refuse_after_ && std::chrono::steady_clock::now() >= *refuse_after_) {
        log_.verbose("Rejected X11 connection after ForwardX11Timeout expired");
        return refuse();
    }
    auto o = forward::x11_open::decode(data);
    if (!o) {
        log_.debug("client_request_x11: bad open data: " + std::string(to_string(o.error())));
        return refuse();
    }
    log_.debug("client_request_x11: request from " + printable(o->originator) + " " +
               std::to_string(o->originator_port));
    if (display_.empty() || protocol_.empty()) {
        // No x11-req went out (no DISPLAY, no cookie): nothing to join it to.
        log_.error("DISPLAY not set.");
        return refuse();
    }
    std::string error;
    const int fd = connect_x11_display(display_, error, log_);
    if (fd < 0) {
        log_.error(error);
        return refuse();
    }
    auto ch = std::make_shared<x11_client_channel>(fd, protocol_, fake_cookie_, real_cookie_, log_, refuse_after_);
    const x11_client_channel* raw = ch.get();
    ch->on_finished = [this, id, raw] { finished(id, raw); };
    conn.accept(id);
    runner_.attach(id, ch);
    channels_[id] = ch;
    ch->start();
    runner_.flush();
}

void client_x11_forwarding::finished(channel_id id, const x11_client_channel* raw)
{
    // Not inside the channel's own callback; the id may be reused meanwhile.
    boost::asio::post(runner_.io(), [this, id, raw] {
        auto it = channels_.find(id);
        if (it != channels_.end() && it->second.get() == raw)
            channels_.erase(it);
    });
}

void client_x11_forwarding::stop()
{
    for (auto& [id, ch] : channels_)
        ch->stop();
    channels_.clear();
}

} // namespace longhaul
