// The client side of SFTP v3, sans-I/O: requests go out as bytes, replies
// come in as bytes and are handed to the callback registered with each
// request, matched by request id. The core owns no descriptor, clock or
// thread, so it runs over an ssh subprocess's pipes (fd_link) as well as
// against the server core in memory (the unit tests and the fuzz target).
//
// Every request may be outstanding at once: the transfer engine keeps
// hundreds of reads and writes in flight, and files of a tree overlap.
// Replies may come in any order; an id nobody asked for, a reply type a
// request cannot get, a malformed or oversize packet ends the session
// (failed()), as OpenSSH's client treats them as fatal. When the session
// fails or the server goes away, every pending callback is called once
// with a synthesized SSH_FX_CONNECTION_LOST status, so nothing waits for
// a reply that will never come.
#pragma once

#include "common/buffer.hpp"
#include "common/sftp/sftp_replies.hpp"
#include "common/sftp/sftp_requests.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace longhaul::sftp {

// What the server accepts, from limits@openssh.com or OpenSSH's defaults
// when the server does not say (zero fields in the reply mean "no limit
// stated" and leave the default in place).
struct client_limits {
    std::uint32_t max_packet_length = openssh_max_packet_length;
    std::uint32_t max_read_length = 32 * 1024;
    std::uint32_t max_write_length = 32 * 1024;
    std::uint64_t max_open_handles = 0; // 0: unknown
};

class client_core {
public:
    // Spans inside the reply (DATA, EXTENDED_REPLY) are valid only during
    // the call.
    using reply_handler = std::function<void(const reply&)>;

    // Replies longer than max_reply_length end the session ("Received
    // message too long"). The default fits a 256 KiB read plus headers.
    explicit client_core(std::uint32_t max_reply_length = default_max_packet_length + 4096);

    // Queues SSH_FXP_INIT (version 3, no extensions, as OpenSSH's client).
    void start();
    bool initialised() const noexcept { return initialised_; }
    std::uint32_t server_version() const noexcept { return version_.version; }
    const std::vector<extension_pair>& extensions() const noexcept { return version_.extensions; }
    // True when the server advertised `name` (with `version`, when given).
    bool has_extension(std::string_view name, std::string_view version = {}) const noexcept;

    // Sends a request: its id is assigned here; `h` is called with the reply.
    // After a failure the handler is answered at once (connection lost).
    template <class M>
    std::uint32_t request(M m, reply_handler h)
    {
        m.id = next_id_++;
        if (failed_) {
            answer_lost(m.id, h);
            return m.id;
        }
        scratch_.clear();
        m.encode_to(scratch_);
        out_.append(scratch_);
        pending_.emplace(m.id, std::move(h));
        ++requests_sent_;
        return m.id;
    }

    // A WRITE with its data placed straight into the output buffer:
    // prepare_write() returns room for up to max_data bytes (read the file
    // into it), commit_write() sends the first `n` of them. Nothing else
    // may touch the core in between; an abandoned prepare sends nothing.
    mutable_byte_span prepare_write(byte_span handle, std::uint64_t offset, std::size_t max_data);
    std::uint32_t commit_write(std::size_t n, reply_handler h);

    // Output: bytes for the server.
    byte_span output() const noexcept { return out_.data(); }
    void consume_output(std::size_t n) noexcept { out_.consume(n); }

    // Input: read straight into input_space(), then commit_input(n); or
    // feed() a copy. process() dispatches every complete reply.
    mutable_byte_span input_space(std::size_t at_least = 64 * 1024);
    void commit_input(std::size_t n) noexcept { in_.commit(n); }
    void feed(byte_span data);
    void process();
    // The server's stream ended (the ssh process exited, the pipe closed).
    // A failure ("Connection closed"), unless the client ended its requests
    // (requests_ended) and every one was answered: a server that answers
    // what came before the end of its input exits right behind the last
    // answer, possibly before the program has written the data it got.
    void input_closed();
    // No request follows those sent (the server's input is ending).
    void requests_ended() noexcept { requests_ended_ = true; }

    // Ends the session with a message (OpenSSH's fatal() text); pending
    // requests are answered with SSH_FX_CONNECTION_LOST.
    void fail(std::string message);
    bool failed() const noexcept { return failed_; }
    const std::string& failure() const noexcept { return failure_; }
    bool closed() const noexcept { return closed_; }

    std::size_t outstanding() const noexcept { return pending_.size(); }
    std::uint64_t requests_sent() const noexcept { return requests_sent_; }
    std::size_t buffered_input() const noexcept { return in_.size(); }

private:
    void handle_packet(byte_span packet);
    void fail_pending();
    static void answer_lost(std::uint32_t id, const reply_handler& h);

    std::uint32_t max_reply_length_;
    byte_buffer in_;
    byte_buffer out_;
    bytes scratch_;
    std::unordered_map<std::uint32_t, reply_handler> pending_;
    std::uint32_t next_id_ = 1;
    std::uint64_t requests_sent_ = 0;
    version_reply version_;
    bool started_ = false;
    bool initialised_ = false;
    bool closed_ = false;
    bool requests_ended_ = false;
    bool failed_ = false;
    bool processing_ = false;
    std::string failure_;
    // prepare_write() state: where the packet starts (valid until the next
    // call that touches out_), its header size and id.
    std::uint8_t* write_packet_ = nullptr;
    std::size_t write_header_ = 0;
    std::uint32_t write_id_ = 0;
};

// The status carried by a reply, for callers that expect STATUS: ok for
// non-status replies is the caller's business.
inline const status_reply* as_status(const reply& r) noexcept { return std::get_if<status_reply>(&r); }

} // namespace longhaul::sftp
