// The connections of ssh-keyscan over Boost.Asio: non-blocking connects,
// the transport core's client side under the common transport driver, a
// timer each, and at most max_connections of them at a time.
#include "ssh/keyscan/keyscan_scanner.hpp"

#include "common/io/transport_driver.hpp"
#include "common/random.hpp"
#include "common/transport/transport.hpp"
#include "ssh/keyscan/keyscan_format.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace longhaul {

namespace asio = boost::asio;

// OpenSSH's error(), debug() and fatal() end their lines in "\r\n" on
// stderr; the messages below keep that, so that scripts see the same bytes.

// -------------------------------------------------------------------------
// Jobs

keyscan_job_source::keyscan_job_source(const keyscan_options& o) : o_(o) {}

keyscan_job_source::~keyscan_job_source()
{
    if (file_ && !file_is_stdin_)
        std::fclose(file_);
}

bool keyscan_job_source::next_entry(std::string& entry)
{
    // The -f files first, then the operands (OpenSSH's main() order).
    while (file_index_ < o_.files.size() || file_) {
        if (!file_) {
            const std::string& path = o_.files[file_index_++];
            file_is_stdin_ = path.empty();
            file_ = file_is_stdin_ ? stdin : std::fopen(path.c_str(), "r");
            if (!file_) {
                std::fprintf(stderr, "ssh-keyscan: %s: %s\r\n", path.c_str(), std::strerror(errno));
                std::exit(255);
            }
        }
        char* line = nullptr;
        std::size_t cap = 0;
        const ssize_t n = ::getline(&line, &cap, file_);
        if (n < 0) {
            std::free(line);
            if (!file_is_stdin_)
                std::fclose(file_);
            file_ = nullptr;
            continue;
        }
        auto cleaned = clean_keyscan_line(std::string_view(line, static_cast<std::size_t>(n)));
        std::free(line);
        if (!cleaned)
            continue;
        entry = std::move(*cleaned);
        return true;
    }
    if (host_index_ < o_.hosts.size()) {
        entry = o_.hosts[host_index_++];
        return true;
    }
    return false;
}

std::optional<keyscan_job> keyscan_job_source::next()
{
    for (;;) {
        if (target_) {
            while (type_index_ < keyscan_types_in_order.size()) {
                const keyscan_type t = keyscan_types_in_order[type_index_++];
                if (o_.types & t)
                    return keyscan_job{target_->connect_names, target_->output_names, t};
            }
            target_.reset();
        }
        if (range_) {
            if (auto addr = range_->next()) {
                if (o_.verbose)
                    std::fprintf(stderr, "debug1: CIDR expand: address %s\r\n", addr->c_str());
                target_ = keyscan_target{*addr, *addr};
                type_index_ = 0;
                continue;
            }
            range_.reset();
        }
        std::string entry;
        if (!next_entry(entry))
            return std::nullopt;
        if (auto r = cidr_range::parse(entry)) {
            if (o_.verbose)
                std::fprintf(stderr, "debug1: CIDR range %s\r\n", entry.c_str());
            range_ = *r;
            continue;
        }
        target_ = split_keyscan_entry(entry);
        type_index_ = 0;
    }
}

// -------------------------------------------------------------------------
// Connections

namespace {

struct scanner;

class scan_connection : public std::enable_shared_from_this<scan_connection> {
public:
    scan_connection(scanner& s, keyscan_job job);
    void start();

private:
    bool connect_next();
    void on_writable(const boost::system::error_code& ec);
    void start_transport(int fd);
    void on_event(const transport_event& ev);
    void arm_timer(std::chrono::steady_clock::time_point at);
    void on_timer(const boost::system::error_code& ec);
    void done();

    scanner& s_;
    keyscan_job job_;
    std::vector<std::string> names_;
    std::size_t next_name_ = 0;
    std::string banner_name_;
    asio::ip::tcp::socket socket_;
    asio::steady_timer timer_;
    std::unique_ptr<transport> core_;
    std::unique_ptr<transport_driver> driver_;
    bool finished_ = false;
};

struct scanner {
    asio::io_context io;
    const keyscan_options& o;
    keyscan_job_source jobs;
    system_random rng;
    keyscan_format format;
    std::size_t active = 0;
    std::size_t max_connections = 0;
    bool found_one = false;

    explicit scanner(const keyscan_options& opts) : o(opts), jobs(opts)
    {
        format.port = o.port;
        format.hash = o.hash;
        format.sshfp = o.sshfp;
        format.certificates = o.certificates;
        format.sshfp_digest = o.sshfp_digest;
        // OpenSSH sizes its table to the descriptor limit; a cap as well
        // keeps memory (a transport core each) bounded on a large range.
        rlimit rl{};
        std::size_t fds = 256;
        if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
            fds = static_cast<std::size_t>(rl.rlim_cur);
        max_connections = std::clamp<std::size_t>(fds > 10 ? fds - 10 : 1, 1, 256);
    }

    void fill()
    {
        while (active < max_connections) {
            auto job = jobs.next();
            if (!job)
                return;
            ++active;
            std::make_shared<scan_connection>(*this, std::move(*job))->start();
        }
    }

