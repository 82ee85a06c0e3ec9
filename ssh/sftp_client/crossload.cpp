#include "ssh/sftp_client/crossload.hpp"

#include "ssh/sftp_client/bandwidth_limiter.hpp"
#include "ssh/sftp_client/text.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace longhaul::sftp {

namespace {

// Directory trees deeper than this are refused, as OpenSSH's MAX_DIR_DEPTH.
constexpr int max_crossload_depth = 64;

// The data phase of one file. Shared with the request callbacks, which may
// outlive a failed session's loop iteration.
struct crossload_state {
    bytes from_handle, to_handle;
    std::uint32_t chunk = 0;
    std::uint64_t next_offset = 0;
    std::size_t reads_out = 0, writes_out = 0;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> short_reads; // the rest of a short DATA, to ask again
    bool eof = false;
    std::uint32_t read_error = 0, write_error = 0;
};

void send_read(session& from, session& to, const std::shared_ptr<crossload_state>& st, std::uint64_t offset,
               std::uint32_t length)
{
    ++st->reads_out;
    from.core().request(read_request{.id = 0, .handle = st->from_handle, .offset = offset, .length = length},
                        [&to, st, offset, length](const reply& r) {
                            --st->reads_out;
                            if (const auto* d = std::get_if<data_reply>(&r)) {
                                if (d->data.empty() || d->data.size() > length) {
                                    st->read_error = static_cast<std::uint32_t>(status_code::bad_message);
                                    return;
                                }
                                if (st->write_error != 0 || !to.ok())
                                    return;
                                // Straight from the origin's reply into the
                                // destination's output: no copy of our own.
                                ++st->writes_out;
                                to.core().request(
                                    write_request{.id = 0, .handle = st->to_handle, .offset = offset, .data = d->data},
                                    [st](const reply& w) {
                                        --st->writes_out;
                                        const auto* s = as_status(w);
                                        const std::uint32_t code =
                                            s ? s->code : static_cast<std::uint32_t>(status_code::bad_message);
                                        if (code != 0 && st->write_error == 0)
                                            st->write_error = code;
                                    });
                                if (d->data.size() < length)
                                    st->short_reads.emplace_back(offset + d->data.size(),
                                                                 length - static_cast<std::uint32_t>(d->data.size()));
                            } else if (const auto* s = as_status(r); s && s->code == std::uint32_t(status_code::eof)) {
                                st->eof = true;
                            } else if (st->read_error == 0) {
                                st->read_error =
                                    s ? s->code : static_cast<std::uint32_t>(status_code::bad_message);
                            }
                        });
}

// Reads ahead of the writes until the origin's EOF, both sessions pumped
// in turn, the reads paced by -l (the same limiter as the transfer
// engine's); returns once nothing of this file is outstanding.
void copy_data(session& from, session& to, const std::shared_ptr<crossload_state>& st, std::size_t max_requests,
               std::uint64_t limit_bps)
{
    bandwidth_limiter limiter(limit_bps);
    auto next_read = from.now();
    for (;;) {
        const bool stop = st->read_error != 0 || st->write_error != 0 || !from.ok() || !to.ok() || from.interrupted();
        if (!stop) {
            auto again = std::move(st->short_reads);
            st->short_reads.clear();
            for (const auto& [offset, length] : again)
                send_read(from, to, st, offset, length);
            while (!st->eof && st->reads_out + st->writes_out < max_requests && from.now() >= next_read) {
                send_read(from, to, st, st->next_offset, st->chunk);
                st->next_offset += st->chunk;
                next_read = limiter.account(st->chunk, from.now());
            }
        }
        if (st->reads_out == 0 && st->writes_out == 0 && (stop || (st->eof && st->short_reads.empty())))
            return;
        // The destination without waiting (its output out, its acks in),
        // then a short wait on the origin's data; with no read left, on the
        // destination's acks (or until -l lets the next read go).
        to.pump(0);
        if (st->reads_out > 0 || st->writes_out == 0)
            from.pump(10);
        else
            to.pump(10);
    }
}

// The modes and times -p copies, those the origin gave.
attrs preserved_attrs(const attrs& a)
{
    attrs p;
    p.flags = a.flags & (attr::permissions | attr::acmodtime);
    p.permissions = a.permissions & 07777;
    p.atime = a.atime;
    p.mtime = a.mtime;
    return p;
}

} // namespace

