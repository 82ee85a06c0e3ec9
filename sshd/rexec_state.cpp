#include "sshd/rexec_state.hpp"

#include "common/wire.hpp"

#include <openssl/crypto.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace longhaul {

namespace {

constexpr std::string_view rexec_magic = "longhaul-sshd-rexec-1";

// The writer appends to plain bytes; they are copied into wiped memory and
// cleansed before they go.
struct cleansed_bytes {
    bytes b;
    ~cleansed_bytes() { OPENSSL_cleanse(b.data(), b.size()); }
};

} // namespace

result<secret_bytes> encode_rexec_state(const rexec_state& state)
{
    if (state.config.files.size() > rexec_max_files || state.config.globs.size() > rexec_max_files ||
        state.host_keys.size() > rexec_max_keys)
        return errc::too_large;
    cleansed_bytes out;
    wire_writer w(out.b);
    w.string(rexec_magic);
    w.u32(static_cast<std::uint32_t>(state.config.files.size()));
    for (const auto& [path, text] : state.config.files)
        w.string(path).string(text);
    w.u32(static_cast<std::uint32_t>(state.config.globs.size()));
    for (const auto& [pattern, matched] : state.config.globs) {
        if (matched.size() > rexec_max_files)
            return errc::too_large;
        w.string(pattern).u32(static_cast<std::uint32_t>(matched.size()));
        for (const auto& m : matched)
            w.string(m);
    }
    w.u32(static_cast<std::uint32_t>(state.host_keys.size()));
    for (const auto& k : state.host_keys)
        w.string(k.span());
    w.boolean(state.moduli.has_value());
    if (state.moduli)
        w.string(*state.moduli);
    if (state.agent_host_keys.size() > rexec_max_keys)
        return errc::too_large;
    w.u32(static_cast<std::uint32_t>(state.agent_host_keys.size()));
    for (const auto& k : state.agent_host_keys)
        w.string(k);
    if (out.b.size() > rexec_max_state)
        return errc::too_large;
    return secret_bytes(byte_span(out.b));
}

result<rexec_state> decode_rexec_state(byte_span encoded)
{
    if (encoded.size() > rexec_max_state)
        return errc::invalid_format;
    wire_reader r(encoded);
    const std::size_t big = rexec_max_state;
    if (r.text() != rexec_magic)
        return errc::invalid_format;
    rexec_state s;
    const std::uint32_t files = r.u32();
    if (!r.ok() || files > rexec_max_files)
        return errc::invalid_format;
    for (std::uint32_t i = 0; i < files && r.ok(); ++i) {
        std::string path(r.text(4096));
        std::string text(r.text(big));
        s.config.files.emplace_back(std::move(path), std::move(text));
    }
    const std::uint32_t globs = r.u32();
    if (!r.ok() || globs > rexec_max_files)
        return errc::invalid_format;
    for (std::uint32_t i = 0; i < globs && r.ok(); ++i) {
        std::string pattern(r.text(4096));
        const std::uint32_t n = r.u32();
        if (!r.ok() || n > rexec_max_files)
            return errc::invalid_format;
        std::vector<std::string> matched;
        for (std::uint32_t j = 0; j < n && r.ok(); ++j)
            matched.emplace_back(r.text(4096));
        s.config.globs.emplace_back(std::move(pattern), std::move(matched));
    }
    const std::uint32_t keys = r.u32();
    if (!r.ok() || keys > rexec_max_keys)
        return errc::invalid_format;
    for (std::uint32_t i = 0; i < keys && r.ok(); ++i)
        s.host_keys.emplace_back(r.string(big));
    const std::uint8_t has_moduli = r.u8();
    if (has_moduli > 1)
        return errc::invalid_format;
    if (has_moduli == 1)
        s.moduli.emplace(r.text(big));
    const std::uint32_t agent_keys = r.u32();
    if (!r.ok() || agent_keys > rexec_max_keys)
        return errc::invalid_format;
    for (std::uint32_t i = 0; i < agent_keys && r.ok(); ++i) {
        const byte_span blob = r.string(big);
        s.agent_host_keys.emplace_back(blob.begin(), blob.end());
    }
    if (!r.finish())
        return errc::invalid_format;
    return s;
}

int make_rexec_state_fd(byte_span encoded, std::string& error)
{
    const int fd = ::memfd_create("sshd-rexec", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        error = std::string("memfd_create: ") + std::strerror(errno);
        return -1;
    }
    std::size_t done = 0;
    while (done < encoded.size()) {
        const ssize_t n = ::write(fd, encoded.data() + done, encoded.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            error = std::string("write: ") + std::strerror(errno);
            ::close(fd);
            return -1;
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        error = std::string("sealing the state: ") + std::strerror(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

result<secret_bytes> read_rexec_state_fd(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return errc::io_error;
    if (st.st_size < 0 || static_cast<std::uint64_t>(st.st_size) > rexec_max_state)
        return errc::too_large;
    secret_bytes buf(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < buf.size()) {
        const ssize_t n = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return errc::io_error;
        got += static_cast<std::size_t>(n);
    }
    return buf;
}

void exec_connection_process(int socket_fd, int state_fd, int startup_fd, char** argv, std::string& error)
{
    // Out of the way first: any of them may sit on a number another one
    // is about to take.
    const int sock = ::fcntl(socket_fd, F_DUPFD_CLOEXEC, 10);
    const int state = ::fcntl(state_fd, F_DUPFD_CLOEXEC, 10);
    const int startup = startup_fd >= 0 ? ::fcntl(startup_fd, F_DUPFD_CLOEXEC, 10) : -1;
    if (sock < 0 || state < 0 || (startup_fd >= 0 && startup < 0)) {
        error = std::string("dup: ") + std::strerror(errno);
        return;
    }
    // dup2 leaves the new descriptors open across exec.
    if (::dup2(sock, STDIN_FILENO) < 0 || ::dup2(sock, STDOUT_FILENO) < 0 || ::dup2(state, rexec_state_fd) < 0 ||
        (startup >= 0 && ::dup2(startup, rexec_startup_fd) < 0)) {
        error = std::string("dup2: ") + std::strerror(errno);
        return;
    }
    if (startup < 0)
        ::close(rexec_startup_fd);
    std::vector<char*> args;
    args.push_back(argv[0]);
    args.push_back(const_cast<char*>(rexec_flag));
    for (char** a = argv + 1; *a != nullptr; ++a)
        args.push_back(*a);
    args.push_back(nullptr);
    ::execv("/proc/self/exe", args.data());
    error = std::string("execv /proc/self/exe: ") + std::strerror(errno);
}

} // namespace longhaul
