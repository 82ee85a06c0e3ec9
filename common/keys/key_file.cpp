#include "common/keys/key_file.hpp"

#include "common/fd_io.hpp"
#include "common/keys/base64.hpp"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace longhaul {

namespace {

class fd_guard {
public:
    explicit fd_guard(int fd) noexcept : fd_(fd) {}
    ~fd_guard()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    fd_guard(const fd_guard&) = delete;
    fd_guard& operator=(const fd_guard&) = delete;
    int get() const noexcept { return fd_; }
    int release() noexcept
    {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }

private:
    int fd_;
};

} // namespace

result<private_key> parse_private_key(std::string_view file_contents, std::optional<std::string_view> passphrase,
                                      const key_parse_options& options)
{
    if (file_contents.size() > max_key_file_size)
        return errc::too_large;
    if (armor_starts_with(file_contents, openssh_key_label))
        return parse_openssh_private_key(file_contents, passphrase, options);
    if (is_pem_private_key(file_contents))
        return parse_pem_private_key(file_contents, passphrase);
    return errc::invalid_format;
}

result<bool> private_key_is_encrypted(std::string_view file_contents)
{
    if (armor_starts_with(file_contents, openssh_key_label)) {
        // The rounds limit does not matter for the question asked.
        auto header = parse_openssh_key_header(file_contents, key_parse_options{~0u});
        if (!header)
            return header.error();
        return header->encrypted();
    }
    if (is_pem_private_key(file_contents))
        return pem_private_key_is_encrypted(file_contents);
    return errc::invalid_format;
}

result<public_key> private_key_file_public_key(std::string_view file_contents)
{
    if (armor_starts_with(file_contents, openssh_key_label)) {
        auto header = parse_openssh_key_header(file_contents, key_parse_options{~0u});
        if (!header)
            return header.error();
        return std::move(header->key);
    }
    if (is_pem_private_key(file_contents)) {
        auto key = parse_pem_private_key(file_contents, std::nullopt);
        if (!key)
            return key.error();
        return key->public_part();
    }
    return errc::invalid_format;
}

result<std::string> write_private_key(const private_key& key, private_key_format format,
                                      std::string_view passphrase, random_source& rng, int kdf_rounds,
                                      std::string_view openssh_cipher)
{
    switch (format) {
    case private_key_format::openssh:
        return write_openssh_private_key(key, passphrase, kdf_rounds, rng, openssh_cipher);
    case private_key_format::pem:
        return write_pem_private_key(key, passphrase, pem_format::traditional);
    case private_key_format::pkcs8:
        return write_pem_private_key(key, passphrase, pem_format::pkcs8);
    }
    return errc::invalid_argument;
}

result<secret_bytes> read_key_file(const std::filesystem::path& path)
{
    fd_guard fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (fd.get() < 0)
        return errc::io_error;
    return read_key_file(fd.get());
}

result<secret_bytes> read_key_file(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return errc::io_error;
    if (static_cast<std::uint64_t>(st.st_size) > max_key_file_size)
        return errc::too_large;
    // One byte more than the size lets a file that grew be noticed.
    secret_bytes buf(static_cast<std::size_t>(st.st_size) + 1);
    const std::size_t got = read_full(fd, buf.data(), buf.size());
    if (got < buf.size() && errno != 0)
        return errc::io_error;
    if (got == buf.size())
        return errc::too_large;
    return secret_bytes(byte_span(buf.data(), got));
}

result<private_key> load_private_key_file(const std::filesystem::path& path,
                                          std::optional<std::string_view> passphrase,
                                          const key_parse_options& options)
{
    auto contents = read_key_file(path);
    if (!contents)
        return contents.error();
    return parse_private_key(as_string_view(contents->span()), passphrase, options);
}

result<void> write_private_key_file(const std::filesystem::path& path, std::string_view contents)
{
    fd_guard fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    // An existing file keeps its mode through O_TRUNC: tighten it.
    if (fd.get() < 0 || ::fchmod(fd.get(), 0600) != 0)
        return errc::io_error;
    std::size_t done = 0;
    while (done < contents.size()) {
        const ssize_t n = ::write(fd.get(), contents.data() + done, contents.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return errc::io_error;
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd.release()) != 0)
        return errc::io_error;
    return {};
}

std::vector<std::string> private_key_permission_warning(const std::filesystem::path& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || st.st_uid != getuid() || (st.st_mode & 077) == 0)
        return {};
    char mode[8];
    std::snprintf(mode, sizeof mode, "0%3.3o", static_cast<unsigned>(st.st_mode & 0777));
    return {
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
        "@         WARNING: UNPROTECTED PRIVATE KEY FILE!          @",
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
        std::string("Permissions ") + mode + " for '" + path.string() + "' are too open.",
        "It is required that your private key files are NOT accessible by others.",
        "This private key will be ignored.",
    };
}

} // namespace longhaul
