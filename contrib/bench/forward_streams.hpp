// forward_streams: the client side of `forward_load run`: its options, the
// state of one stream, and stream_loop, the epoll loop that connects a set
// of streams (optionally through SOCKS5), drives their workload and checks
// every byte that comes back.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "forward_load_util.hpp"

namespace forward_load {

enum class stream_kind { rr, duplex, small };

enum class phase { connecting, socks_greeting, socks_reply, probing, running, done };

struct run_options {
    int port = 0;
    int socks5_target = 0;  // 0: plain TCP to the port
    std::string workload;
    int streams = 1;
    int exchanges = 9;
    std::size_t chunk = 64 * 1024;
    int chunks = 129;
    int bulk_streams = 8;
    int small_streams = 16;
    std::size_t small_size = 64;
    double small_interval_ms = 10;
    std::size_t probe = 64;
    double timeout_s = 120;
    std::vector<int> client_pids;
    std::vector<int> server_pids;
    std::vector<int> echo_pids;
    std::string label;
};

struct stream {
    stream_kind kind_ = stream_kind::duplex;
    int index_ = 0;
    int fd_ = -1;
    phase phase_ = phase::connecting;
    std::uint64_t origin_ = 0;  // where this stream starts in the pattern

    // Bytes of the pattern written and read back (probe included).
    std::uint64_t sent_ = 0;
    std::uint64_t received_ = 0;
    // How much may be sent in total; UINT64_MAX for a small stream until it
    // is told to stop.
    std::uint64_t total_ = 0;
    bool write_shut_ = false;
    bool eof_ = false;

    // SOCKS5 handshake bytes: what is still to be written, what was read.
    std::vector<unsigned char> socks_out_;
    std::size_t socks_out_pos_ = 0;
    std::vector<unsigned char> socks_in_;

    steady::time_point connect_at_{};
    steady::time_point ready_at_{};
    bool ready_ = false;

    // Small streams: the request in flight and when the next may start.
    bool request_open_ = false;
    steady::time_point request_at_{};
    bool request_under_load_ = false;
    steady::time_point next_request_at_{};
    std::uint64_t requests_done_ = 0;

    bool queued_ = false;  // waiting in stream_loop::again_ for its next turn
};

// The results of one thread's streams, merged at the end.
struct loop_result {
    std::vector<double> ready_ms;
    std::vector<double> small_ms;
    std::vector<steady::time_point> small_at;  // when each of small_ms was sent (--samples)
    std::uint64_t payload_up = 0;
    std::uint64_t payload_down = 0;
    std::string error;  // empty: all intact
};

// One epoll loop over a set of streams.
class stream_loop {
public:
    // bulk_done and wake_fd (an eventfd, -1 for none) are for the small
    // streams' loop: it stops them once the bulk streams are done and is
    // woken when that happens.
    stream_loop(const run_options& o, const pattern& pat, std::vector<stream> streams,
                const std::atomic<bool>* bulk_done, int wake_fd);
    ~stream_loop();

    // Runs until every stream is done, one fails, or the deadline passes.
    loop_result run(steady::time_point deadline, const std::atomic<bool>& abort);

private:
    bool all_done() const;
    // How long epoll may sleep: until the deadline or the next small
    // request, and not at all while a stream waits for its turn.
    int wait_ms(steady::time_point now, steady::time_point deadline);
    std::string progress_text() const;
    void fail(const stream& s, const std::string& why);
    void fail_all(const std::string& why);
    loop_result finish();
    void start_connect(stream& s);
    // How far the stream may have written by now.
    std::uint64_t send_limit(stream& s);
    // Moves the stream as far as its sockets allow.
    void drive(stream& s);
    // Checks n bytes just read into scratch_ against the pattern and moves
    // the stream's state on. Returns false on a failure.
    bool take(stream& s, std::size_t n);
    // SOCKS5 (RFC 1928) CONNECT to 127.0.0.1:socks5_target, no
    // authentication. Returns true once the stream may go on to its probe.
    bool socks_step(stream& s);
    void stream_finished(const stream& s);

public:
    // Called (in this loop's thread) when its last stream is done.
    std::function<void()> on_all_done_;

private:
    const run_options& options_;
    const pattern& pattern_;
    std::vector<stream> streams_;
    const std::atomic<bool>* bulk_done_;  // small streams stop when set
    int wake_fd_;
    int epoll_ = -1;
    std::unique_ptr<unsigned char[]> scratch_;
    loop_result result_;
    bool stop_pending_ = false;
    bool has_timers_ = false;
    std::vector<std::size_t> again_;  // streams whose turn ran out
    std::vector<std::size_t> turn_;
};

// `count` streams of one kind, numbered from first_index, each starting at
// its own place in the pattern.
std::vector<stream> make_streams(stream_kind kind, int count, int first_index);

}  // namespace forward_load
