// The version 3 operations: INIT, OPEN .. SYMLINK. Each decodes its request
// with the codec (a request that does not decode gets SSH_FX_BAD_MESSAGE),
// logs what OpenSSH's sftp-server logs, acts, and replies.
#include "sshd/sftp/sftp_server.hpp"
#include "sshd/sftp/sftp_server_detail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace longhaul::sftp {

namespace detail {

std::string format(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    const int n = std::vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return {};
    if (static_cast<std::size_t>(n) < sizeof small)
        return std::string(small, static_cast<std::size_t>(n));
    std::string out(static_cast<std::size_t>(n) + 1, '\0');
    va_start(ap, fmt);
    std::vsnprintf(out.data(), out.size(), fmt, ap);
    va_end(ap);
    out.resize(static_cast<std::size_t>(n));
    return out;
}

status_code status_from_errno(int e) noexcept
{
    switch (e) {
    case 0: return status_code::ok;
    case ENOENT:
    case ENOTDIR:
    case EBADF:
    case ELOOP: return status_code::no_such_file;
    case EPERM:
    case EACCES:
    case EFAULT: return status_code::permission_denied;
    case ENAMETOOLONG:
    case EINVAL: return status_code::bad_message;
    case ENOSYS: return status_code::op_unsupported;
    default: return status_code::failure;
    }
}

int open_flags(std::uint32_t pflags) noexcept
{
    int flags = 0;
    if ((pflags & fxf::read) && (pflags & fxf::write))
        flags = O_RDWR;
    else if (pflags & fxf::read)
        flags = O_RDONLY;
    else if (pflags & fxf::write)
        flags = O_WRONLY;
    if (pflags & fxf::append)
        flags |= O_APPEND;
    if (pflags & fxf::creat)
        flags |= O_CREAT;
    if (pflags & fxf::trunc)
        flags |= O_TRUNC;
    if (pflags & fxf::excl)
        flags |= O_EXCL;
    return flags;
}

std::string open_flags_text(std::uint32_t pflags)
{
    static constexpr struct {
        std::uint32_t bit;
        const char* word;
    } words[] = {{fxf::read, "READ"},     {fxf::write, "WRITE"},       {fxf::append, "APPEND"},
                 {fxf::creat, "CREATE"}, {fxf::trunc, "TRUNCATE"}, {fxf::excl, "EXCL"}};
    std::string out;
    for (const auto& w : words) {
        if (pflags & w.bit) {
            if (!out.empty())
                out += ',';
            out += w.word;
        }
    }
    return out;
}

} // namespace detail

using detail::format;
using detail::status_from_errno;

namespace {

std::string modtime_text(std::uint32_t mtime)
{
    char buf[64] = "";
    const std::time_t t = mtime;
    struct tm tm {};
    if (localtime_r(&t, &tm) != nullptr)
        std::strftime(buf, sizeof buf, "%Y%m%d-%H:%M:%S", &tm);
    return buf;
}

// The largest offset pread/pwrite take; larger ones fail as lseek would.
constexpr std::uint64_t max_offset = static_cast<std::uint64_t>(INT64_MAX);

} // namespace

void server::do_init(byte_span payload)
{
    // The version is all a server needs; extension pairs a client sends
    // after it are not interpreted (OpenSSH ignores them too).
    if (payload.size() < 4) {
        log(log_level::error, "process_init: parse: incomplete message");
        finish(255);
        return;
    }
    const std::uint32_t version = load_u32(payload.data());
    client_version_ = version;
    log(log_level::verbose, format("received client version %u", version));
    version_reply v;
    // OpenSSH's, in its order, then the draft's check-file pair (their data
    // is the hash algorithms they take, as the draft's names), then
    // Longhaul's open-named (which opens files: only where OPEN may).
    const std::pair<std::string_view, std::string_view> advertised[] = {
        {ext::posix_rename, "1"}, {ext::statvfs, "2"},     {ext::fstatvfs, "2"},       {ext::hardlink, "1"},
        {ext::fsync, "1"},        {ext::lsetstat, "1"},    {ext::limits, "1"},         {ext::expand_path, "1"},
        {ext::copy_data, "1"},    {ext::home_directory, "1"}, {ext::users_groups_by_id, "1"},
        {ext::check_file_handle, check_file_algorithm_list()}, {ext::check_file_name, check_file_algorithm_list()},
        {ext::open_named, "1"},
    };
    for (const auto& [name, ver] : advertised) {
        for (const auto& h : extended_handlers()) {
            if (h.ext_name != name)
                continue;
            if (permitted(h) && (name != ext::open_named || allowed(open_handler())))
                v.extensions.push_back({std::string(name), std::string(ver)});
            else
                log(log_level::debug2, format("refusing to advertise disallowed extension %s",
                                              std::string(name).c_str()));
        }
    }
    // What serve() does at the end of its input: every complete request
    // before it is answered (process() runs until only a partial frame is
    // left), then the session ends.
    v.extensions.push_back({std::string(ext::drain_at_eof), "1"});
    send(v);
    init_done_ = true;
}