int crossload_file(remote_fs& from, remote_fs& to, const std::string& from_path, const std::string& to_path,
                   std::optional<attrs> a, const crossload_options& o)
{
    const output_sink& out = from.out();
    if (!a) {
        a = from.stat(from_path, false);
        if (!a)
            return -1;
    }
    if (a->has(attr::permissions) && !S_ISREG(a->permissions)) {
        out.err(strprintf("download \"%s\": not a regular file", from_path.c_str()));
        return -1;
    }
    attrs create;
    create.flags = attr::permissions;
    create.permissions = a->has(attr::permissions) ? (a->permissions & 0777) : 0666;
    auto st = std::make_shared<crossload_state>();
    auto from_handle = from.open(from_path, fxf::read, attrs{}, "origin");
    if (!from_handle)
        return -1;
    auto to_handle = to.open(to_path, fxf::write | fxf::creat | fxf::trunc, create, "dest");
    if (!to_handle) {
        from.close(*from_handle);
        return -1;
    }
    st->from_handle = *from_handle;
    st->to_handle = *to_handle;
    st->chunk = std::max<std::uint32_t>(1, std::min(from.sess().read_chunk(), to.sess().write_chunk()));
    const std::size_t max_requests =
        o.num_requests != 0 ? o.num_requests : std::max<std::size_t>(1, o.in_flight_bytes / st->chunk);
    copy_data(from.sess(), to.sess(), st, max_requests, o.limit_bps);

    int status = 0;
    if (st->read_error != 0) {
        out.err(strprintf("read origin \"%s\": %s", from_path.c_str(), fx2txt(st->read_error)));
        status = -1;
    } else if (st->write_error != 0) {
        out.err(strprintf("write dest \"%s\": %s", to_path.c_str(), fx2txt(st->write_error)));
        status = -1;
    } else if (!from.sess().ok() || !to.sess().ok() || from.sess().interrupted()) {
        status = -1;
    }
    if (from.sess().ok() && from.close(*from_handle) != 0)
        status = -1;
    if (to.sess().ok()) {
        if (status == 0 && o.preserve) {
            const attrs kept = preserved_attrs(*a);
            if (kept.flags != 0 && to.fsetstat(*to_handle, kept) != 0)
                status = -1;
        }
        if (to.close(*to_handle) != 0)
            status = -1;
    }
    return status;
}

namespace {

int crossload_walk(remote_fs& from, remote_fs& to, const std::string& from_path, const std::string& to_path,
                   int depth, std::optional<attrs> dir_attrs, const crossload_options& o)
{
    const output_sink& out = from.out();
    if (depth >= max_crossload_depth) {
        out.err(strprintf("Maximum directory depth exceeded: %d levels", depth));
        return -1;
    }
    if (!dir_attrs) {
        dir_attrs = from.stat(from_path, true);
        if (!dir_attrs) {
            out.err(strprintf("stat remote \"%s\" failed", from_path.c_str()));
            return -1;
        }
    }
    if (!S_ISDIR(dir_attrs->permissions)) {
        out.err(strprintf("\"%s\" is not a directory", from_path.c_str()));
        return -1;
    }
    if (o.print)
        out.say(strprintf("Retrieving %s", from_path.c_str()));
    // Writable by us while its contents are copied; its own mode after.
    attrs made;
    made.flags = attr::permissions;
    const std::uint32_t dir_mode = dir_attrs->has(attr::permissions) ? dir_attrs->permissions : 0777;
    made.permissions = (dir_mode & 01777) | S_IRWXU;
    if (to.mkdir(to_path, made, false) != 0 && !to.is_dir(to_path)) {
        out.err(strprintf("remote mkdir \"%s\" failed", to_path.c_str()));
        return -1;
    }
    const auto entries = from.readdir(from_path, true);
    if (!entries) {
        out.err(strprintf("origin readdir \"%s\" failed", from_path.c_str()));
        return -1;
    }
    int ret = 0;
    for (const auto& e : *entries) {
        if (from.sess().interrupted() || !from.sess().ok() || !to.sess().ok())
            return -1;
        if (e.filename == "." || e.filename == "..")
            continue;
        const std::string new_from = path_append(from_path, e.filename), new_to = path_append(to_path, e.filename);
        std::optional<attrs> a = e.attributes;
        if (S_ISLNK(a->permissions)) {
            // scp follows links, as OpenSSH's scp asks of sftp_crossload_dir().
            a = from.stat(new_from, true);
            if (!a) {
                ret = -1;
                continue;
            }
        }
        if (S_ISDIR(a->permissions)) {
            if (crossload_walk(from, to, new_from, new_to, depth + 1, a, o) != 0)
                ret = -1;
        } else if (S_ISREG(a->permissions)) {
            if (crossload_file(from, to, new_from, new_to, a, o) != 0) {
                out.err(strprintf("Transfer of file %s to %s failed", new_from.c_str(), new_to.c_str()));
                ret = -1;
            }
        } else {
            out.inf(strprintf("download \"%s\": not a regular file", new_from.c_str()));
        }
    }
    // Its own mode once its contents are written (and, with -p, its times).
    attrs final_mode = o.preserve ? preserved_attrs(*dir_attrs) : attrs{};
    final_mode.flags |= attr::permissions;
    final_mode.permissions = dir_mode & (o.preserve ? 07777 : 01777);
    if (to.setstat(to_path, final_mode) != 0)
        ret = -1;
    return ret;
}

} // namespace

int crossload_dir(remote_fs& from, remote_fs& to, const std::string& from_path, const std::string& to_path,
                  const crossload_options& o)
{
    const auto canon = from.realpath(from_path);
    if (!canon) {
        from.out().err(strprintf("crossload \"%s\": path canonicalization failed", from_path.c_str()));
        return -1;
    }
    return crossload_walk(from, to, *canon, to_path, 0, std::nullopt, o);
}

} // namespace longhaul::sftp
