// Fuzzes the connection protocol core (channel/connection): the peer's
// messages interleaved with the local program's own actions, so that
// messages meet channels in every state (opening, open, half-closed, closing,
// released and reused) and windows in every phase.
//
// Input: byte 0 = answer style (see answer_connection_event()), then
// operations until the input ends; each starts with an op byte:
//   op % 12 == 0..3  a peer message: 1-byte length (255: 2-byte), the bytes;
//                    the first byte is mapped into 80..100
//   4  open a channel locally ("session", or "direct-tcpip" for odd args)
//   5  accept / reject the oldest open request we have not answered
//   6  send data on channel (arg % 8), up to arg2 * 256 bytes of its window
//   7  send a channel request (want_reply from arg)
//   8  send EOF, 9  close, on channel (arg % 8)
//   10 the sink took arg2 * 64 bytes of channel (arg % 8)
//   11 a global request; or time passes (window ticks, RTT)
// Invariants: nothing crashes, every event but close and open_failed names
// a channel that exists, the send capacity never exceeds the peer's window,
// and sending data takes exactly its size from the peer's window.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "fuzz/fuzz_channel.hpp"
#include "fuzz/fuzz_common.hpp"

#include "channel/connection.hpp"

#include <deque>

using namespace longhaul;
using namespace longhaul::fuzz;

