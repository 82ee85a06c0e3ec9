// The OpenSSH extensions (PROTOCOL §4): posix-rename, statvfs, fstatvfs,
// hardlink, fsync, lsetstat, limits, expand-path, copy-data,
// home-directory and users-groups-by-id; and Longhaul's open-named.
#include "sshd/sftp/sftp_server.hpp"
#include "sshd/sftp/sftp_server_detail.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace longhaul::sftp {

using detail::format;
using detail::status_from_errno;

namespace {

// OpenSSH's copy-data buffer, which decides its EOF status (see below).
constexpr std::size_t copy_chunk = 64 * 1024;

} // namespace

void server::do_posix_rename(std::uint32_t id, byte_span payload)
{
    auto m = posix_rename_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_posix_rename", m.error());
    log(log_level::debug3, format("request %u: posix-rename", id));
    log(log_level::info, format("posix-rename old \"%s\" new \"%s\"", printable(m->old_path).c_str(),
                                printable(m->new_path).c_str()));
    send_status(id, status_from_errno(fs_.rename(m->old_path, m->new_path)));
}

void server::do_statvfs(std::uint32_t id, byte_span payload)
{
    auto m = statvfs_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_statvfs", m.error());
    log(log_level::debug3, format("request %u: statvfs", id));
    log(log_level::info, format("statvfs \"%s\"", printable(m->path).c_str()));
    struct statvfs st {};
    if (int e = fs_.statvfs(m->path, st))
        return send_status(id, status_from_errno(e));
    send_statvfs(id, st);
}

void server::do_fstatvfs(std::uint32_t id, byte_span payload)
{
    auto m = fstatvfs_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_fstatvfs", m.error());
    const int h = find_handle(m->handle);
    log(log_level::debug1, format("request %u: fstatvfs \"%s\" (handle %u)", id, printable(handle_name(h)).c_str(),
                                  static_cast<unsigned>(h)));
    const int fd = handle_fd(h);
    if (fd < 0)
        return send_status(id, status_code::failure);
    struct statvfs st {};
    if (::fstatvfs(fd, &st) != 0)
        return send_status(id, status_from_errno(errno));
    send_statvfs(id, st);
}

void server::do_hardlink(std::uint32_t id, byte_span payload)
{
    auto m = hardlink_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_hardlink", m.error());
    log(log_level::debug3, format("request %u: hardlink", id));
    log(log_level::info, format("hardlink old \"%s\" new \"%s\"", printable(m->old_path).c_str(),
                                printable(m->new_path).c_str()));
    send_status(id, status_from_errno(fs_.link(m->old_path, m->new_path)));
}

void server::do_fsync(std::uint32_t id, byte_span payload)
{
    auto m = fsync_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_fsync", m.error());
    const int h = find_handle(m->handle);
    log(log_level::debug3, format("request %u: fsync (handle %u)", id, static_cast<unsigned>(h)));
    log(log_level::verbose, format("fsync \"%s\"", printable(handle_name(h)).c_str()));
    const int fd = handle_fd(h);
    if (fd < 0)
        return send_status(id, status_code::no_such_file);
    send_status(id, status_from_errno(::fsync(fd) == 0 ? 0 : errno));
}

void server::do_lsetstat(std::uint32_t id, byte_span payload)
{
    auto m = lsetstat_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_lsetstat", m.error());
    log(log_level::debug1, format("request %u: lsetstat name \"%s\"", id, printable(m->path).c_str()));
    if (m->attributes.has(attr::size)) // nonsensical for links
        return send_status(id, status_code::bad_message);
    apply_attrs(id, m->path, m->attributes, -1, false);
}

void server::do_limits(std::uint32_t id, byte_span payload)
{
    auto m = limits_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_limits", m.error());
    log(log_level::debug1, format("request %u: limits", id));
    // What this server really takes: its packet limit, reads and writes of
    // max_*_length, and the handles it will open (kept within the
    // descriptors the program has, see sftp_server_main).
    send(limits_reply{.id = id,
                      .max_packet_length = options_.max_packet_length,
                      .max_read_length = options_.max_read_length,
                      .max_write_length = options_.max_write_length,
                      .max_open_handles = options_.max_handles});
}

