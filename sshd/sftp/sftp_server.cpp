// The server core: framing, the request table and its permission checks,
// handles, replies and the session's start and end. The operations
// themselves are in sftp_operations.cpp and sftp_extensions.cpp.
#include "sshd/sftp/sftp_server.hpp"

#include "common/sftp/sftp_framing.hpp"
#include "sshd/sftp/sftp_server_detail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace longhaul::sftp {

using detail::format;

std::span<const server::handler> server::standard_handlers()
{
    // OpenSSH's table, in its order (sftp-server -Q requests lists it so).
    // OPEN checks read-only mode itself: it depends on the flags.
    static constexpr handler table[] = {
        {"open", {}, fxp::open, false, &server::do_open},
        {"close", {}, fxp::close, false, &server::do_close},
        {"read", {}, fxp::read, false, &server::do_read},
        {"write", {}, fxp::write, true, &server::do_write},
        {"lstat", {}, fxp::lstat, false, &server::do_lstat},
        {"fstat", {}, fxp::fstat, false, &server::do_fstat},
        {"setstat", {}, fxp::setstat, true, &server::do_setstat},
        {"fsetstat", {}, fxp::fsetstat, true, &server::do_fsetstat},
        {"opendir", {}, fxp::opendir, false, &server::do_opendir},
        {"readdir", {}, fxp::readdir, false, &server::do_readdir},
        {"remove", {}, fxp::remove, true, &server::do_remove},
        {"mkdir", {}, fxp::mkdir, true, &server::do_mkdir},
        {"rmdir", {}, fxp::rmdir, true, &server::do_rmdir},
        {"realpath", {}, fxp::realpath, false, &server::do_realpath},
        {"stat", {}, fxp::stat, false, &server::do_stat},
        {"rename", {}, fxp::rename, true, &server::do_rename},
        {"readlink", {}, fxp::readlink, false, &server::do_readlink},
        {"symlink", {}, fxp::symlink, true, &server::do_symlink},
    };
    return table;
}

std::span<const server::handler> server::extended_handlers()
{
    static constexpr handler table[] = {
        {"posix-rename", ext::posix_rename, fxp::extended, true, &server::do_posix_rename},
        {"statvfs", ext::statvfs, fxp::extended, false, &server::do_statvfs},
        {"fstatvfs", ext::fstatvfs, fxp::extended, false, &server::do_fstatvfs},
        {"hardlink", ext::hardlink, fxp::extended, true, &server::do_hardlink},
        {"fsync", ext::fsync, fxp::extended, true, &server::do_fsync},
        {"lsetstat", ext::lsetstat, fxp::extended, true, &server::do_lsetstat},
        {"limits", ext::limits, fxp::extended, false, &server::do_limits},
        {"expand-path", ext::expand_path, fxp::extended, false, &server::do_expand_path},
        {"copy-data", ext::copy_data, fxp::extended, true, &server::do_copy_data},
        {"home-directory", ext::home_directory, fxp::extended, false, &server::do_home_directory},
        {"users-groups-by-id", ext::users_groups_by_id, fxp::extended, false, &server::do_users_groups_by_id},
        // Not OpenSSH's: after its table, so -Q lists OpenSSH's names first.
        {"check-file-handle", ext::check_file_handle, fxp::extended, false, &server::do_check_file_handle},
        {"check-file-name", ext::check_file_name, fxp::extended, false, &server::do_check_file_name},
        // Longhaul's (docs/PROTOCOL.md); also needs "open" to be permitted.
        {"open-named", ext::open_named, fxp::extended, false, &server::do_open_named},
    };
    return table;
}

const server::handler& server::open_handler()
{
    return standard_handlers()[0];
}

std::vector<std::string_view> server::request_names()
{
    std::vector<std::string_view> out;
    for (const auto& h : standard_handlers())
        out.push_back(h.name);
    for (const auto& h : extended_handlers())
        out.push_back(h.name);
    return out;
}

