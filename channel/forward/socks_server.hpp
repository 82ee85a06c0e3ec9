// The server side of a SOCKS 4, 4a or 5 handshake, as ssh -D serves it on
// a local socket and ssh -R port (reverse dynamic forwarding) on a
// forwarded channel. Bytes in, in any fragments (one byte at a time
// included); the method choice and replies out; the CONNECT request as a
// value. No I/O: the caller reads, writes and opens the channel.
//
//   socks_server s;
//   n = s.feed(bytes_read);        // takes only what the handshake needs
//   write(s.output()); s.consume_output(k);
//   if (s.state() == socks_state::request)  open direct-tcpip to
//       s.request().host : port, then s.reply_success() or
//       s.reply_failure(code), write the output again;
//   bytes_read after the first n are the start of the stream.
//   if (s.state() == socks_state::refused)  write the output (a failure
//       reply, when the protocol has one) and close.
//
// What is accepted follows OpenSSH's channel_decode_socks4/5: CONNECT only,
// SOCKS5 with "no authentication" only, a SOCKS4 request (user id and 4a
// host name with their NULs) of at most 1026 bytes, SOCKS5 names up to 255
// bytes. Where OpenSSH closes without a word, this answers first: SOCKS5
// 0xFF when no-auth is not offered, "command not supported" for BIND and
// UDP ASSOCIATE, "address type not supported", SOCKS4 0x5B.
#pragma once

#include "channel/forward/socks.hpp"
#include "common/errc.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace longhaul::forward {

// The longest SOCKS4 request OpenSSH takes: its last NUL at index 1025
// (channel_decode_socks4 gives up on any other byte past index 1024).
inline constexpr std::size_t max_socks4_request = 1026;

enum class socks_state {
    handshake, // more bytes are needed (output() may hold the method choice)
    request,   // a CONNECT request is complete: request(), then reply_*()
    refused,   // the handshake failed: error(), output() holds any reply
};

class socks_server {
public:
    // Takes bytes of the handshake from the front of `in` and returns how
    // many it took: all of them while the handshake is incomplete, none
    // once it is complete or refused. What it leaves belongs to the stream.
    std::size_t feed(byte_span in);

    socks_state state() const noexcept { return state_; }
    // Valid in state request (and after a reply).
    const socks_request& request() const noexcept { return request_; }
    // Why the handshake was refused: an errc (malformed, too_large,
    // unsupported) and a line for the debug log.
    errc error() const noexcept { return error_; }
    std::string_view error_message() const noexcept { return error_message_; }

    // Bytes for the client, in order.
    byte_span output() const noexcept { return output_; }
    void consume_output(std::size_t n);

    // The outcome of the channel open, once, in state request (false and
    // nothing queued otherwise).
    bool reply_success();
    // SOCKS4 can only say "rejected" (0x5B), whatever the code; a code of
    // `succeeded` is taken as general_failure.
    bool reply_failure(socks5_reply code);
    bool replied() const noexcept { return replied_; }

private:
    enum class phase {
        version,
        s4_header,
        s4_user,
        s4_host,
        s5_greeting_head,
        s5_methods,
        s5_request_head,
        s5_domain_length,
        s5_address,
    };

    // Appends from `in` (at `taken`) until the pending message is `total`
    // bytes long; true when it is.
    bool fill(byte_span in, std::size_t& taken, std::size_t total);
    // Appends up to and including the next NUL; true when one arrived.
    bool fill_to_nul(byte_span in, std::size_t& taken);
    void step(byte_span in, std::size_t& taken);
    void s4_done();
    void s5_greeting_done();
    void s5_head_done();
    void s5_done();
    void refuse(errc e, std::string message);
    void refuse_with(errc e, std::string message, bytes reply);
    void append_output(const bytes& b) { output_.insert(output_.end(), b.begin(), b.end()); }

    socks_state state_ = socks_state::handshake;
    phase phase_ = phase::version;
    bytes pending_;   // the message being read (at most max_socks4_request)
    std::size_t mark_ = 0; // SOCKS4: where the user id's NUL ended
    std::size_t s5_need_ = 0; // SOCKS5 request: its whole length
    socks_request request_;
    errc error_ = errc::ok;
    std::string error_message_;
    bytes output_;
    bool replied_ = false;
};

} // namespace longhaul::forward
