// The client engine against the server core in memory, over a simulated
// network: requests reach the server half a round trip after they are
// sent, replies come back half a round trip later and no faster than the
// link's rate, on a simulated clock (no sleeping, no timing in the
// assertions: the same run always gives the same numbers). Replies can be
// mangled on the way (shortened, replaced by errors, held and released out
// of order) to test what a real server or network could do.
#pragma once

#include "common/sftp/sftp_framing.hpp"
#include "ssh/sftp_client/file_tasks.hpp"
#include "ssh/sftp_client/remote_fs.hpp"
#include "ssh/sftp_client/session.hpp"
#include "tests/sftp_server/sftp_server_harness.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace longhaul::test {

struct sim_link final : sftp::link {
    using time_point = sftp::transfer_clock::time_point;

    sftp::server& srv;
    time_point now{std::chrono::seconds(1000)};
    std::chrono::microseconds one_way{1000};
    double bytes_per_second = 0; // each direction; 0: unlimited
    // Server to client, per reply frame (length prefix included): what to
    // deliver instead (nothing: drop; several: in that order).
    std::function<std::vector<bytes>(bytes frame)> mangle;
    // Replies held back by a mangler that wants to reorder: released by it.
    bool broken = false;      // the "ssh process" died: the client sees EOF
    std::size_t max_server_outstanding = 0; // peak requests the server saw unanswered
    // Client to server, bytes on the wire at most (the SSH channel's window
    // and the pipe to ssh): the rest stays in the client's output, as when
    // ssh stops reading its stdin. 0: unlimited.
    std::size_t up_window = 0;
    std::size_t peak_unsent = 0; // the client's largest output backlog seen
    // end_output(): the client said no request follows. Requests sent
    // after that (a bug) are counted, and still delivered.
    bool output_ended = false;
    std::size_t sent_after_end = 0;
    std::size_t outstanding_at_end = 0; // requests unanswered when it ended
    // Once the ended output has all arrived, the server sees the end of its
    // input (as sftp-server's stdin closing); off: it never does.
    bool deliver_eof = false;
    bool eof_delivered = false;

    struct in_flight {
        time_point at;
        bytes data;
    };
    std::deque<in_flight> to_server, to_client;
    time_point up_free{}, down_free{};

    explicit sim_link(sftp::server& s) : srv(s) {}

    time_point serialize(time_point& free_at, std::size_t n)
    {
        time_point start = std::max(free_at, now);
        if (bytes_per_second > 0)
            start += std::chrono::nanoseconds(std::int64_t(double(n) * 1e9 / bytes_per_second));
        free_at = start;
        return start + one_way;
    }

    void end_output() override { end_requested = true; }
    bool end_requested = false;

    void pump(sftp::client_core& core, int timeout_ms) override
    {
        if (broken) {
            core.input_closed();
            return;
        }
        if (output_ended && !core.output().empty())
            ++sent_after_end;
        bool moved = false;
        // Client output onto the wire (all of it, or what the window takes).
        peak_unsent = std::max(peak_unsent, core.output().size());
        if (!core.output().empty()) {
            auto o = core.output();
            if (up_window != 0) {
                std::size_t on_wire = 0;
                for (const auto& f : to_server)
                    on_wire += f.data.size();
                o = o.first(std::min(o.size(), up_window - std::min(up_window, on_wire)));
            }
            if (!o.empty()) {
                to_server.push_back({serialize(up_free, o.size()), bytes(o.begin(), o.end())});
                core.consume_output(o.size());
                moved = true;
            }
        }
        if (end_requested && core.output().empty() && !output_ended) {
            output_ended = true;
            outstanding_at_end = core.outstanding();
        }
        // Arrivals at the server.
        while (!to_server.empty() && to_server.front().at <= now) {
            bytes b = std::move(to_server.front().data);
            to_server.pop_front();
            std::size_t done = 0;
            while (done < b.size()) {
                done += srv.feed(byte_span(b).subspan(done));
                drain_server();
            }
            moved = true;
        }
        if (deliver_eof && output_ended && to_server.empty() && !eof_delivered) {
            eof_delivered = true;
            srv.input_eof();
            moved = true;
        }
        drain_server();
        // Arrivals at the client.
        while (!to_client.empty() && to_client.front().at <= now) {
            bytes b = std::move(to_client.front().data);
            to_client.pop_front();
            core.feed(b);
            moved = true;
        }
        if (moved)
            return;
        // Nothing due: jump the clock to the next arrival (or the timeout).
        time_point next = time_point::max();
        if (!to_server.empty())
            next = std::min(next, to_server.front().at);
        if (!to_client.empty())
            next = std::min(next, to_client.front().at);
        if (next == time_point::max())
            next = now + std::chrono::milliseconds(timeout_ms < 0 ? 1000 : std::max(timeout_ms, 1));
        now = std::max(now, next);
    }