server::server(server_options options, filesystem& fs, name_service& names, log_sink log)
    : options_(std::move(options)), fs_(fs), names_(names), log_(std::move(log)),
      // Room for one whole packet of the largest size plus a read's worth,
      // so a partial packet always fits behind complete ones.
      in_(std::size_t{options_.max_packet_length} + 4 + detail::read_chunk)
{
}

server::~server()
{
    for (auto& h : handles_) {
        if (h.dir != nullptr)
            ::closedir(h.dir);
        else if (h.fd >= 0)
            ::close(h.fd);
    }
}

void server::log(log_level l, std::string_view m)
{
    if (logging(l) && log_)
        log_(l, m);
}

std::time_t server::now() const { return options_.clock ? options_.clock() : std::time(nullptr); }

void server::start()
{
    log(log_level::info, format("session opened for local user %s from [%s]", options_.user.c_str(),
                                options_.client_address.c_str()));
    if (!options_.start_directory.empty()) {
        if (int e = fs_.chdir(options_.start_directory))
            log(log_level::error, format("chdir to \"%s\" failed: %s", printable(options_.start_directory).c_str(),
                                         std::strerror(e)));
    }
}

// --- input, framing, dispatch ----------------------------------------------

std::size_t server::output_high_water() const noexcept
{
    // Stop taking requests while about two largest replies are waiting.
    return std::max<std::size_t>(detail::min_output_high_water, 2 * std::size_t{options_.max_packet_length});
}

mutable_byte_span server::input_space()
{
    if (finished_ || eof_ || out_.size() >= output_high_water())
        return {};
    const std::size_t room = in_.max_size() - in_.size();
    if (room == 0)
        return {};
    return in_.prepare(std::min(room, detail::read_chunk));
}

void server::commit_input(std::size_t n) { in_.commit(n); }

std::size_t server::feed(byte_span data)
{
    std::size_t taken = 0;
    while (taken < data.size()) {
        auto space = input_space();
        if (space.empty())
            break;
        const std::size_t n = std::min(space.size(), data.size() - taken);
        std::memcpy(space.data(), data.data() + taken, n);
        commit_input(n);
        taken += n;
        process();
    }
    process();
    return taken;
}

void server::input_eof()
{
    eof_ = true;
    process();
}

void server::process()
{
    while (!finished_ && out_.size() < output_high_water()) {
        if (skip_ > 0) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, in_.size()));
            in_.consume(n);
            skip_ -= n;
            if (skip_ > 0) {
                if (eof_)
                    finish(0);
                return;
            }
            continue;
        }
        const frame f = read_frame(in_.data(), options_.max_packet_length);
        if (f.status == errc::incomplete) {
            if (eof_) {
                if (!in_.empty())
                    log(log_level::debug1, format("discarding %zu bytes of an incomplete packet at EOF", in_.size()));
                finish(0);
            }
            return;
        }
        if (f.status == errc::too_large) {
            if (!handle_oversize(f.length))
                return;
            continue;
        }
        if (f.status == errc::malformed) {
            // A zero length: no type byte, nothing to answer.
            log(log_level::error, format("bad message from %s local user %s: empty packet",
                                         options_.client_address.c_str(), options_.user.c_str()));
            in_.consume(4);
            continue;
        }
        handle_packet(f.packet);
        in_.consume(f.size());
    }
}

bool server::handle_oversize(std::uint32_t length)
{
    // OpenSSH logs this line and exits. The length is known, so the packet
    // can be answered (when its id has arrived) and skipped as it streams
    // in, without ever holding it.
    const byte_span head = in_.data();
    if (head.size() < 9 && !eof_)
        return false;
    log(log_level::error,
        format("bad message from %s local user %s", options_.client_address.c_str(), options_.user.c_str()));
    log(log_level::debug1, format("packet length %u exceeds the maximum %u", length, options_.max_packet_length));
    if (head.size() >= 9 && init_done_) {
        if (auto id = peek_request_id(head.subspan(4)))
            send_status(*id, status_code::bad_message);
    }
    skip_ = std::uint64_t{4} + length;
    return true;
}