    void connection_done()
    {
        --active;
        asio::post(io, [this] { fill(); });
    }
};

std::vector<std::string> split_commas(const std::string& s)
{
    std::vector<std::string> out;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t comma = s.find(',', pos);
        out.push_back(s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (comma == std::string::npos)
            return out;
        pos = comma + 1;
    }
}

scan_connection::scan_connection(scanner& s, keyscan_job job)
    : s_(s), job_(std::move(job)), names_(split_commas(job_.connect_names)), socket_(s.io), timer_(s.io)
{
}

void scan_connection::start()
{
    if (!connect_next())
        done();
}

// conalloc() and tcpconnect(): the first address of the first name that
// resolves and whose connect() starts. Later names are tried only when an
// earlier one fails at once (no address, a socket error), as in OpenSSH.
bool scan_connection::connect_next()
{
    while (next_name_ < names_.size()) {
        const std::string& name = names_[next_name_++];
        addrinfo hints{};
        hints.ai_family = s_.o.family;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        const std::string port = std::to_string(s_.o.port);
        if (int rc = ::getaddrinfo(name.c_str(), port.c_str(), &hints, &res); rc != 0) {
            std::fprintf(stderr, "getaddrinfo %s: %s\r\n", name.c_str(), ::gai_strerror(rc));
            continue;
        }
        int fd = -1, family = 0;
        for (addrinfo* ai = res; ai; ai = ai->ai_next) {
            fd = ::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                std::fprintf(stderr, "socket: %s\r\n", std::strerror(errno));
                continue;
            }
            if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
                family = ai->ai_family;
                break;
            }
            std::fprintf(stderr, "connect (`%s'): %s\r\n", name.c_str(), std::strerror(errno));
            ::close(fd);
            fd = -1;
        }
        ::freeaddrinfo(res);
        if (fd < 0)
            continue;
        banner_name_ = name; // conalloc()'s c_name: the name that connected
        boost::system::error_code ec;
        socket_.assign(family == AF_INET6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4(), fd, ec);
        if (ec) {
            ::close(fd);
            continue;
        }
        arm_timer(std::chrono::steady_clock::now() + std::chrono::seconds(s_.o.timeout_s));
        socket_.async_wait(asio::ip::tcp::socket::wait_write,
                           [self = shared_from_this()](const boost::system::error_code& e) { self->on_writable(e); });
        return true;
    }
    return false;
}

void scan_connection::on_writable(const boost::system::error_code& ec)
{
    if (finished_ || ec == asio::error::operation_aborted)
        return;
    int err = ec ? ec.value() : 0;
    if (!err) {
        socklen_t len = sizeof err;
        if (::getsockopt(socket_.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
    }
    if (err) {
        // congreet()'s read error: a refused connection is silent.
        if (err != ECONNREFUSED)
            std::fprintf(stderr, "read (%s): %s\r\n", banner_name_.c_str(), std::strerror(err));
        done();
        return;
    }
    start_transport(socket_.release());
}

void scan_connection::start_transport(int fd)
{
    transport_config cfg;
    cfg.role = transport_role::client;
    cfg.host_key_algorithms = std::string(keyscan_host_key_algorithms(job_.type, s_.o.certificates));
    cfg.crypto_threads = 0; // a few packets: no worker threads
    core_ = std::make_unique<transport>(std::move(cfg), s_.rng, std::chrono::steady_clock::now());
    driver_ = std::make_unique<transport_driver>(s_.io, fd, *core_);
    auto self = shared_from_this();
    driver_->start([self](const transport_event& ev) { self->on_event(ev); },
                   [self](std::error_code) {
                       // Over: refused, reset, failed or after the key.
                       // OpenSSH 9.2 does not try the entry's other names
                       // once a connect() has started.
                       self->done();
                   });
}

void scan_connection::on_event(const transport_event& ev)
{
    if (finished_)
        return;
    switch (ev.type) {
    case transport_event_type::peer_version:
        std::fputs(format_keyscan_banner(banner_name_, s_.o.port, ev.text, s_.o.sshfp).c_str(), stderr);
        break;
    case transport_event_type::host_key:
        // The core raises this only once the server's signature over the
        // exchange hash verified with this key (or certificate's key).
        if (ev.host_key && (!s_.o.certificates || ev.host_certificate)) {
            // export_dns_rr() has no SSHFP type for a certificate.
            if (s_.o.sshfp && ev.host_certificate)
                std::fputs("export_dns_rr: unsupported algorithm and/or digest_type\r\n", stderr);
            const std::string out =
                format_keyscan_key(job_.output_names, *ev.host_key, ev.host_certificate, s_.format, s_.rng);
            std::fputs(out.c_str(), stdout);
            s_.found_one = true;
        }
        core_->reject_host_key("ssh-keyscan: key fetched");
        driver_->close();
        break;
    case transport_event_type::disconnected: driver_->close(); break;
    default: break;
    }
}

void scan_connection::arm_timer(std::chrono::steady_clock::time_point at)
{
    timer_.expires_at(at);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) { self->on_timer(ec); });
}

void scan_connection::on_timer(const boost::system::error_code& ec)
{
    if (finished_ || ec == asio::error::operation_aborted)
        return;
    // -T counts from the connect or from the last input, whichever is later.
    if (driver_) {
        const auto until = driver_->last_input() + std::chrono::seconds(s_.o.timeout_s);
        if (until > std::chrono::steady_clock::now()) {
            arm_timer(until);
            return;
        }
    }
    if (s_.o.verbose)
        std::fprintf(stderr, "debug1: %s: timed out\r\n", banner_name_.c_str());
    done(); // the driver, if any, goes without calling its close handler
}

void scan_connection::done()
{
    if (finished_)
        return;
    finished_ = true;
    timer_.cancel();
    boost::system::error_code ignored;
    socket_.close(ignored);
    // The driver's handlers hold this connection: let go of them outside
    // the handler that may be running now.
    asio::post(s_.io, [self = shared_from_this()] {
        self->driver_.reset();
        self->core_.reset();
    });
    s_.connection_done();
}

} // namespace

bool run_keyscan(const keyscan_options& o)
{
    scanner s(o);
    s.fill();
    s.io.run();
    std::fflush(stdout);
    return s.found_one;
}

} // namespace longhaul
