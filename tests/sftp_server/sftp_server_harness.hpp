// Drives the SFTP server core in memory: requests encoded with the codec
// go in as bytes, replies come out decoded, log lines are captured. The
// file system is a fresh temporary directory seen through rooted_filesystem,
// so "/" in a request is that directory and nothing a test sends can reach
// outside it.
#pragma once

#include "common/sftp/sftp_framing.hpp"
#include "common/sftp/sftp_replies.hpp"
#include "common/sftp/sftp_requests.hpp"
#include "sshd/sftp/rooted_fs.hpp"
#include "sshd/sftp/sftp_server.hpp"
#include "tests/file_text.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace longhaul::test {

class sftp_temp_dir {
public:
    sftp_temp_dir()
    {
        char tmpl[] = "/tmp/longhaul-sftp-test-XXXXXX";
        const char* p = ::mkdtemp(tmpl);
        REQUIRE(p != nullptr);
        path_ = p;
    }
    ~sftp_temp_dir()
    {
        // Make test-made modes removable; never through a symlink (a test
        // may leave one pointing anywhere).
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
             it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
            if (!it->is_symlink(ec))
                ::chmod(it->path().c_str(), 0700);
        ::chmod(path_.c_str(), 0700);
        std::filesystem::remove_all(path_, ec);
    }
    sftp_temp_dir(const sftp_temp_dir&) = delete;
    sftp_temp_dir& operator=(const sftp_temp_dir&) = delete;
    const std::string& path() const { return path_; }
    // The real path of a path inside (as the server sees it, "/"-rooted).
    std::string real(const std::string& inside) const { return path_ + inside; }
    void write(const std::string& inside, const std::string& text) const
    {
        std::ofstream(real(inside), std::ios::binary | std::ios::trunc) << text;
    }
    std::string read(const std::string& inside) const
    {
        return read_whole_file(real(inside));
    }

private:
    std::string path_;
};

// Names without NSS: uid 0 is root, 1000 alice, gid 100 staff; homes below.
class fake_names final : public sftp::name_service {
public:
    std::optional<std::string> user_name(uid_t uid) override
    {
        if (uid == 0)
            return "root";
        if (uid == 1000)
            return "alice";
        return std::nullopt;
    }
    std::optional<std::string> group_name(gid_t gid) override
    {
        if (gid == 0)
            return "root";
        if (gid == 100)
            return "staff";
        return std::nullopt;
    }
    std::optional<std::string> home_directory(const std::string& user) override
    {
        if (user == "alice")
            return "/home/alice";
        return std::nullopt;
    }
};

struct sftp_harness {
    sftp_temp_dir dir;
    std::unique_ptr<sftp::rooted_filesystem> fs;
    fake_names names;
    std::vector<std::pair<log_level, std::string>> logs;
    std::unique_ptr<sftp::server> srv;
    bytes out; // output not yet decoded
    std::uint32_t next_id = 100;

    explicit sftp_harness(sftp::server_options o = {}, bool init = true)
    {
        int error = 0;
        fs = sftp::rooted_filesystem::open_root(dir.path(), error);
        REQUIRE(fs);
        o.level = log_level::debug3;
        o.user = "tester";
        o.client_address = "192.0.2.1";
        o.home = "/";
        if (!o.clock)
            o.clock = [] { return std::time_t{1700000000}; };
        srv = std::make_unique<sftp::server>(std::move(o), *fs, names, [this](log_level l, std::string_view m) {
            logs.emplace_back(l, std::string(m));
        });
        srv->start();
        if (init) {
            auto r = exchange(sftp::init_request{}.encode());
            REQUIRE(r.size() == 1);
            REQUIRE(std::holds_alternative<sftp::version_reply>(r[0]));
        }
    }

    // Feeds bytes (all of them, draining output as needed) and returns the
    // replies that came out.
    std::vector<sftp::reply> exchange(byte_span in)
    {
        std::size_t done = 0;
        while (done < in.size()) {
            const std::size_t n = srv->feed(in.subspan(done));
            done += n;
            drain();
            if (n == 0 && srv->output().empty() && (srv->finished() || srv->input_space().empty()))
                break;
        }
        // Whatever is still queued in the core once its output drains.
        for (;;) {
            srv->process();
            if (srv->output().empty())
                break;
            drain();
        }
        return decode_output();
    }
    void drain()
    {
        auto o = srv->output();
        out.insert(out.end(), o.begin(), o.end());
        srv->consume_output(o.size());
    }
    std::vector<sftp::reply> decode_output()
    {
        std::vector<sftp::reply> replies;
        std::size_t pos = 0;
        for (;;) {
            const auto f = sftp::read_frame(byte_span(out).subspan(pos), 16 * 1024 * 1024);
            if (f.status != errc::ok)
                break;
            auto r = sftp::decode_reply(f.packet);
            REQUIRE(r);
            replies.push_back(std::move(*r));
            pos += f.size();
        }
        // Replies keep spans into `out` (DATA): keep the bytes, drop only
        // what an earlier call already decoded.
        decoded_ = pos;
        return replies;
    }

    // One request, exactly one reply.
    template <class M>
    sftp::reply call(M m)
    {
        out.clear();
        if constexpr (requires { m.id; })
            if (m.id == 0)
                m.id = next_id++;
        auto r = exchange(m.encode());
        REQUIRE(r.size() == 1);
        return r[0];
    }
    template <class M>
    std::uint32_t status_of(M m)
    {
        auto r = call(std::move(m));
        REQUIRE(std::holds_alternative<sftp::status_reply>(r));
        return std::get<sftp::status_reply>(r).code;
    }
    template <class M>
    bytes handle_of(M m)
    {
        auto r = call(std::move(m));
        if (auto* s = std::get_if<sftp::status_reply>(&r))
            FAIL("expected a handle, got status " << s->code << " " << s->message);
        REQUIRE(std::holds_alternative<sftp::handle_reply>(r));
        return std::get<sftp::handle_reply>(r).handle;
    }
    bytes open(const std::string& path, std::uint32_t pflags, std::uint32_t mode = 0644)
    {
        sftp::attrs a;
        a.flags = sftp::attr::permissions;
        a.permissions = mode;
        return handle_of(sftp::open_request{.path = path, .pflags = pflags, .attributes = a});
    }
    bool logged(std::string_view text) const
    {
        for (const auto& [l, m] : logs)
            if (m == text)
                return true;
        return false;
    }
    bool logged_containing(std::string_view text) const
    {
        for (const auto& [l, m] : logs)
            if (m.find(text) != std::string::npos)
                return true;
        return false;
    }

private:
    std::size_t decoded_ = 0;
};

inline constexpr std::uint32_t ok = 0, eof = 1, no_such_file = 2, permission_denied = 3, failure = 4,
                                bad_message = 5, op_unsupported = 8;

} // namespace longhaul::test