void server::handle_packet(byte_span packet)
{
    const std::uint8_t type = packet[0];
    const byte_span payload = packet.subspan(1);
    if (type == fxp::init) {
        do_init(payload);
        return;
    }
    if (!init_done_) {
        // OpenSSH's fatal(): the session ends.
        if (type == fxp::extended)
            log(log_level::error, "Received extended request before init");
        else
            log(log_level::error, format("Received %u request before init", type));
        finish(255);
        return;
    }
    const auto id = peek_request_id(packet);
    if (!id) {
        log(log_level::error, format("process: parse ID: %s", std::string(to_string(errc::incomplete)).c_str()));
        return;
    }
    if (type == fxp::extended) {
        wire_reader r(payload);
        r.u32();
        const auto name = r.text(payload.size());
        if (!r.ok()) {
            bad_message(*id, "process_extended", r.error());
            return;
        }
        for (const auto& h : extended_handlers()) {
            if (h.ext_name == name) {
                dispatch(h, *id, payload);
                return;
            }
        }
        log(log_level::error, format("Unknown extended request \"%.100s\"", printable(name).c_str()));
        send_status(*id, status_code::op_unsupported);
        return;
    }
    for (const auto& h : standard_handlers()) {
        if (h.type == type) {
            dispatch(h, *id, payload);
            return;
        }
    }
    // OpenSSH logs this and sends nothing, which leaves the client waiting
    // forever; draft-02 wants OP_UNSUPPORTED.
    log(log_level::error, format("Unknown message %u", type));
    send_status(*id, status_code::op_unsupported);
}

void server::dispatch(const handler& h, std::uint32_t id, byte_span payload)
{
    if (!permitted(h)) {
        send_status(id, status_code::permission_denied);
        return;
    }
    (this->*h.run)(id, payload);
}

server::verdict server::judge(const handler& h) const noexcept
{
    const auto listed = [&h](const std::optional<std::vector<std::string>>& list) {
        return list && std::find(list->begin(), list->end(), h.name) != list->end();
    };
    if (options_.read_only && h.does_write)
        return verdict::read_only;
    if (listed(options_.denied))
        return verdict::denylisted;
    if (listed(options_.allowed))
        return verdict::allowlisted;
    return options_.allowed ? verdict::not_allowlisted : verdict::permitted;
}

bool server::permitted(const handler& h)
{
    const std::string name(h.name);
    switch (judge(h)) {
    case verdict::read_only:
        log(log_level::verbose, format("Refusing %s request in read-only mode", name.c_str()));
        return false;
    case verdict::denylisted:
        log(log_level::verbose, format("Refusing denylisted %s request", name.c_str()));
        return false;
    case verdict::allowlisted:
        log(log_level::debug2, format("Permitting allowlisted %s request", name.c_str()));
        return true;
    case verdict::not_allowlisted:
        log(log_level::verbose, format("Refusing non-allowlisted %s request", name.c_str()));
        return false;
    case verdict::permitted:
        break;
    }
    return true;
}

bool server::allowed(const handler& h) const noexcept
{
    const verdict v = judge(h);
    return v == verdict::allowlisted || v == verdict::permitted;
}

void server::bad_message(std::uint32_t id, std::string_view where, errc e)
{
    log(log_level::error, format("%.*s: parse: %s", static_cast<int>(where.size()), where.data(),
                                 std::string(to_string(e)).c_str()));
    send_status(id, status_code::bad_message);
}

void server::finish(int status)
{
    if (finished_)
        return;
    if (status == 0)
        log(log_level::debug1, "read eof");
    for (std::size_t i = 0; i < handles_.size(); ++i) {
        if (handles_[i].use != handle_entry::kind::unused) {
            log_close(static_cast<int>(i), "forced");
            close_handle(static_cast<int>(i));
        }
    }
    log(log_level::info, format("session closed for local user %s from [%s]", options_.user.c_str(),
                                options_.client_address.c_str()));
    finished_ = true;
    exit_status_ = status;
}

// --- replies -----------------------------------------------------------------