void server::do_expand_path(std::uint32_t id, byte_span payload)
{
    auto m = expand_path_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_expand", m.error());
    std::string cwd;
    if (int e = fs_.getcwd(cwd))
        return send_status(id, status_from_errno(e));
    std::string path = std::move(m->path);
    log(log_level::debug3, format("request %u: expand, original \"%s\"", id, printable(path).c_str()));
    if (path.empty()) {
        path = ".";
    } else if (path[0] == '~') {
        // "~" and "~/" are the start directory (the home directory unless
        // -d moved it), as OpenSSH expands them; "~user" is user's home.
        if (path == "~") {
            path = cwd;
        } else if (path.compare(0, 2, "~/") == 0) {
            path = cwd + "/" + path.substr(2);
        } else {
            const auto slash = path.find('/');
            const std::string user = path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
            const auto home = names_.home_directory(user);
            if (!home) {
                log(log_level::error, format("tilde_expand: No such user %s", printable(user).c_str()));
                return send_status(id, status_code::no_such_file, "no such user");
            }
            std::string rest = slash == std::string::npos ? std::string() : path.substr(slash + 1);
            path = *home;
            if (!rest.empty()) {
                if (path.empty() || path.back() != '/')
                    path += '/';
                path += rest;
            }
        }
    } else if (path[0] != '/') {
        path = cwd + "/" + path;
    }
    log(log_level::verbose, format("expand \"%s\"", printable(path).c_str()));
    std::string resolved;
    if (int e = realpath(path, resolved))
        return send_status(id, status_from_errno(e));
    send_names(id, {name_entry{resolved, resolved, {}}});
}

void server::do_copy_data(std::uint32_t id, byte_span payload)
{
    auto m = copy_data_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_copy_data", m.error());
    const int rh = find_handle(m->read_handle);
    const int wh = find_handle(m->write_handle);
    log(log_level::debug1,
        format("request %u: copy-data from \"%s\" (handle %d) off %llu len %llu to \"%s\" (handle %d) off %llu", id,
               printable(handle_name(rh)).c_str(), rh, static_cast<unsigned long long>(m->read_offset),
               static_cast<unsigned long long>(m->read_length), printable(handle_name(wh)).c_str(), wh,
               static_cast<unsigned long long>(m->write_offset)));
    const int rfd = handle_fd(rh);
    const int wfd = handle_fd(wh);
    // Never a handle onto itself, or two handles on the same path.
    if (rh == wh || rfd < 0 || wfd < 0 || std::strcmp(handle_name(rh), handle_name(wh)) == 0)
        return send_status(id, status_code::failure);
    const std::uint64_t max_offset = static_cast<std::uint64_t>(INT64_MAX);
    if (m->read_offset > max_offset || m->write_offset > max_offset)
        return send_status(id, status_from_errno(EINVAL));
    const bool until_eof = m->read_length == 0;
    const std::uint64_t total = until_eof ? max_offset - m->read_offset : m->read_length;
    off_t roff = static_cast<off_t>(m->read_offset);
    off_t woff = static_cast<off_t>(m->write_offset);
    const bool append = (handles_[static_cast<std::size_t>(wh)].flags & O_APPEND) != 0;
    status_code status = status_code::ok;
    std::vector<std::uint8_t> buf;
    std::uint64_t done = 0;
    while (done < total) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(total - done, 1 << 20));
        // The kernel copies without a trip through user space where it can
        // (copy_file_range); a pread/pwrite loop otherwise (O_APPEND targets,
        // file systems that refuse).
        ssize_t n = -1;
        if (!append) {
            n = ::copy_file_range(rfd, &roff, wfd, &woff, want, 0);
            if (n < 0 && errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS &&
                errno != EBADF) {
                const int e = errno;
                log(log_level::error, format("process_extended_copy_data: copy failed: %s", std::strerror(e)));
                status = status_from_errno(e);
                break;
            }
        }
        if (n < 0) {
            if (buf.empty())
                buf.resize(copy_chunk);
            const std::size_t chunk = std::min(want, buf.size());
            n = ::pread(rfd, buf.data(), chunk, roff);
            if (n < 0) {
                const int e = errno;
                log(log_level::error, format("process_extended_copy_data: read failed: %s", std::strerror(e)));
                status = status_from_errno(e);
                break;
            }
            std::size_t written = 0;
            while (written < static_cast<std::size_t>(n)) {
                const ssize_t w = ::pwrite(wfd, buf.data() + written, static_cast<std::size_t>(n) - written,
                                           woff + static_cast<off_t>(written));
                if (w <= 0) {
                    const int e = w < 0 ? errno : EIO;
                    log(log_level::error, format("process_extended_copy_data: write failed: %zu != %zd: %s", written,
                                                 n, std::strerror(e)));
                    status = status_from_errno(e);
                    break;
                }
                written += static_cast<std::size_t>(w);
            }
            if (status != status_code::ok)
                break;
            roff += n;
            woff += n;
        }
        if (n == 0) {
            // The end of the file before the length was copied. OpenSSH
            // copies in 64 KiB chunks and counts each chunk as done before
            // reading it, so it reports EOF only when the end came before
            // the last chunk, and success otherwise: the same status here.
            const std::uint64_t last_chunk_start = ((total - 1) / copy_chunk) * copy_chunk;
            status = until_eof || done >= last_chunk_start ? status_code::ok : status_code::eof;
            break;
        }
        done += static_cast<std::uint64_t>(n);
        handles_[static_cast<std::size_t>(rh)].bytes_read += static_cast<std::uint64_t>(n);
        handles_[static_cast<std::size_t>(wh)].bytes_written += static_cast<std::uint64_t>(n);
    }
    send_status(id, status);
}

