// A client session: the sans-I/O core, the transfer window and engine,
// and a link that moves bytes to the server. The programs use it through
// blocking calls (call() waits for one reply; run_until() pumps until a
// condition holds), which is how OpenSSH's sftp and scp are written; the
// transfers underneath are pipelined and event-driven.
//
// The link is the only I/O: fd_link polls the pipes of an ssh subprocess;
// the tests give a link that feeds the server core in memory.
#pragma once

#include "ssh/sftp_client/bandwidth_limiter.hpp"
#include "ssh/sftp_client/client_core.hpp"
#include "ssh/sftp_client/disk_io.hpp"
#include "ssh/sftp_client/transfer.hpp"
#include "ssh/sftp_client/transfer_window.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace longhaul::sftp {

class link {
public:
    virtual ~link() = default;
    // Moves what it can between the core and the server, waiting at most
    // timeout_ms (-1: until something happens) when nothing can move, and
    // dispatches complete replies (core.process()). The end of the
    // server's stream is core.input_closed().
    virtual void pump(client_core& core, int timeout_ms) = 0;
    // No request will follow what the core holds now: once that has gone
    // out, the server's input ends (ssh's stdin closes, so the channel's
    // EOF travels with the last request) while replies still come back.
    // A link that cannot end its output alone ignores this.
    virtual void end_output() {}
    // A descriptor that, readable, ends a wait in pump() (the disk
    // worker's completions); -1: none.
    void set_wake_fd(int fd) noexcept { wake_fd_ = fd; }

protected:
    int wake_fd_ = -1;
};

// The pipes of an ssh subprocess (or sftp -D's server): non-blocking,
// polled. The descriptors stay the caller's.
class fd_link final : public link {
public:
    // `close_out` closes the descriptor out_fd (end_output); none: the
    // output ends only when the caller closes it.
    fd_link(int in_fd, int out_fd, std::function<void()> close_out = {});
    void pump(client_core& core, int timeout_ms) override;
    void end_output() override { ending_ = static_cast<bool>(close_out_); }

private:
    int in_;
    int out_;
    std::function<void()> close_out_;
    bool ending_ = false;
};

struct session_options {
    std::uint32_t buffer_size = 0;   // -B: bytes per request (0: the server's limit)
    std::uint32_t num_requests = 0;  // -R: requests in flight, fixed (0: adaptive)
    std::uint64_t window_budget = 0; // bytes in flight at most (0: default_window_budget())
    std::uint64_t limit_bps = 0;     // -l, bits per second (0: none)
    // File reads and writes on a worker thread (the programs); inline
    // when false (the tests over a simulated clock).
    bool threaded_io = false;
};

// A reply that outlives its callback: DATA and EXTENDED_REPLY bytes are
// copied into `storage`, which their spans point into.
struct reply_copy {
    std::optional<reply> value;
    bytes storage;

    const status_reply* status() const noexcept { return value ? std::get_if<status_reply>(&*value) : nullptr; }
    template <class T>
    const T* get() const noexcept
    {
        return value ? std::get_if<T>(&*value) : nullptr;
    }
};

class session {
public:
    using clock_fn = transfer_engine::clock_fn;

    session(link& l, session_options o, clock_fn clock = [] { return transfer_clock::now(); });

    // INIT/VERSION, then limits@openssh.com when offered. False when the
    // session failed (core().failure() says why). `alongside` may send
    // requests that go out in the same flight as INIT (a server answers
    // them after VERSION): the caller's first lookup costs no round trip
    // of its own.
    bool init(const std::function<void()>& alongside = {});

    client_core& core() noexcept { return core_; }
    transfer_engine& engine() noexcept { return *engine_; }
    transfer_window& window() noexcept { return *window_; }
    const client_limits& limits() const noexcept { return limits_; }
    std::uint32_t read_chunk() const noexcept { return read_chunk_; }
    std::uint32_t write_chunk() const noexcept { return write_chunk_; }
    // Files whose transfers may overlap (bounded by the server's handles).
    std::size_t max_parallel_files() const noexcept;
    bool ok() const noexcept { return !core_.failed(); }
    transfer_clock::time_point now() const { return clock_(); }