void server::send_status(std::uint32_t id, status_code code, std::string_view message)
{
    const auto c = static_cast<std::uint32_t>(code);
    log(log_level::debug3, format("request %u: sent status %u", id, c));
    if (options_.level > log_level::verbose || (code != status_code::ok && code != status_code::eof))
        log(log_level::info, format("sent status %s", std::string(status_message(code)).c_str()));
    if (client_version_ < 3) {
        // Versions 0-2 have no message or language tag (OpenSSH sends them
        // only to version 3 clients).
        scratch_.clear();
        wire_writer w(scratch_);
        w.u32(9).u8(fxp::status).u32(id).u32(c);
        out_.append(scratch_);
        return;
    }
    send(status_reply{.id = id, .code = c, .message = std::string(message.empty() ? status_message(code) : message)});
}

void server::send_handle(std::uint32_t id, int index)
{
    log(log_level::debug1, format("request %u: sent handle handle %d", id, index));
    const auto& e = handles_[static_cast<std::size_t>(index)];
    handle_reply r{.id = id, .handle = e.named}; // the client's name, if it chose one (open-named)
    if (r.handle.empty()) {
        r.handle.resize(8);
        store_u32(r.handle.data(), static_cast<std::uint32_t>(index));
        store_u32(r.handle.data() + 4, e.generation);
    }
    send(r);
}

void server::send_attrs(std::uint32_t id, const attrs& a)
{
    log(log_level::debug1, format("request %u: sent attrib have 0x%x", id, a.flags));
    send(attrs_reply{.id = id, .attributes = a});
}

void server::send_names(std::uint32_t id, std::vector<name_entry> entries)
{
    log(log_level::debug1, format("request %u: sent names count %zu", id, entries.size()));
    send(name_reply{.id = id, .entries = std::move(entries)});
}

void server::send_statvfs(std::uint32_t id, const struct statvfs& st)
{
    statvfs_reply r{.id = id};
    r.bsize = st.f_bsize;
    r.frsize = st.f_frsize;
    r.blocks = st.f_blocks;
    r.bfree = st.f_bfree;
    r.bavail = st.f_bavail;
    r.files = st.f_files;
    r.ffree = st.f_ffree;
    r.favail = st.f_favail;
    r.fsid = st.f_fsid;
    r.flag = ((st.f_flag & ST_RDONLY) ? statvfs_rdonly : 0) | ((st.f_flag & ST_NOSUID) ? statvfs_nosuid : 0);
    r.namemax = st.f_namemax;
    send(r);
}

// --- handles -----------------------------------------------------------------

int server::new_handle(handle_entry::kind kind, std::string name, int fd, DIR* dir, int flags)
{
    int index;
    if (!free_handles_.empty()) {
        index = free_handles_.back();
        free_handles_.pop_back();
    } else {
        index = static_cast<int>(handles_.size());
        handles_.emplace_back();
    }
    auto& h = handles_[static_cast<std::size_t>(index)];
    h.use = kind;
    h.fd = fd;
    h.dir = dir;
    h.flags = flags;
    h.name = std::move(name);
    h.bytes_read = h.bytes_written = 0;
    // A new generation per use: a client's stale handle never reaches the
    // file that took its slot.
    ++h.generation;
    ++handles_in_use_;
    if (kind == handle_entry::kind::directory)
        ++directories_in_use_;
    return index;
}

int server::find_handle(const bytes& h) const noexcept
{
    if (h.size() != 8) {
        // Only a client's own name can have another length (do_open_named).
        if (h.empty() || h.size() > max_named_handle_length)
            return -1;
        const auto it = named_handles_.find(h);
        return it == named_handles_.end() ? -1 : it->second;
    }
    const std::uint32_t index = load_u32(h.data());
    const std::uint32_t generation = load_u32(h.data() + 4);
    if (index >= handles_.size())
        return -1;
    const auto& e = handles_[index];
    if (e.use == handle_entry::kind::unused || e.generation != generation)
        return -1;
    return static_cast<int>(index);
}