void server::do_home_directory(std::uint32_t id, byte_span payload)
{
    auto m = home_directory_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_home_directory", m.error());
    log(log_level::debug3, format("request %u: home-directory \"%s\"", id, printable(m->username).c_str()));
    std::string home;
    if (m->username.empty()) {
        home = options_.home;
    } else if (auto h = names_.home_directory(m->username)) {
        home = *h;
    } else {
        return send_status(id, status_code::failure);
    }
    log(log_level::verbose, format("home-directory \"%s\"", printable(home).c_str()));
    send_names(id, {name_entry{home, home, {}}});
}

void server::do_users_groups_by_id(std::uint32_t id, byte_span payload)
{
    auto m = users_groups_by_id_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_get_users_groups_by_id", m.error());
    log(log_level::debug1, format("process_extended_get_users_groups_by_id: uids len = %zu, gids len = %zu",
                                  m->uids.ids.size() * 4, m->gids.ids.size() * 4));
    users_groups_by_id_reply r{.id = id};
    // The reply must fit a packet the client takes: a request for more names
    // than that fails instead of growing without bound.
    std::size_t size = 64;
    const auto fits = [&](const std::string& n) { return (size += 4 + n.size()) <= options_.max_packet_length; };
    for (auto uid : m->uids.ids) {
        std::string n = names_.user_name(uid).value_or("");
        log(log_level::debug3, format("process_extended_get_users_groups_by_id: uid %u => \"%s\"", uid, n.c_str()));
        if (!fits(n))
            return send_status(id, status_code::failure);
        r.users.names.push_back(std::move(n));
    }
    for (auto gid : m->gids.ids) {
        std::string n = names_.group_name(gid).value_or("");
        log(log_level::debug3, format("process_extended_get_users_groups_by_id: gid %u => \"%s\"", gid, n.c_str()));
        if (!fits(n))
            return send_status(id, status_code::failure);
        r.groups.names.push_back(std::move(n));
    }
    log(log_level::verbose, format("users-groups-by-id: %zu users, %zu groups", r.users.names.size(),
                                   r.groups.names.size()));
    send(r);
}

// open-named@longhaul-ssh.org (docs/PROTOCOL.md): OPEN, with the handle
// the client chose, so that its READs can follow in the same flight. The
// name may not be one this server could give out itself (its handles are
// 8 bytes) nor one in use; requests run in order, so a READ behind the
// open finds the handle, or no handle when the open failed.
void server::do_open_named(std::uint32_t id, byte_span payload)
{
    auto m = open_named_request::decode(payload);
    if (!m)
        return bad_message(id, "process_extended_open_named", m.error());
    if (!permitted(open_handler()))
        return send_status(id, status_code::permission_denied);
    const bool in_use = named_handles_.contains(m->handle);
    if (m->handle.empty() || m->handle.size() > max_named_handle_length || m->handle.size() == 8 || in_use) {
        log(log_level::error, format("process_extended_open_named: handle of %zu bytes refused%s", m->handle.size(),
                                     in_use ? " (in use)" : ""));
        return send_status(id, status_code::failure);
    }
    const int index = open_file(id, std::move(m->path), m->pflags, m->attributes);
    if (index < 0)
        return;
    named_handles_.emplace(m->handle, index);
    handles_[static_cast<std::size_t>(index)].named = std::move(m->handle);
    send_handle(id, index);
}

} // namespace longhaul::sftp
