#include "ssh/mux/mux_socket.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::mux;

namespace {

std::string temp_dir()
{
    char tmpl[] = "/tmp/longhaul-mux-test.XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    REQUIRE(d != nullptr);
    return d;
}

} // namespace

TEST_CASE("mux socket: the control path is created 0600, and never over an existing file")
{
    const std::string dir = temp_dir();
    const std::string path = dir + "/ctl";
    int error = 0;
    const int fd = listen_control_path(path, error);
    REQUIRE(fd >= 0);
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);

    // A second master finds the path taken.
    int error2 = 0;
    CHECK(listen_control_path(path, error2) == -1);
    CHECK(error2 == EEXIST);

    // The socket is connectable, and the peer is us.
    control_socket c = control_socket::connect_to(path);
    REQUIRE(c.valid());
    const int server = ::accept(fd, nullptr, nullptr);
    REQUIRE(server >= 0);
    CHECK(peer_uid(server) == static_cast<long>(::getuid()));

    // Frames and descriptors pass in order, each descriptor with its byte.
    REQUIRE(c.send(alive{1, 2}));
    const int devnull = ::open("/dev/null", O_RDONLY);
    REQUIRE(c.send_fd(devnull));
    std::uint8_t buf[4 + 12];
    REQUIRE(::recv(server, buf, sizeof buf, MSG_WAITALL) == static_cast<ssize_t>(sizeof buf));
    const int got = receive_fd(server);
    REQUIRE(got >= 0);
    struct stat a {}, b {};
    REQUIRE(::fstat(devnull, &a) == 0);
    REQUIRE(::fstat(got, &b) == 0);
    CHECK(a.st_rdev == b.st_rdev);
    CHECK(receive_fd(server) == -1);
    CHECK(errno == EAGAIN);
    ::close(got);
    ::close(devnull);

    // A byte without a descriptor is a protocol error.
    const std::uint8_t z = 0;
    REQUIRE(::send(c.fd(), &z, 1, 0) == 1);
    CHECK(receive_fd(server) == -1);
    CHECK(errno == EPROTO);

    // EOF, then the master's side reads it as such.
    c = control_socket();
    CHECK(receive_fd(server) == -1);
    CHECK(errno == 0);
    ::close(server);
    ::close(fd);
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("mux socket: connecting to a missing or too long path says why")
{
    control_socket c = control_socket::connect_to("/nonexistent/longhaul/ctl");
    CHECK_FALSE(c.valid());
    CHECK(c.error() == ENOENT);
    control_socket l = control_socket::connect_to(std::string(max_socket_path(), 'x'));
    CHECK(l.error() == ENAMETOOLONG);
    int error = 0;
    CHECK(listen_control_path("/tmp/" + std::string(max_socket_path(), 'y'), error) == -1);
    CHECK(error == ENAMETOOLONG);
}
