#include "common/keys/revocation_file.hpp"

#include "common/file_read.hpp"
#include "common/keys/revocation.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

revocation_check check_revocation_file(const std::string& path, const public_key& key)
{
    revocation_check out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        out.reason = std::strerror(errno);
        return out;
    }
    std::string text;
    const int err = read_to_end(fd, max_revocation_file_size, text);
    ::close(fd);
    if (err == EFBIG) {
        out.reason = "invalid format"; // sshbuf_load_fd's answer to an oversized file
        return out;
    }
    if (err != 0) {
        out.reason = std::strerror(err);
        return out;
    }
    auto list = parse_revocation_list(as_bytes(text));
    if (!list) {
        out.reason = std::string(revocation_error_reason(list.error()));
        return out;
    }
    out.result = list->revoked(key) ? revocation_check::status::revoked : revocation_check::status::not_revoked;
    return out;
}

} // namespace longhaul
