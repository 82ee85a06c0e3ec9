#include "common/file_read.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include <fcntl.h>
#include <unistd.h>

using namespace longhaul;

namespace {

// A pipe holding `text`, its write end closed: read_to_end sees `text`, then EOF.
int pipe_with(const std::string& text)
{
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(::write(fds[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fds[1]);
    return fds[0];
}

} // namespace

TEST_CASE("read_to_end: everything up to EOF, appended to what is there")
{
    const int fd = pipe_with("line one\nline two\n");
    std::string out = "prefix:";
    CHECK(read_to_end(fd, 100, out) == 0);
    CHECK(out == "prefix:line one\nline two\n");
    ::close(fd);
}

TEST_CASE("read_to_end: exactly the cap is fine, one byte more is EFBIG")
{
    const std::string text(4096, 'x');
    int fd = pipe_with(text);
    std::string out;
    CHECK(read_to_end(fd, text.size(), out) == 0);
    CHECK(out.size() == text.size());
    ::close(fd);

    fd = pipe_with(text);
    out = "already here, not counted";
    CHECK(read_to_end(fd, text.size() - 1, out) == EFBIG);
    ::close(fd);
}

TEST_CASE("read_to_end: an empty file, and a descriptor that cannot be read")
{
    const int fd = pipe_with("");
    std::string out;
    CHECK(read_to_end(fd, 10, out) == 0);
    CHECK(out.empty());
    ::close(fd);

    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    CHECK(read_to_end(fds[1], 10, out) == EBADF); // the write end
    ::close(fds[0]);
    ::close(fds[1]);
}