    void drain_server()
    {
        srv.process();
        auto o = srv.output();
        if (o.empty())
            return;
        bytes out(o.begin(), o.end());
        srv.consume_output(o.size());
        pending_reply_bytes.insert(pending_reply_bytes.end(), out.begin(), out.end());
        std::size_t pos = 0;
        for (;;) {
            const auto f = sftp::read_frame(byte_span(pending_reply_bytes).subspan(pos), 16 * 1024 * 1024);
            if (f.status != errc::ok)
                break;
            bytes frame(pending_reply_bytes.begin() + pos, pending_reply_bytes.begin() + pos + f.size());
            pos += f.size();
            std::vector<bytes> deliver;
            if (mangle)
                deliver = mangle(std::move(frame));
            else
                deliver.push_back(std::move(frame));
            for (auto& d : deliver)
                to_client.push_back({serialize(down_free, d.size()), std::move(d)});
        }
        pending_reply_bytes.erase(pending_reply_bytes.begin(), pending_reply_bytes.begin() + pos);
    }

    bytes pending_reply_bytes;
};

// A server in a temporary root, a client session over sim_link, and a
// local directory for the client's files.
struct client_harness {
    sftp_temp_dir remote;
    sftp_temp_dir local;
    std::unique_ptr<sftp::rooted_filesystem> fs;
    fake_names names;
    std::unique_ptr<sftp::server> srv;
    std::unique_ptr<sim_link> net;
    std::unique_ptr<sftp::session> sess;
    std::vector<std::string> errors, infos;
    sftp::output_sink out;
    std::unique_ptr<sftp::remote_fs> rfs;

    explicit client_harness(sftp::session_options so = {}, sftp::server_options o = {})
    {
        int error = 0;
        fs = sftp::rooted_filesystem::open_root(remote.path(), error);
        REQUIRE(fs);
        if (std::getenv("SFTP_CLIENT_TEST_LOG") != nullptr)
            o.level = log_level::debug3;
        else
            o.level = log_level::error;
        o.clock = [] { return std::time_t{1700000000}; };
        srv = std::make_unique<sftp::server>(std::move(o), *fs, names, [](log_level, std::string_view m) {
            if (std::getenv("SFTP_CLIENT_TEST_LOG") != nullptr)
                std::fprintf(stderr, "server: %.*s\n", int(m.size()), m.data());
        });
        srv->start();
        net = std::make_unique<sim_link>(*srv);
        sess = std::make_unique<sftp::session>(*net, so, [this] { return net->now; });
        out.error = [this](const std::string& m) { errors.push_back(m); };
        out.info = [this](const std::string& m) { infos.push_back(m); };
        rfs = std::make_unique<sftp::remote_fs>(*sess, out);
    }

    void init() { REQUIRE(sess->init()); }

    std::string lpath(const std::string& name) const { return local.path() + "/" + name; }

    static std::string random_bytes(std::size_t n, unsigned seed = 1)
    {
        // Four bytes per draw: the tests ask for up to 80 MiB at a time.
        std::mt19937 rng(seed);
        std::string s(n, '\0');
        for (std::size_t i = 0; i < n; i += 4) {
            const std::uint32_t r = rng();
            for (std::size_t k = 0; k < 4 && i + k < n; ++k)
                s[i + k] = char(r >> (8 * k));
        }
        return s;
    }
    static std::string read_file(const std::string& path)
    {
        return read_whole_file(path);
    }
    static void write_file(const std::string& path, const std::string& data)
    {
        std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
    }
    double seconds_since(sftp::transfer_clock::time_point t) const
    {
        return std::chrono::duration<double>(net->now - t).count();
    }
};

// Frame helpers for manglers: the type byte and id of a reply frame.
// Round trips a transfer needs, counted on the simulated clock: on a path
// of `sim_path_rtt` with no rate limit an operation takes a whole number of
// them (round_trips_test.cpp, open_named_test.cpp).
inline constexpr auto sim_path_rtt = std::chrono::milliseconds(200);

inline void slow_path(client_harness& h)
{
    h.net->one_way = sim_path_rtt / 2;
}

// Round trips (of `sim_path_rtt`) that `f` took, to 0.01.
template <class F>
double round_trips(client_harness& h, F&& f)
{
    const auto t0 = h.net->now;
    f();
    return std::round(h.seconds_since(t0) / std::chrono::duration<double>(sim_path_rtt).count() * 100) / 100;
}

// One task run to its end by a runner of its own: 0 or -1.
inline int run_one(client_harness& h, std::unique_ptr<sftp::file_task> t)
{
    sftp::task_runner runner(*h.rfs, nullptr);
    runner.add(std::move(t));
    return runner.run();
}

inline std::uint8_t frame_type(const bytes& f) { return f.size() > 4 ? f[4] : 0; }
inline std::uint32_t frame_id(const bytes& f) { return f.size() >= 9 ? load_u32(f.data() + 5) : 0; }
// A STATUS reply frame with code `c`, to put in place of a real reply.
inline bytes status_frame(std::uint32_t id, sftp::status_code c)
{
    return sftp::status_reply{.id = id, .code = std::uint32_t(c), .message = "injected", .language = ""}.encode();
}

} // namespace longhaul::test