void server::do_open(std::uint32_t id, byte_span payload)
{
    auto m = open_request::decode(payload);
    if (!m)
        return bad_message(id, "process_open", m.error());
    if (const int index = open_file(id, std::move(m->path), m->pflags, m->attributes); index >= 0)
        send_handle(id, index);
}

int server::open_file(std::uint32_t id, std::string path, std::uint32_t pflags, const attrs& a)
{
    log(log_level::debug3, format("request %u: open flags %d", id, static_cast<int>(pflags)));
    const int flags = detail::open_flags(pflags);
    const mode_t mode = a.has(attr::permissions) ? a.permissions : 0666;
    log(log_level::info, format("open \"%s\" flags %s mode 0%o", printable(path).c_str(),
                                detail::open_flags_text(pflags).c_str(), static_cast<unsigned>(mode)));
    if (options_.read_only && ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0)) {
        log(log_level::verbose, "Refusing open request in read-only mode");
        send_status(id, status_code::permission_denied);
        return -1;
    }
    if (handles_in_use_ >= options_.max_handles) {
        log(log_level::error, format("process_open: too many open handles (%zu)", handles_in_use_));
        send_status(id, status_code::failure);
        return -1;
    }
    int fd = -1;
    if (int e = fs_.open(path, flags, mode & 07777, fd)) {
        send_status(id, status_from_errno(e));
        return -1;
    }
    return new_handle(handle_entry::kind::file, std::move(path), fd, nullptr, flags);
}

void server::do_close(std::uint32_t id, byte_span payload)
{
    auto m = close_request::decode(payload);
    if (!m)
        return bad_message(id, "process_close", m.error());
    const int h = find_handle(m->handle);
    log(log_level::debug3, format("request %u: close handle %u", id, static_cast<unsigned>(h)));
    log_close(h, {});
    send_status(id, status_from_errno(close_handle(h)));
}

void server::do_read(std::uint32_t id, byte_span payload)
{
    auto m = read_request::decode(payload);
    if (!m)
        return bad_message(id, "process_read", m.error());
    const int h = find_handle(m->handle);
    std::uint32_t len = m->length;
    log(log_level::debug1, format("request %u: read \"%s\" (handle %d) off %llu len %u", id,
                                  printable(handle_name(h)).c_str(), h, static_cast<unsigned long long>(m->offset), len));
    const int fd = handle_fd(h);
    if (fd < 0)
        return send_status(id, status_code::failure);
    if (len > options_.max_read_length) {
        log(log_level::debug2, format("read change len %u to %u", len, options_.max_read_length));
        len = options_.max_read_length;
    }
    if (m->offset > max_offset) {
        log(log_level::error, format("process_read: seek \"%.100s\": %s", printable(handle_name(h)).c_str(),
                                     std::strerror(EINVAL)));
        return send_status(id, status_from_errno(EINVAL));
    }
    // The reply is built in place: header, then the file's bytes read
    // straight into the output buffer, so the data is copied once.
    auto space = out_.prepare(data_reply_header_size + len);
    ssize_t n = 0;
    if (len > 0) {
        do {
            n = ::pread(fd, space.data() + data_reply_header_size, len, static_cast<off_t>(m->offset));
        } while (n < 0 && errno == EINTR);
        if (n < 0) {
            const int e = errno;
            log(log_level::error, format("process_read: read \"%.100s\": %s", printable(handle_name(h)).c_str(),
                                         std::strerror(e)));
            return send_status(id, status_from_errno(e));
        }
        if (n == 0)
            return send_status(id, status_code::eof);
    }
    write_data_reply_header(space.data(), id, static_cast<std::uint32_t>(n));
    out_.commit(data_reply_header_size + static_cast<std::size_t>(n));
    log(log_level::debug1, format("request %u: sent data len %d", id, static_cast<int>(n)));
    handles_[static_cast<std::size_t>(h)].bytes_read += static_cast<std::uint64_t>(n);
}