    // One request, waiting for its reply.
    template <class M>
    reply_copy call(M m)
    {
        reply_copy out;
        bool done = false;
        core_.request(std::move(m), [&](const reply& r) {
            copy_reply(r, out);
            done = true;
        });
        run_until([&] { return done; });
        if (!done) {
            out.value = status_reply{.id = 0,
                                     .code = static_cast<std::uint32_t>(status_code::connection_lost),
                                     .message = "Connection lost",
                                     .language = {}};
        }
        return out;
    }
    static void copy_reply(const reply& r, reply_copy& out);

    // One request sent now; its reply, copied, fills the returned slot
    // when it arrives, to be waited for later (or never: the slot outlives
    // the caller).
    template <class M>
    std::shared_ptr<std::optional<reply_copy>> send(M m)
    {
        auto slot = std::make_shared<std::optional<reply_copy>>();
        core_.request(std::move(m), [slot](const reply& r) {
            slot->emplace();
            copy_reply(r, **slot);
        });
        return slot;
    }

    // One turn of the link alone (no transfer engine, no disk, no tick),
    // waiting at most timeout_ms: for a caller that drives two sessions at
    // once (scp -3, crossload.hpp).
    void pump(int timeout_ms) { link_.pump(core_, timeout_ms); }

    // Pumps until done() holds or the session fails; `tick` (if set) runs
    // at least every `tick_ms` (the progress meter).
    void run_until(const std::function<bool()>& done);
    void set_tick(std::function<void()> tick, int tick_ms = 1000)
    {
        tick_ = std::move(tick);
        tick_ms_ = tick_ms;
    }

    // The end of the server's input right after what is queued now
    // (link::end_output): for a request known to be the connection's last.
    void end_output()
    {
        core_.requests_ended();
        link_.end_output();
    }
    // Whether the request about to go out will be the connection's last:
    // set by a task_runner told so (task_runner::set_last_batch) while it
    // runs; false otherwise.
    void set_last_request_check(std::function<bool()> f) { last_request_check_ = std::move(f); }
    bool last_request() const { return last_request_check_ && last_request_check_(); }

    // A handle name of the client's own for open-named@longhaul-ssh.org
    // (5 bytes: never one of the 8-byte handles Longhaul's server gives
    // out), unique on this session while 2^32 opens are not in flight.
    bytes new_handle_name()
    {
        const std::uint32_t n = ++named_handles_;
        return bytes{std::uint8_t('n'), std::uint8_t(n >> 24), std::uint8_t(n >> 16), std::uint8_t(n >> 8),
                     std::uint8_t(n)};
    }

    // sftp's SIGINT flag: transfers stop asking and drain.
    void set_interrupt(const std::atomic<bool>* flag)
    {
        interrupt_ = flag;
        engine_->set_interrupt(flag);
    }
    bool interrupted() const noexcept { return interrupt_ != nullptr && interrupt_->load(); }

private:
    void configure_window();

    link& link_;
    session_options options_;
    clock_fn clock_;
    client_core core_;
    client_limits limits_;
    std::uint32_t read_chunk_ = 32 * 1024;
    std::uint32_t write_chunk_ = 32 * 1024;
    std::unique_ptr<transfer_window> window_;
    std::unique_ptr<transfer_engine> engine_;
    std::unique_ptr<bandwidth_limiter> limiter_;
    std::unique_ptr<disk_io> disk_;
    const std::atomic<bool>* interrupt_ = nullptr;
    std::function<void()> tick_;
    std::function<bool()> last_request_check_;
    int tick_ms_ = 1000;
    transfer_clock::time_point last_tick_{};
    std::uint32_t named_handles_ = 0;
};

} // namespace longhaul::sftp
