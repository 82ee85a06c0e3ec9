// check-file-handle and check-file-name (draft-ietf-secsh-filexfer-
// extensions-00 §3): a hash of a range of a file, so a client resuming a
// transfer can compare the part it already has without reading it back.
//
// The server core runs on one thread and serves a session's requests in
// order, so a hash of a huge range would hold up every other request of
// the session (the READs and WRITEs of other files in flight) for as long
// as the disk and the hash take. Each request is therefore bounded:
// at most server_options::max_check_length bytes are hashed (256 MiB by
// default, well under a second with SHA-256 from a warm cache), and a
// request over more is refused with SSH_FX_FAILURE and says so; a client
// that wants more asks for it in pieces (Longhaul's asks 64 MiB at a
// time). Block hashes must fit one reply packet. The file is read in
// 256 KiB chunks into one buffer, so memory does not grow with the range.
#include "sshd/sftp/sftp_server.hpp"
#include "sshd/sftp/sftp_server_detail.hpp"

#include "common/crypto/hash.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace longhaul::sftp {

using detail::format;
using detail::status_from_errno;

namespace {

// The draft's names for the algorithms this server has (MD5 and SHA-1 are
// left out on purpose: nobody should compare files by them any more).
struct check_file_algorithm {
    std::string_view name;
    hash_alg alg;
};
constexpr check_file_algorithm check_file_algorithms[] = {
    {"sha256", hash_alg::sha256},
    {"sha384", hash_alg::sha384},
    {"sha512", hash_alg::sha512},
};

// The first algorithm of the client's comma-separated list that this
// server has, or nullptr.
const check_file_algorithm* pick_check_file_algorithm(std::string_view list) noexcept
{
    while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string_view name = list.substr(0, comma);
        for (const auto& a : check_file_algorithms)
            if (a.name == name)
                return &a;
        if (comma == std::string_view::npos)
            break;
        list.remove_prefix(comma + 1);
    }
    return nullptr;
}

constexpr std::size_t check_file_chunk = 256 * 1024;

} // namespace

std::string_view server::check_file_algorithm_list() noexcept
{
    return "sha256,sha384,sha512";
}

void server::do_check_file_handle(std::uint32_t id, byte_span payload)
{
    auto m = check_file_handle_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_check_file_handle", m.error());
    const int h = find_handle(m->handle);
    log(log_level::debug1, format("request %u: check-file-handle \"%s\" (handle %d)", id,
                                  printable(handle_name(h)).c_str(), h));
    const int fd = handle_fd(h);
    if (fd < 0)
        return send_status(id, status_code::failure);
    // The draft wants a handle opened for reading.
    if ((handles_[static_cast<std::size_t>(h)].flags & O_ACCMODE) == O_WRONLY)
        return send_status(id, status_code::permission_denied);
    check_file(id, fd, handle_name(h), m->algorithms, m->start_offset, m->length, m->block_size);
}

void server::do_check_file_name(std::uint32_t id, byte_span payload)
{
    auto m = check_file_name_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_check_file_name", m.error());
    log(log_level::debug1, format("request %u: check-file-name \"%s\"", id, printable(m->path).c_str()));
    int fd = -1;
    if (int e = fs_.open(m->path, O_RDONLY | O_NONBLOCK, 0, fd))
        return send_status(id, status_from_errno(e));
    check_file(id, fd, m->path.c_str(), m->algorithms, m->start_offset, m->length, m->block_size);
    ::close(fd);
}

void server::check_file(std::uint32_t id, int fd, const char* name, const std::string& algorithms,
                        std::uint64_t start, std::uint64_t length, std::uint32_t block_size)
{
    const auto* algorithm = pick_check_file_algorithm(algorithms);
    log(log_level::verbose,
        format("check-file \"%s\" algorithms \"%s\" offset %llu length %llu block-size %u", printable(name).c_str(),
               printable(algorithms).c_str(), static_cast<unsigned long long>(start),
               static_cast<unsigned long long>(length), block_size));
    if (algorithm == nullptr) {
        log(log_level::verbose, format("check-file: none of \"%s\" is supported", printable(algorithms).c_str()));
        return send_status(id, status_code::op_unsupported, "No supported hash algorithm");
    }
    if (block_size != 0 && block_size < min_check_file_block)
        return send_status(id, status_code::failure, "Block size below 256");
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return send_status(id, status_from_errno(errno));
    if (!S_ISREG(st.st_mode))
        return send_status(id, status_code::failure, "Not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    // A range past the end has nothing to hash; one that runs past it is
    // cut there (a length of 0 means "to the end" in the draft anyway).
    if (start > size)
        return send_status(id, status_code::eof);
    const std::uint64_t end = (length == 0 || length > size - start) ? size : start + length;
    const std::uint64_t total = end - start;
    if (total > options_.max_check_length) {
        log(log_level::verbose, format("check-file: %llu bytes asked, at most %llu per request",
                                       static_cast<unsigned long long>(total),
                                       static_cast<unsigned long long>(options_.max_check_length)));
        return send_status(id, status_code::failure,
                           format("Range too long: at most %llu bytes per request",
                                  static_cast<unsigned long long>(options_.max_check_length)));
    }
    const std::size_t digest = digest_size(algorithm->alg);
    const std::uint64_t blocks =
        block_size == 0 ? 1 : std::max<std::uint64_t>(1, (total + block_size - 1) / block_size);
    // Room for the header, the name and the algorithm in the packet.
    if (blocks * digest + 64 > options_.max_packet_length)
        return send_status(id, status_code::failure, "Too many blocks for one reply");

    check_file_reply reply{.id = id, .algorithm = std::string(algorithm->name), .hashes = {}};
    reply.hashes.reserve(static_cast<std::size_t>(blocks * digest));
    hasher hash(algorithm->alg);
    std::vector<std::uint8_t> buf(
        static_cast<std::size_t>(std::min<std::uint64_t>(check_file_chunk, std::max<std::uint64_t>(total, 1))));
    const std::uint64_t block = block_size == 0 ? total : block_size;
    std::uint64_t in_block = 0;
    std::uint64_t pos = start;
    while (pos < end) {
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>({buf.size(), end - pos, block - in_block}));
        const ssize_t n = ::pread(fd, buf.data(), want, static_cast<off_t>(pos));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const int e = errno;
            log(log_level::error, format("process_extended_check_file: read \"%.100s\": %s", printable(name).c_str(),
                                         std::strerror(e)));
            return send_status(id, status_from_errno(e));
        }
        if (n == 0)
            break; // the file shrank: what was there is hashed
        hash.update(byte_span(buf.data(), static_cast<std::size_t>(n)));
        pos += static_cast<std::uint64_t>(n);
        in_block += static_cast<std::uint64_t>(n);
        if (in_block == block) {
            const bytes d = hash.finish();
            reply.hashes.insert(reply.hashes.end(), d.begin(), d.end());
            hash.reset();
            in_block = 0;
        }
    }
    // The last, short block (or the whole range, empty or cut short).
    if (in_block > 0 || reply.hashes.empty()) {
        const bytes d = hash.finish();
        reply.hashes.insert(reply.hashes.end(), d.begin(), d.end());
    }
    log(log_level::debug1, format("request %u: sent check-file %s, %zu hashes", id,
                                  std::string(algorithm->name).c_str(), reply.hashes.size() / digest));
    send(reply);
}

} // namespace longhaul::sftp
