#include "sshd/auth_info.hpp"

#include "common/fd_io.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/temp_name.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

std::string auth_info_line(std::string_view method, std::string_view submethod, const public_key* key,
                           const certificate* cert)
{
    std::string line(method);
    if (!submethod.empty()) {
        line.push_back('/');
        line += submethod;
    }
    if (cert != nullptr) {
        line.push_back(' ');
        line += cert->type_name();
        line.push_back(' ');
        line += base64_encode(cert->blob());
    } else if (key != nullptr) {
        line.push_back(' ');
        line += format_public_key(*key);
    }
    line.push_back('\n');
    return line;
}

namespace {

// Names tried before giving up: each collision is a file someone made
// with that name, which random names make all but impossible by chance.
constexpr int max_name_tries = 100;

std::string random_name(std::string_view prefix, random_source& rng)
{
    return fill_temp_template(std::string(prefix) + std::string(auth_info_random_chars, 'X'), rng, 0);
}

} // namespace

result<std::string> write_auth_info_file(std::string_view text, random_source& rng, std::string& error,
                                         std::string_view prefix)
{
    for (int i = 0; i < max_name_tries; ++i) {
        std::string path = random_name(prefix, rng);
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0) {
            error = std::string("mkstemp: ") + std::strerror(errno);
            return errc::io_error;
        }
        if (!write_all(fd, as_bytes(text))) {
            error = std::string("write: ") + std::strerror(errno);
            ::close(fd);
            ::unlink(path.c_str());
            return errc::io_error;
        }
        if (::close(fd) != 0) {
            error = std::string("close: ") + std::strerror(errno);
            ::unlink(path.c_str());
            return errc::io_error;
        }
        return path;
    }
    error = "mkstemp: " + std::string(std::strerror(EEXIST));
    return errc::io_error;
}

} // namespace longhaul