int server::handle_fd(int index) const noexcept
{
    if (index < 0 || handles_[static_cast<std::size_t>(index)].use != handle_entry::kind::file)
        return -1;
    return handles_[static_cast<std::size_t>(index)].fd;
}

const char* server::handle_name(int index) const noexcept
{
    return index < 0 ? "(null)" : handles_[static_cast<std::size_t>(index)].name.c_str();
}

int server::close_handle(int index)
{
    if (index < 0)
        return ENOENT;
    auto& h = handles_[static_cast<std::size_t>(index)];
    int rc = 0;
    if (h.use == handle_entry::kind::directory) {
        rc = ::closedir(h.dir) == 0 ? 0 : errno;
        --directories_in_use_;
    } else {
        rc = ::close(h.fd) == 0 ? 0 : errno;
    }
    h.use = handle_entry::kind::unused;
    h.fd = -1;
    h.dir = nullptr;
    h.name.clear();
    h.name.shrink_to_fit();
    if (!h.named.empty()) {
        named_handles_.erase(h.named);
        h.named.clear();
    }
    --handles_in_use_;
    free_handles_.push_back(index);
    return rc;
}

void server::log_close(int index, std::string_view prefix)
{
    if (!logging(log_level::info))
        return;
    const std::string p = prefix.empty() ? std::string() : std::string(prefix) + " ";
    const std::string name = printable(handle_name(index));
    if (index >= 0 && handles_[static_cast<std::size_t>(index)].use == handle_entry::kind::file) {
        const auto& h = handles_[static_cast<std::size_t>(index)];
        log(log_level::info, format("%sclose \"%s\" bytes read %llu written %llu", p.c_str(), name.c_str(),
                                    static_cast<unsigned long long>(h.bytes_read),
                                    static_cast<unsigned long long>(h.bytes_written)));
    } else {
        log(log_level::info, format("%sclosedir \"%s\"", p.c_str(), name.c_str()));
    }
}

// --- paths ---------------------------------------------------------------------

int server::realpath(const std::string& path, std::string& resolved)
{
    // OpenSSH's sftp_realpath(): ".", ".." and symlinks removed component by
    // component; a missing last component is not an error (the client may be
    // about to create it).
    if (path.empty())
        return ENOENT;
    std::string left;
    if (path[0] == '/') {
        resolved = "/";
        left = path.substr(1);
    } else {
        if (int e = fs_.getcwd(resolved))
            return e;
        left = path;
    }
    unsigned links = 0;
    while (!left.empty()) {
        if (left.size() >= PATH_MAX || resolved.size() >= PATH_MAX)
            return ENAMETOOLONG;
        const auto slash = left.find('/');
        const bool last = slash == std::string::npos;
        const std::string token = left.substr(0, slash);
        left = last ? std::string() : left.substr(slash + 1);
        if (resolved.back() != '/')
            resolved += '/';
        if (token.empty() || token == ".")
            continue;
        if (token == "..") {
            if (resolved.size() > 1) {
                resolved.pop_back();
                resolved.erase(resolved.rfind('/') + 1);
            }
            continue;
        }
        resolved += token;
        if (resolved.size() >= PATH_MAX)
            return ENAMETOOLONG;
        struct stat st {};
        if (int e = fs_.stat(resolved, false, st)) {
            if (e == ENOENT && last)
                return 0;
            return e;
        }
        if (S_ISLNK(st.st_mode)) {
            if (links++ > detail::max_symlinks)
                return ELOOP;
            std::string target;
            if (int e = fs_.readlink(resolved, target))
                return e;
            if (!target.empty() && target[0] == '/') {
                resolved = "/";
            } else if (resolved.size() > 1) {
                resolved.erase(resolved.rfind('/') + 1);
            }
            if (!last) {
                if (target.empty() || target.back() != '/')
                    target += '/';
                target += left;
            }
            left = std::move(target);
        }
    }
    if (resolved.size() > 1 && resolved.back() == '/')
        resolved.pop_back();
    return 0;
}

} // namespace longhaul::sftp
