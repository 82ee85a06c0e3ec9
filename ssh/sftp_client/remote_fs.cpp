#include "ssh/sftp_client/remote_fs.hpp"

#include "ssh/sftp_client/text.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <utility>

namespace longhaul::sftp {

std::string path_append(const std::string& a, const std::string& b)
{
    if (a.empty())
        return b;
    if (a.back() == '/')
        return a + b;
    return a + "/" + b;
}

std::string path_basename(const std::string& p)
{
    if (p.empty())
        return ".";
    std::size_t end = p.size();
    while (end > 1 && p[end - 1] == '/')
        --end;
    const std::string trimmed = p.substr(0, end);
    if (trimmed == "/")
        return "/";
    const auto slash = trimmed.rfind('/');
    return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

int remote_fs::expect_status(const reply_copy& r) const noexcept
{
    if (const auto* s = r.status())
        return int(s->code);
    return int(status_code::bad_message);
}

std::optional<attrs> remote_fs::decode_stat(const reply_copy& r, bool quiet)
{
    if (const auto* a = r.get<attrs_reply>())
        return a->attributes;
    const std::uint32_t code = r.status() ? r.status()->code : std::uint32_t(status_code::bad_message);
    if (quiet)
        out_.dbg(1, strprintf("stat remote: %s", fx2txt(code)));
    else
        out_.err(strprintf("stat remote: %s", fx2txt(code)));
    return std::nullopt;
}

std::optional<attrs> remote_fs::stat(const std::string& path, bool quiet)
{
    if (auto early = take_prefetched(fxp::stat, path))
        return decode_stat(*early, quiet);
    return decode_stat(s_.call(stat_request{.id = 0, .path = path}), quiet);
}

template <class Request>
void remote_fs::prefetch(const std::string& path)
{
    prefetched_.push_back(prefetched_answer{
        .type = Request::type,
        .path = path,
        .answer = s_.send(Request{.id = 0, .path = path}),
    });
    // Lookups sent one behind the other are answered in that order and
    // change nothing: each answer still describes the path as it was.
    prefetched_at_ = s_.core().requests_sent();
}

void remote_fs::rebase_prefetched(const std::string& dir)
{
    const auto relative = [](const std::string& p) { return !p.empty() && p[0] != '/'; };
    for (auto& p : prefetched_)
        if (p.type == fxp::stat && relative(p.path))
            p.path = path_append(dir, p.path);
    // The OPEN went out with the same relative path: the same file.
    if (prefetched_open_ && relative(prefetched_open_->request.path))
        prefetched_open_->request.path = path_append(dir, prefetched_open_->request.path);
}

void remote_fs::prefetch_stat(const std::string& path)
{
    prefetch<stat_request>(path);
}

void remote_fs::prefetch_realpath(const std::string& path)
{
    prefetch<realpath_request>(path);
}

void remote_fs::prefetch_open(const open_request& r)
{
    drop_prefetched_open();
    auto p = std::make_shared<prefetched_open>();
    p->request = r;
    session& s = s_;
    s_.core().request(r, [p, &s](const reply& answer) {
        if (p->waiter) {
            auto w = std::move(p->waiter);
            w(answer);
            return;
        }
        if (p->unwanted) {
            if (const auto* h = std::get_if<handle_reply>(&answer))
                s.core().request(close_request{.id = 0, .handle = h->handle}, [](const reply&) {});
            return;
        }
        session::copy_reply(answer, p->answer.emplace());
    });
    prefetched_open_ = std::move(p);
    // The stat sent just before is answered first, so it still describes
    // the path as the program found it.
    prefetched_at_ = s_.core().requests_sent();
}

void remote_fs::open_async(open_request r, std::function<void(const reply&)> done)
{
    if (auto p = std::exchange(prefetched_open_, nullptr)) {
        if (p->request == r) {
            if (p->answer && p->answer->value)
                done(*p->answer->value);
            else
                p->waiter = std::move(done);
            return;
        }
        discard(*p);
    }
    s_.core().request(std::move(r), std::move(done));
}

void remote_fs::drop_prefetched_open()
{
    if (auto p = std::exchange(prefetched_open_, nullptr))
        discard(*p);
}

void remote_fs::discard(prefetched_open& p)
{
    if (!p.answer) {
        p.unwanted = true;
        return;
    }
    if (const auto* h = p.answer->get<handle_reply>())
        s_.core().request(close_request{.id = 0, .handle = h->handle}, [](const reply&) {});
}

std::optional<reply_copy> remote_fs::take_prefetched(std::uint8_t type, const std::string& path)
{
    // Once anything else went out, none is fresh.
    if (s_.core().requests_sent() != prefetched_at_)
        prefetched_.clear();
    const auto it = std::find_if(prefetched_.begin(), prefetched_.end(),
                                 [&](const prefetched_answer& a) { return a.type == type && a.path == path; });
    if (it == prefetched_.end())
        return std::nullopt;
    auto p = std::move(it->answer);
    prefetched_.erase(it);
    s_.run_until([&] { return p->has_value(); });
    // Unanswered: the session failed, and the caller's own request is
    // answered "connection lost" at once.
    return std::move(*p);
}

std::optional<attrs> remote_fs::lstat(const std::string& path, bool quiet)
{
    return decode_stat(s_.call(lstat_request{.id = 0, .path = path}), quiet);
}

std::optional<attrs> remote_fs::fstat(const bytes& handle, bool quiet)
{
    return decode_stat(s_.call(fstat_request{.id = 0, .handle = handle}), quiet);
}

namespace {

std::optional<std::string> one_name(const reply_copy& r, const output_sink& out, const char* what,
                                    const std::string& path)
{
    if (const auto* n = r.get<name_reply>()) {
        if (n->entries.size() != 1) {
            out.err(strprintf("Got multiple names (%zu) from %s", n->entries.size(), what));
            return std::nullopt;
        }
        return n->entries[0].filename;
    }
    if (const auto* s = r.status()) {
        out.err(strprintf("%s %s: %s", what, path.c_str(), s->message.empty() ? fx2txt(s->code) : s->message.c_str()));
        return std::nullopt;
    }
    out.err(strprintf("Expected SSH2_FXP_NAME(%u) packet, got %u", unsigned(fxp::name), 0u));
    return std::nullopt;
}

} // namespace

std::optional<std::string> remote_fs::realpath(const std::string& path)
{
    if (auto early = take_prefetched(fxp::realpath, path))
        return one_name(*early, out_, "realpath", path);
    return one_name(s_.call(realpath_request{.id = 0, .path = path}), out_, "realpath", path);
}

bool remote_fs::can_expand_path() const noexcept
{
    return s_.core().has_extension(ext::expand_path, "1");
}

std::optional<std::string> remote_fs::expand_path(const std::string& path)
{
    if (!can_expand_path())
        return realpath(path);
    return one_name(s_.call(expand_path_request{.id = 0, .path = path}), out_, "expand", path);
}

std::optional<std::string> remote_fs::readlink(const std::string& path)
{
    return one_name(s_.call(readlink_request{.id = 0, .path = path}), out_, "readlink", path);
}

int remote_fs::remove(const std::string& path)
{
    const int st = expect_status(s_.call(remove_request{.id = 0, .path = path}));
    if (st != 0)
        out_.err(strprintf("remote delete %s: %s", path.c_str(), fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::mkdir(const std::string& path, const attrs& a, bool print_flag)
{
    const int st = expect_status(s_.call(mkdir_request{.id = 0, .path = path, .attributes = a}));
    if (st != 0 && print_flag)
        out_.err(strprintf("remote mkdir \"%s\": %s", path.c_str(), fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::rmdir(const std::string& path)
{
    const int st = expect_status(s_.call(rmdir_request{.id = 0, .path = path}));
    if (st != 0)
        out_.err(strprintf("remote rmdir \"%s\": %s", path.c_str(), fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::rename(const std::string& from, const std::string& to, bool force_legacy)
{
    const bool posix = !force_legacy && s_.core().has_extension(ext::posix_rename, "1");
    const int st = posix ? expect_status(s_.call(posix_rename_request{.id = 0, .old_path = from, .new_path = to}))
                         : expect_status(s_.call(rename_request{.id = 0, .old_path = from, .new_path = to}));
    if (st != 0)
        out_.err(strprintf("remote rename \"%s\" to \"%s\": %s", from.c_str(), to.c_str(), fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::symlink(const std::string& target, const std::string& link_path)
{
    const int st = expect_status(s_.call(symlink_request{.id = 0, .target_path = target, .link_path = link_path}));
    if (st != 0)
        out_.err(strprintf("remote symlink file \"%s\" to \"%s\": %s", target.c_str(), link_path.c_str(),
                           fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::hardlink(const std::string& from, const std::string& to)
{
    if (!s_.core().has_extension(ext::hardlink, "1")) {
        out_.err("Server does not support hardlink@openssh.com extension");
        return -1;
    }
    const int st = expect_status(s_.call(hardlink_request{.id = 0, .old_path = from, .new_path = to}));
    if (st != 0)
        out_.err(strprintf("remote link \"%s\" to \"%s\": %s", from.c_str(), to.c_str(), fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::setstat(const std::string& path, const attrs& a)
{
    const int st = expect_status(s_.call(setstat_request{.id = 0, .path = path, .attributes = a}));
    if (st != 0)
        out_.err(strprintf("remote setstat \"%s\": %s", path.c_str(), fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::lsetstat(const std::string& path, const attrs& a)
{
    if (!s_.core().has_extension(ext::lsetstat, "1"))
        return setstat(path, a);
    const int st = expect_status(s_.call(lsetstat_request{.id = 0, .path = path, .attributes = a}));
    if (st != 0)
        out_.err(strprintf("remote lsetstat \"%s\": %s", path.c_str(), fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::fsetstat(const bytes& handle, const attrs& a)
{
    const int st = expect_status(s_.call(fsetstat_request{.id = 0, .handle = handle, .attributes = a}));
    if (st != 0)
        out_.err(strprintf("remote fsetstat: %s", fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::fsync(const bytes& handle)
{
    if (!s_.core().has_extension(ext::fsync, "1")) {
        out_.err("Server does not support fsync@openssh.com extension");
        return -1;
    }
    const int st = expect_status(s_.call(fsync_request{.id = 0, .handle = handle}));
    if (st != 0)
        out_.err(strprintf("remote fsync: %s", fx2txt(st)));
    return st == 0 ? 0 : -1;
}

std::optional<bytes> remote_fs::open(const std::string& path, std::uint32_t pflags, const attrs& a, const char* tag)
{
    auto r = s_.call(open_request{.id = 0, .path = path, .pflags = pflags, .attributes = a});
    if (const auto* h = r.get<handle_reply>())
        return h->handle;
    const int st = expect_status(r);
    out_.err(strprintf("%s open \"%s\": %s", tag, path.c_str(), fx2txt(st)));
    return std::nullopt;
}

int remote_fs::close(const bytes& handle)
{
    const int st = expect_status(s_.call(close_request{.id = 0, .handle = handle}));
    if (st != 0)
        out_.err(strprintf("close remote: %s", fx2txt(st)));
    return st == 0 ? 0 : -1;
}

int remote_fs::copy(const std::string& from, const std::string& to)
{
    if (!s_.core().has_extension(ext::copy_data, "1")) {
        out_.err("Server does not support copy-data extension");
        return -1;
    }
    auto old_attr = stat(from, false);
    if (!old_attr)
        return -1;
    attrs a;
    if (old_attr->has(attr::permissions)) {
        a = *old_attr;
        a.permissions &= 0777;
    } else {
        a.flags = attr::permissions;
        a.permissions = 0666;
    }
    // Only the mode travels: sizes, owners and times are the new file's own.
    a.flags &= ~(attr::size | attr::uidgid | attr::acmodtime | attr::extended);
    a.extended.clear();
    auto rh = s_.call(open_request{.id = 0, .path = from, .pflags = fxf::read, .attributes = {}});
    const auto* h1 = rh.get<handle_reply>();
    if (h1 == nullptr) {
        out_.err(strprintf("remote open(\"%s\"): %s", from.c_str(), fx2txt(expect_status(rh))));
        return -1;
    }
    const bytes from_handle = h1->handle;
    auto wh = s_.call(
        open_request{.id = 0, .path = to, .pflags = fxf::write | fxf::creat | fxf::trunc, .attributes = a});
    const auto* h2 = wh.get<handle_reply>();
    if (h2 == nullptr) {
        out_.err(strprintf("remote open(\"%s\"): %s", to.c_str(), fx2txt(expect_status(wh))));
        close(from_handle);
        return -1;
    }
    const bytes to_handle = h2->handle;
    const int st = expect_status(s_.call(copy_data_request{.id = 0,
                                                           .read_handle = from_handle,
                                                           .read_offset = 0,
                                                           .read_length = 0,
                                                           .write_handle = to_handle,
                                                           .write_offset = 0}));
    if (st != 0)
        out_.err(strprintf("Couldn't copy file \"%s\" to \"%s\": %s", from.c_str(), to.c_str(), fx2txt(st)));
    close(from_handle);
    close(to_handle);
    return st == 0 ? 0 : -1;
}

std::optional<std::vector<name_entry>> remote_fs::readdir(const std::string& path, bool quiet)
{
    auto r = s_.call(opendir_request{.id = 0, .path = path});
    const auto* h = r.get<handle_reply>();
    if (h == nullptr) {
        if (!quiet)
            out_.err(strprintf("remote readdir(\"%s\"): %s", path.c_str(), fx2txt(expect_status(r))));
        return std::nullopt;
    }
    const bytes handle = h->handle;
    std::vector<name_entry> entries;
    for (;;) {
        auto d = s_.call(readdir_request{.id = 0, .handle = handle});
        if (const auto* n = d.get<name_reply>()) {
            for (const auto& e : n->entries) {
                // A server must not name entries outside the directory.
                if (e.filename.find('/') != std::string::npos) {
                    out_.err(strprintf("Server sent suspect path \"%s\" during readdir of \"%s\"",
                                       e.filename.c_str(), path.c_str()));
                    continue;
                }
                entries.push_back(e);
            }
            continue;
        }
        const int st = expect_status(d);
        if (st == int(status_code::eof))
            break;
        out_.err(strprintf("Couldn't read directory: %s", fx2txt(st)));
        close(handle);
        return std::nullopt;
    }
    close(handle);
    return entries;
}

std::optional<statvfs_reply> remote_fs::statvfs(const std::string& path, bool quiet)
{
    if (!s_.core().has_extension(ext::statvfs, "2")) {
        out_.err("Server does not support statvfs@openssh.com extension");
        return std::nullopt;
    }
    auto r = s_.call(statvfs_request{.id = 0, .path = path});
    if (const auto* e = r.get<extended_reply>()) {
        bytes payload;
        wire_writer w(payload);
        w.u32(e->id).raw(e->data);
        if (auto v = statvfs_reply::decode(payload))
            return *v;
        out_.err("Couldn't decode statvfs reply");
        return std::nullopt;
    }
    if (!quiet)
        out_.err(strprintf("remote statvfs: %s", fx2txt(expect_status(r))));
    return std::nullopt;
}

bool remote_fs::is_dir(const std::string& path)
{
    auto a = stat(path, true);
    if (!a || !a->has(attr::permissions))
        return false;
    return S_ISDIR(a->permissions);
}

bool remote_fs::can_get_users_groups() const noexcept
{
    return s_.core().has_extension(ext::users_groups_by_id, "1");
}

void remote_fs::prefetch_names(const std::vector<std::uint32_t>& uids, const std::vector<std::uint32_t>& gids)
{
    if (!can_get_users_groups())
        return;
    std::set<std::uint32_t> u, g;
    for (auto id : uids)
        if (!users_.count(id))
            u.insert(id);
    for (auto id : gids)
        if (!groups_.count(id))
            g.insert(id);
    if (u.empty() && g.empty())
        return;
    users_groups_by_id_request req;
    req.uids.ids.assign(u.begin(), u.end());
    req.gids.ids.assign(g.begin(), g.end());
    auto r = s_.call(req);
    const auto* e = r.get<extended_reply>();
    if (e == nullptr)
        return;
    bytes payload;
    wire_writer w(payload);
    w.u32(e->id).raw(e->data);
    auto v = users_groups_by_id_reply::decode(payload);
    if (!v || v->users.names.size() != req.uids.ids.size() || v->groups.names.size() != req.gids.ids.size())
        return;
    for (std::size_t i = 0; i < req.uids.ids.size(); ++i)
        users_[req.uids.ids[i]] = v->users.names[i];
    for (std::size_t i = 0; i < req.gids.ids.size(); ++i)
        groups_[req.gids.ids[i]] = v->groups.names[i];
}

const std::string* remote_fs::user_name(std::uint32_t uid) const
{
    auto it = users_.find(uid);
    return it == users_.end() || it->second.empty() ? nullptr : &it->second;
}

const std::string* remote_fs::group_name(std::uint32_t gid) const
{
    auto it = groups_.find(gid);
    return it == groups_.end() || it->second.empty() ? nullptr : &it->second;
}

} // namespace longhaul::sftp