void server::do_write(std::uint32_t id, byte_span payload)
{
    auto m = write_request::decode(payload);
    if (!m)
        return bad_message(id, "process_write", m.error());
    const int h = find_handle(m->handle);
    log(log_level::debug1, format("request %u: write \"%s\" (handle %d) off %llu len %zu", id,
                                  printable(handle_name(h)).c_str(), h, static_cast<unsigned long long>(m->offset),
                                  m->data.size()));
    const int fd = handle_fd(h);
    if (fd < 0)
        return send_status(id, status_code::failure);
    if (m->offset > max_offset) {
        log(log_level::error, format("process_write: seek \"%.100s\": %s", printable(handle_name(h)).c_str(),
                                     std::strerror(EINVAL)));
        return send_status(id, status_from_errno(EINVAL));
    }
    // Straight from the input buffer to the file. On an O_APPEND handle
    // Linux's pwrite appends whatever the offset, as OpenSSH's write() does.
    std::size_t done = 0;
    while (done < m->data.size()) {
        const ssize_t n = ::pwrite(fd, m->data.data() + done, m->data.size() - done,
                                   static_cast<off_t>(m->offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int e = n < 0 ? errno : EIO;
            log(log_level::error, format("process_write: write \"%.100s\": %s", printable(handle_name(h)).c_str(),
                                         std::strerror(e)));
            return send_status(id, status_from_errno(e));
        }
        done += static_cast<std::size_t>(n);
        handles_[static_cast<std::size_t>(h)].bytes_written += static_cast<std::uint64_t>(n);
    }
    send_status(id, status_code::ok);
}

void server::do_stat_common(std::uint32_t id, const std::string& path, bool follow)
{
    log(log_level::debug3, format("request %u: %sstat", id, follow ? "" : "l"));
    log(log_level::verbose, format("%sstat name \"%s\"", follow ? "" : "l", printable(path).c_str()));
    struct stat st {};
    if (int e = fs_.stat(path, follow, st))
        return send_status(id, status_from_errno(e));
    send_attrs(id, attrs::from_stat(st));
}

void server::do_lstat(std::uint32_t id, byte_span payload)
{
    auto m = lstat_request::decode(payload);
    if (!m)
        return bad_message(id, "process_do_stat", m.error());
    do_stat_common(id, m->path, false);
}

void server::do_stat(std::uint32_t id, byte_span payload)
{
    auto m = stat_request::decode(payload);
    if (!m)
        return bad_message(id, "process_do_stat", m.error());
    do_stat_common(id, m->path, true);
}

void server::do_fstat(std::uint32_t id, byte_span payload)
{
    auto m = fstat_request::decode(payload);
    if (!m)
        return bad_message(id, "process_fstat", m.error());
    const int h = find_handle(m->handle);
    log(log_level::debug1, format("request %u: fstat \"%s\" (handle %u)", id, printable(handle_name(h)).c_str(),
                                  static_cast<unsigned>(h)));
    const int fd = handle_fd(h);
    if (fd < 0)
        return send_status(id, status_code::failure);
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return send_status(id, status_from_errno(errno));
    send_attrs(id, attrs::from_stat(st));
}

void server::apply_attrs(std::uint32_t id, const std::string& name, const attrs& a, int fd, bool follow)
{
    // As OpenSSH: each attribute in turn, the status of the last failure.
    const std::string shown = printable(name);
    int error = 0;
    const auto note = [&error](int rc) {
        if (rc != 0)
            error = rc;
    };
    if (a.has(attr::size)) {
        log(log_level::info, format("set \"%s\" size %llu", shown.c_str(), static_cast<unsigned long long>(a.size)));
        if (a.size > max_offset)
            note(EINVAL);
        else
            note(fd >= 0 ? (::ftruncate(fd, static_cast<off_t>(a.size)) == 0 ? 0 : errno)
                         : fs_.truncate(name, static_cast<off_t>(a.size)));
    }
    if (a.has(attr::permissions)) {
        log(log_level::info, format("set \"%s\" mode %04o", shown.c_str(), a.permissions));
        const mode_t mode = a.permissions & 07777;
        note(fd >= 0 ? (::fchmod(fd, mode) == 0 ? 0 : errno) : fs_.chmod(name, mode, follow));
    }
    if (a.has(attr::acmodtime)) {
        log(log_level::info, format("set \"%s\" modtime %s", shown.c_str(), modtime_text(a.mtime).c_str()));
        if (fd >= 0) {
            const struct timespec ts[2] = {{static_cast<std::time_t>(a.atime), 0}, {static_cast<std::time_t>(a.mtime), 0}};
            note(::futimens(fd, ts) == 0 ? 0 : errno);
        } else {
            note(fs_.set_times(name, a.atime, a.mtime, follow));
        }
    }
    if (a.has(attr::uidgid)) {
        log(log_level::info, format("set \"%s\" owner %lu group %lu", shown.c_str(), static_cast<unsigned long>(a.uid),
                                    static_cast<unsigned long>(a.gid)));
        note(fd >= 0 ? (::fchown(fd, a.uid, a.gid) == 0 ? 0 : errno) : fs_.chown(name, a.uid, a.gid, follow));
    }
    send_status(id, status_from_errno(error));
}

void server::do_setstat(std::uint32_t id, byte_span payload)
{
    auto m = setstat_request::decode(payload);
    if (!m)
        return bad_message(id, "process_setstat", m.error());
    log(log_level::debug1, format("request %u: setstat name \"%s\"", id, printable(m->path).c_str()));
    apply_attrs(id, m->path, m->attributes, -1, true);
}

void server::do_fsetstat(std::uint32_t id, byte_span payload)
{
    auto m = fsetstat_request::decode(payload);
    if (!m)
        return bad_message(id, "process_fsetstat", m.error());
    const int h = find_handle(m->handle);
    log(log_level::debug1, format("request %u: fsetstat handle %d", id, h));
    const int fd = handle_fd(h);
    if (fd < 0)
        return send_status(id, status_code::failure);
    apply_attrs(id, handle_name(h), m->attributes, fd, true);
}

void server::do_opendir(std::uint32_t id, byte_span payload)
{
    auto m = opendir_request::decode(payload);
    if (!m)
        return bad_message(id, "process_opendir", m.error());
    log(log_level::debug3, format("request %u: opendir", id));
    log(log_level::info, format("opendir \"%s\"", printable(m->path).c_str()));
    if (handles_in_use_ >= options_.max_handles || directories_in_use_ >= options_.max_directory_handles) {
        log(log_level::error, format("process_opendir: too many open handles (%zu, %zu directories)", handles_in_use_,
                                     directories_in_use_));
        return send_status(id, status_code::failure);
    }
    int fd = -1;
    if (int e = fs_.open_directory(m->path, fd))
        return send_status(id, status_from_errno(e));
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
        const int e = errno;
        ::close(fd);
        return send_status(id, status_from_errno(e));
    }
    send_handle(id, new_handle(handle_entry::kind::directory, std::move(m->path), fd, dir, 0));
}

