#include "common/keys/revocation_file.hpp"

#include "common/file_read.hpp"
#include "common/keys/revocation.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace longhaul {

namespace {

// The file read and parsed afresh, or why not (in `out`).
std::optional<revocation_list> load(const std::string& path, revocation_check& out)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        out.reason = std::strerror(errno);
        return std::nullopt;
    }
    std::string text;
    const int err = read_to_end(fd, max_revocation_file_size, text);
    ::close(fd);
    if (err == EFBIG) {
        out.reason = "invalid format"; // sshbuf_load_fd's answer to an oversized file
        return std::nullopt;
    }
    if (err != 0) {
        out.reason = std::strerror(err);
        return std::nullopt;
    }
    auto list = parse_revocation_list(as_bytes(text));
    if (!list) {
        out.reason = std::string(revocation_error_reason(list.error()));
        return std::nullopt;
    }
    return std::move(*list);
}

template <class Key>
revocation_check check(const std::string& path, const Key& key)
{
    revocation_check out;
    if (auto list = load(path, out))
        out.result = list->revoked(key) ? revocation_check::status::revoked : revocation_check::status::not_revoked;
    return out;
}

} // namespace

revocation_check check_revocation_file(const std::string& path, const public_key& key) { return check(path, key); }

revocation_check check_revocation_file(const std::string& path, const certificate& cert) { return check(path, cert); }

} // namespace longhaul
