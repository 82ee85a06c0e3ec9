#include "channel/io/connect_socket.hpp"

#include "common/text.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>

namespace longhaul {

namespace asio = boost::asio;

namespace {

// Released, not duplicated and closed: closing one of two descriptors of a
// socket leaves its epoll registration behind (Asio skips EPOLL_CTL_DEL
// when closing), and a later descriptor given the same number could not
// be watched.
template <class Socket>
int take_fd(Socket& s)
{
    boost::system::error_code ec;
    const int fd = s.release(ec);
    if (ec)
        return -1;
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

struct tcp_attempt : pending_connect {
    explicit tcp_attempt(asio::io_context& io) : resolver(io), socket(io) {}
    ~tcp_attempt() override
    {
        alive->clear();
        resolver.cancel();
        boost::system::error_code ignored;
        socket.close(ignored);
    }
    asio::ip::tcp::resolver resolver;
    asio::ip::tcp::socket socket;
    // Cleared when the attempt is abandoned: its handlers then do nothing.
    std::shared_ptr<std::string> alive = std::make_shared<std::string>("live");
};

struct unix_attempt : pending_connect {
    explicit unix_attempt(asio::io_context& io) : socket(io) {}
    ~unix_attempt() override
    {
        alive->clear();
        boost::system::error_code ignored;
        socket.close(ignored);
    }
    asio::local::stream_protocol::socket socket;
    std::shared_ptr<std::string> alive = std::make_shared<std::string>("live");
};

} // namespace

std::unique_ptr<pending_connect> connect_tcp(asio::io_context& io, const std::string& host, int port,
                                             connect_callback done)
{
    auto a = std::make_unique<tcp_attempt>(io);
    tcp_attempt* raw = a.get();
    std::weak_ptr<std::string> alive = raw->alive;
    raw->resolver.async_resolve(
        host, std::to_string(port), asio::ip::tcp::resolver::numeric_service,
        [raw, alive, host, port, done](const boost::system::error_code& ec,
                                       asio::ip::tcp::resolver::results_type res) {
            auto live = alive.lock();
            if (!live || live->empty())
                return;
            if (ec)
                return done(-1, {"connect_to " + printable(host) + ": unknown host (" + ec.message() + ")",
                                 ec.message()});
            asio::async_connect(raw->socket, res,
                                [raw, alive, host, port, done](const boost::system::error_code& ec2,
                                                               const asio::ip::tcp::endpoint&) {
                                    auto live2 = alive.lock();
                                    if (!live2 || live2->empty())
                                        return;
                                    if (ec2)
                                        return done(-1, {"connect_to " + printable(host) + " port " +
                                                             std::to_string(port) + ": failed.",
                                                         ec2.message()});
                                    const int fd = take_fd(raw->socket);
                                    if (fd < 0)
                                        return done(-1, {"connect_to " + printable(host) + " port " +
                                                             std::to_string(port) + ": failed.",
                                                         "cannot take the socket"});
                                    done(fd, {});
                                });
        });
    return a;
}

std::unique_ptr<pending_connect> connect_unix(asio::io_context& io, const std::string& path, connect_callback done)
{
    auto a = std::make_unique<unix_attempt>(io);
    unix_attempt* raw = a.get();
    std::weak_ptr<std::string> alive = raw->alive;
    asio::local::stream_protocol::endpoint where;
    try {
        where = asio::local::stream_protocol::endpoint(path);
    } catch (const std::exception&) {
        // Longer than sockaddr_un holds: report it as the connect would.
        asio::post(io, [alive, path, done] {
            if (auto live = alive.lock(); live && !live->empty())
                done(-1, {"connect_to path " + printable(path) + ": File name too long", "File name too long"});
        });
        return a;
    }
    raw->socket.async_connect(where,
                              [raw, alive, path, done](const boost::system::error_code& ec) {
                                  auto live = alive.lock();
                                  if (!live || live->empty())
                                      return;
                                  if (ec)
                                      return done(-1, {"connect_to path " + printable(path) + ": " + ec.message(),
                                                       ec.message()});
                                  const int fd = take_fd(raw->socket);
                                  if (fd < 0)
                                      return done(-1, {"connect_to path " + printable(path) + ": failed.",
                                                       "cannot take the socket"});
                                  done(fd, {});
                              });
    return a;
}

} // namespace longhaul