void server::do_readdir(std::uint32_t id, byte_span payload)
{
    auto m = readdir_request::decode(payload);
    if (!m)
        return bad_message(id, "process_readdir", m.error());
    const int h = find_handle(m->handle);
    log(log_level::debug1, format("request %u: readdir \"%s\" (handle %d)", id, printable(handle_name(h)).c_str(), h));
    if (h < 0 || handles_[static_cast<std::size_t>(h)].use != handle_entry::kind::directory)
        return send_status(id, status_code::failure);
    DIR* dir = handles_[static_cast<std::size_t>(h)].dir;
    const int dfd = ::dirfd(dir);
    const std::time_t t = now();
    std::vector<name_entry> entries;
    // Up to 100 entries as OpenSSH sends, and never a reply near the packet
    // limit (a name is at most 255 bytes, its long name a few dozen more).
    std::size_t reply_size = 0;
    const std::size_t reply_budget = options_.max_packet_length / 2;
    while (entries.size() < detail::readdir_batch && reply_size < reply_budget) {
        errno = 0;
        const struct dirent* d = ::readdir(dir);
        if (d == nullptr)
            break;
        struct stat st {};
        // Relative to the directory's own descriptor: no path joining, no
        // PATH_MAX truncation, and never a symlink followed.
        if (::fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        name_entry e;
        e.filename = d->d_name;
        e.longname = long_name(e.filename, st, names_, t);
        e.attributes = attrs::from_stat(st);
        reply_size += e.filename.size() + e.longname.size() + 48;
        entries.push_back(std::move(e));
    }
    if (entries.empty())
        return send_status(id, status_code::eof);
    send_names(id, std::move(entries));
}

void server::do_remove(std::uint32_t id, byte_span payload)
{
    auto m = remove_request::decode(payload);
    if (!m)
        return bad_message(id, "process_remove", m.error());
    log(log_level::debug3, format("request %u: remove", id));
    log(log_level::info, format("remove name \"%s\"", printable(m->path).c_str()));
    send_status(id, status_from_errno(fs_.unlink(m->path)));
}

void server::do_mkdir(std::uint32_t id, byte_span payload)
{
    auto m = mkdir_request::decode(payload);
    if (!m)
        return bad_message(id, "process_mkdir", m.error());
    const mode_t mode = m->attributes.has(attr::permissions) ? (m->attributes.permissions & 07777) : 0777;
    log(log_level::debug3, format("request %u: mkdir", id));
    log(log_level::info, format("mkdir name \"%s\" mode 0%o", printable(m->path).c_str(), static_cast<unsigned>(mode)));
    send_status(id, status_from_errno(fs_.mkdir(m->path, mode)));
}

void server::do_rmdir(std::uint32_t id, byte_span payload)
{
    auto m = rmdir_request::decode(payload);
    if (!m)
        return bad_message(id, "process_rmdir", m.error());
    log(log_level::debug3, format("request %u: rmdir", id));
    log(log_level::info, format("rmdir name \"%s\"", printable(m->path).c_str()));
    send_status(id, status_from_errno(fs_.rmdir(m->path)));
}

void server::do_realpath(std::uint32_t id, byte_span payload)
{
    auto m = realpath_request::decode(payload);
    if (!m)
        return bad_message(id, "process_realpath", m.error());
    if (m->path.empty())
        m->path = ".";
    log(log_level::debug3, format("request %u: realpath", id));
    log(log_level::verbose, format("realpath \"%s\"", printable(m->path).c_str()));
    std::string resolved;
    if (int e = realpath(m->path, resolved))
        return send_status(id, status_from_errno(e));
    send_names(id, {name_entry{resolved, resolved, {}}});
}

void server::do_rename(std::uint32_t id, byte_span payload)
{
    auto m = rename_request::decode(payload);
    if (!m)
        return bad_message(id, "process_rename", m.error());
    log(log_level::debug3, format("request %u: rename", id));
    log(log_level::info, format("rename old \"%s\" new \"%s\"", printable(m->old_path).c_str(),
                                printable(m->new_path).c_str()));
    // SSH_FXP_RENAME must not replace an existing target (draft-02 §6.5).
    // A regular file is renamed race-free as OpenSSH does: link the new
    // name, then unlink the old; where the file system has no hard links,
    // check-then-rename.
    int e = 0;
    struct stat st {};
    if (int le = fs_.stat(m->old_path, false, st)) {
        e = le;
    } else if (S_ISREG(st.st_mode)) {
        if (int ke = fs_.link(m->old_path, m->new_path)) {
            if (ke == EOPNOTSUPP || ke == ENOSYS || ke == EXDEV || ke == EPERM) {
                struct stat target {};
                e = fs_.stat(m->new_path, true, target) != 0 ? fs_.rename(m->old_path, m->new_path) : EEXIST;
            } else {
                e = ke;
            }
        } else if (int ue = fs_.unlink(m->old_path)) {
            e = ue;
            fs_.unlink(m->new_path); // the spare link
        }
    } else {
        struct stat target {};
        e = fs_.stat(m->new_path, true, target) != 0 ? fs_.rename(m->old_path, m->new_path) : EEXIST;
    }
    send_status(id, status_from_errno(e));
}

void server::do_readlink(std::uint32_t id, byte_span payload)
{
    auto m = readlink_request::decode(payload);
    if (!m)
        return bad_message(id, "process_readlink", m.error());
    log(log_level::debug3, format("request %u: readlink", id));
    log(log_level::verbose, format("readlink \"%s\"", printable(m->path).c_str()));
    std::string target;
    if (int e = fs_.readlink(m->path, target))
        return send_status(id, status_from_errno(e));
    send_names(id, {name_entry{target, target, {}}});
}

void server::do_symlink(std::uint32_t id, byte_span payload)
{
    auto m = symlink_request::decode(payload);
    if (!m)
        return bad_message(id, "process_symlink", m.error());
    log(log_level::debug3, format("request %u: symlink", id));
    log(log_level::info, format("symlink old \"%s\" new \"%s\"", printable(m->target_path).c_str(),
                                printable(m->link_path).c_str()));
    // Fails if the link path exists, as it should.
    send_status(id, status_from_errno(fs_.symlink(m->target_path, m->link_path)));
}

} // namespace longhaul::sftp