namespace {

struct reader {
    byte_span in;
    std::uint8_t byte()
    {
        if (in.empty())
            return 0;
        const std::uint8_t b = in[0];
        in = in.subspan(1);
        return b;
    }
    bytes message()
    {
        std::size_t n = byte();
        if (n == 255)
            n = std::size_t(byte()) << 8 | byte();
        n = std::min(n, in.size());
        bytes m(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
        in = in.subspan(n);
        return m;
    }
};

void run(std::uint8_t style, byte_span input)
{
    fixed_random rng;
    transport_config tc;
    transport t(tc, rng, steady_time{});
    connection_config cc;
    // Small windows and budgets so that the limits are reached quickly.
    if (style & 0x80) {
        cc.window.initial_window = 4096;
        cc.window.max_window = 65536;
        cc.window.budget = 100000;
        cc.max_channels = 4;
    }
    connection c(t, cc);
    steady_time now = steady_time{} + std::chrono::hours(1);
    std::deque<channel_id> unanswered;
    reader r{input};
    for (int op_count = 0; op_count < 512 && !r.in.empty() && !t.closed(); ++op_count) {
        const std::uint8_t op = r.byte() % 12;
        if (op <= 3) {
            bytes m = r.message();
            if (m.empty())
                continue;
            m[0] = static_cast<std::uint8_t>(80 + m[0] % 21);
            const auto ev = c.handle(m, now);
            switch (ev.type) {
            case connection_event_type::open_request:
            case connection_event_type::open_confirmed:
            case connection_event_type::data:
            case connection_event_type::eof:
            case connection_event_type::request:
            case connection_event_type::request_reply:
            case connection_event_type::window_opened:
                // Only close and open_failed may name a channel already released.
                check(c.exists(ev.channel));
                break;
            default: break;
            }
            if (ev.type == connection_event_type::open_request && (style & 0x40))
                unanswered.push_back(ev.channel); // answered by a later op 5
            else
                answer_connection_event(c, ev, style + static_cast<std::uint32_t>(op_count), now);
        } else {
            const std::uint8_t arg = r.byte();
            const std::uint8_t arg2 = r.byte();
            const channel_id id = arg % 8;
            switch (op) {
            case 4:
                (void)c.open((arg & 1) ? "direct-tcpip" : "session");
                break;
            case 5:
                // Erase ids that the peer has since closed or that were reused.
                while (!unanswered.empty()) {
                    const channel_id u = unanswered.front();
                    unanswered.pop_front();
                    if (!c.exists(u))
                        continue;
                    if (arg & 1)
                        c.accept(u);
                    else
                        c.reject(u, open_failure_reason::administratively_prohibited, "no");
                    break;
                }
                break;
            case 6:
                if (c.exists(id)) {
                    const std::size_t n = std::min<std::size_t>(c.send_capacity(id), std::size_t(arg2) * 256);
                    const std::uint64_t before = c.info(id).remote_window;
                    if (n > 0) {
                        bytes d(n, static_cast<std::uint8_t>(arg2));
                        if (c.send_data(id, d, (arg & 8) ? extended_data_stderr : 0))
                            check(c.info(id).remote_window == before - n);
                    }
                }
                break;
            case 7:
                if (c.exists(id))
                    c.send_request(id, (arg & 16) ? "exec" : "window-change", (arg & 32) != 0,
                                   string_request{"true"}.encode());
                break;
            case 8:
                if (c.exists(id))
                    c.send_eof(id);
                break;
            case 9:
                if (c.exists(id))
                    c.close(id);
                break;
            case 10:
                if (c.exists(id))
                    c.consumed(id, std::size_t(arg2) * 64, now);
                break;
            case 11:
                if (arg & 1) {
                    c.send_global_request("keepalive@openssh.com", (arg & 2) != 0);
                } else {
                    now += std::chrono::milliseconds(arg2);
                    c.set_rtt(std::chrono::microseconds(std::size_t(arg) * 1000));
                    c.tick(now);
                }
                break;
            }
        }
        check_channels(c);
    }
}

// ---------------------------------------------------------------- seeds

struct seed_writer {
    bytes b;
    void peer(const bytes& m)
    {
        b.push_back(0);
        bytes mm = m;
        mm[0] = static_cast<std::uint8_t>(mm[0] - 80);
        append_message(b, mm);
    }
    void op(std::uint8_t o, std::uint8_t a = 0, std::uint8_t a2 = 0)
    {
        b.push_back(o);
        b.push_back(a);
        b.push_back(a2);
    }
};

bytes open_msg(std::string_view type, std::uint32_t sender, std::uint32_t window, std::uint32_t max_packet)
{
    bytes m;
    wire_writer(m).u8(msg::channel_open).string(type).u32(sender).u32(window).u32(max_packet);
    return m;
}

bytes words(std::uint8_t type, std::initializer_list<std::uint32_t> ws)
{
    bytes m{type};
    wire_writer w(m);
    for (auto x : ws)
        w.u32(x);
    return m;
}

bytes data_msg(std::uint32_t ch, std::string_view d)
{
    bytes m;
    wire_writer(m).u8(msg::channel_data).u32(ch).string(d);
    return m;
}

bytes request_msg(std::uint32_t ch, std::string_view name, bool want, byte_span data)
{
    bytes m;
    wire_writer(m).u8(msg::channel_request).u32(ch).string(name).boolean(want).raw(data);
    return m;
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](std::uint8_t style, const seed_writer& w) {
        write_seed(dir, "seed-" + std::to_string(n++), with_prefix({style}, w.b));
    };
    pty_request pty{"xterm", 80, 24, 0, 0, encode_terminal_modes({{1, 3}, {53, 1}})};
    // The peer opens a session (server side): requests, data, EOF, close.
    {
        seed_writer w;
        w.peer(open_msg("session", 7, 2 * 1024 * 1024, 32768));
        w.peer(request_msg(0, "pty-req", true, pty.encode()));
        w.peer(request_msg(0, "env", false, env_request{"LANG", "C"}.encode()));
        w.peer(request_msg(0, "exec", true, string_request{"cat"}.encode()));
        w.peer(data_msg(0, "hello"));
        w.op(6, 0, 4);
        w.peer(words(msg::channel_window_adjust, {0, 1 << 20}));
        w.op(10, 0, 100);
        w.op(11, 40, 50);
        w.peer(request_msg(0, "window-change", false, window_change_request{100, 40, 0, 0}.encode()));
        w.peer(request_msg(0, "signal", false, signal_request{"INT"}.encode()));
        w.peer(words(msg::channel_eof, {0}));
        w.op(8, 0);
        w.op(9, 0);
        w.peer(words(msg::channel_close, {0}));
        put(0, w);
        put(0x80, w);
    }
    // We open (client side): confirmation, data, exit status, close; then reuse.
    {
        seed_writer w;
        w.op(4, 0);
        w.op(4, 1);
        bytes confirm = words(msg::channel_open_confirmation, {0, 3, 65536, 16384});
        w.peer(confirm);
        w.peer(words(msg::channel_open_failure, {1, 2, 0, 0}));
        w.op(7, 48);
        w.peer(words(msg::channel_success, {0}));
        w.op(6, 0, 255);
        w.op(6, 8, 255);
        w.peer(words(msg::channel_window_adjust, {0, 100000}));
        w.peer(data_msg(0, std::string(3000, 'y')));
        bytes ext;
        wire_writer(ext).u8(msg::channel_extended_data).u32(0).u32(1).string("err");
        w.peer(ext);
        w.peer(request_msg(0, "exit-status", false, exit_status_request{0}.encode()));
        w.peer(request_msg(0, "exit-signal", false, exit_signal_request{"TERM", false, "", ""}.encode()));
        w.peer(words(msg::channel_eof, {0}));
        w.peer(words(msg::channel_close, {0}));
        w.op(9, 0);
        w.op(4, 0);
        w.peer(words(msg::channel_open_confirmation, {0, 4, 0, 0}));
        w.op(6, 0, 1);
        put(2, w);
        put(0x80 | 0x40, w);
    }
    // Global requests both ways; opens answered later; too many channels.
    {
        seed_writer w;
        bytes g;
        wire_writer(g).u8(msg::global_request).string("keepalive@openssh.com").boolean(true);
        w.peer(g);
        w.op(11, 3);
        w.peer(bytes{msg::request_success});
        w.op(11, 1);
        w.peer(bytes{msg::request_failure});
        for (std::uint32_t i = 0; i < 6; ++i)
            w.peer(open_msg(i % 2 ? "direct-tcpip" : "session", i, 1000, 100));
        w.op(5, 1);
        w.op(5, 0);
        w.peer(data_msg(0, std::string(2000, 'z')));
        put(0x80 | 0x40, w);
        put(0x40, w);
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    run(data[0], byte_span(data + 1, size - 1));
    return 0;
}
