#include "channel/io/socks_channel.hpp"

namespace longhaul {

void socks_channel::on_data(byte_span data, std::uint32_t extended)
{
    if (ended_ || stopped_ || extended != 0) {
        runner->consumed(id, data.size());
        return;
    }
    if (requested_) {
        // The client did not wait for the reply: kept for the socket.
        early_.insert(early_.end(), data.begin(), data.end());
        return;
    }
    const std::size_t used = socks_.feed(data);
    runner->consumed(id, used);
    if (!flush_output())
        return end();
    switch (socks_.state()) {
    case forward::socks_state::handshake: return;
    case forward::socks_state::refused:
        log_.debug("channel " + std::to_string(id) +
                   ": reverse dynamic forwarding refused: " + std::string(socks_.error_message()));
        return end();
    case forward::socks_state::request: break;
    }
    requested_ = true;
    early_.assign(data.begin() + static_cast<std::ptrdiff_t>(used), data.end());
    if (on_request)
        on_request(socks_.request());
}

std::optional<bytes> socks_channel::succeed()
{
    if (ended_ || !socks_.reply_success() || !flush_output()) {
        end();
        return std::nullopt;
    }
    ended_ = true; // the socket_channel carries it from here
    return std::move(early_);
}

void socks_channel::fail(forward::socks5_reply code)
{
    if (ended_)
        return;
    socks_.reply_failure(code);
    (void)flush_output();
    end();
}

bool socks_channel::flush_output()
{
    const byte_span out = socks_.output();
    if (out.empty())
        return true;
    connection& conn = runner->conn();
    if (conn.send_capacity(id) < out.size() || !conn.send_data(id, out))
        return false;
    socks_.consume_output(out.size());
    runner->flush();
    return true;
}

void socks_channel::on_eof()
{
    // A client that half-closes before its request is complete has asked
    // for nothing; after it, the EOF is part of the stream: the socket gets
    // it once connected, as OpenSSH's channel would deliver it.
    if (!requested_)
        end();
    else
        eof_received_ = true;
}

void socks_channel::on_close()
{
    ended_ = true;
    if (!close_sent_) {
        close_sent_ = true;
        runner->conn().close(id);
        runner->flush();
    }
    if (on_finished)
        on_finished();
}

void socks_channel::end()
{
    if (ended_)
        return;
    ended_ = true;
    connection& conn = runner->conn();
    if (conn.exists(id) && !close_sent_) {
        close_sent_ = true;
        conn.send_eof(id);
        conn.close(id);
        runner->flush();
    }
    // on_finished once the peer's CHANNEL_CLOSE arrives (on_close).
}

} // namespace longhaul
