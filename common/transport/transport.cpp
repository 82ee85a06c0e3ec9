// The transport core's state machine: input, the version exchange, each
// packet's dispatch, sending (deferred while keys change) and closing. The
// key exchange is in transport_kex.cpp, new keys and the re-key accounting
// in transport_rekey.cpp, the server's host keys in transport_host_keys.cpp.
#include "common/transport/transport.hpp"

#include "common/text.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul {

namespace {

// Input beyond one maximal packet plus a generous read is never needed.
constexpr std::size_t max_input_buffer = max_transport_input;
// Bounds for peer EXT_INFO: fewer than 1024 entries (OpenSSH's limit).
constexpr std::uint32_t max_extensions = 1024;

} // namespace

transport::transport(transport_config config, random_source& rng, steady_time now)
    : config_(std::move(config)), rng_(rng), now_(now), last_kex_time_(now), in_(max_input_buffer), sender_(rng)
{
    local_id_ = make_identification(config_.software_version, config_.version_comments);
    sender_.output().append(as_bytes(local_id_));
    sender_.output().append(as_bytes("\r\n"));
    send_kexinit();
}

transport::~transport()
{
    if (!session_id_.empty())
        cleanse(session_id_);
}

// ---------------------------------------------------------------- input

mutable_byte_span transport::input_space(std::size_t max)
{
    receiver_.release(in_);
    const std::size_t room = in_.max_size() - in_.size();
    return in_.prepare(std::min(max, room));
}

void transport::commit_input(std::size_t n)
{
    in_.commit(n);
    stats_.bytes_in += n;
}

void transport::feed(byte_span bytes)
{
    while (!bytes.empty()) {
        auto dst = input_space(bytes.size());
        if (dst.empty()) {
            close_with(errc::too_large, disconnect_reason::protocol_error, "input buffer overflow");
            return;
        }
        std::copy_n(bytes.begin(), dst.size(), dst.begin());
        commit_input(dst.size());
        bytes = bytes.subspan(dst.size());
    }
}

void transport::input_eof() { eof_ = true; }

// ---------------------------------------------------------------- events

transport_event transport::poll()
{
    if (closed_)
        return closed_event();
    receiver_.release(in_);
    if (kex_complete_pending_) {
        kex_complete_pending_ = false;
        return {.type = transport_event_type::kex_complete};
    }
    if (!version_received_) {
        auto ev = handle_version();
        if (ev.type != transport_event_type::none || !version_received_)
            return ev;
    }
    for (;;) {
        // Before each packet, not only after those that raise no event: a
        // receiver of bulk data (payload events only) re-keys by what it
        // received, too.
        maybe_rekey();
        if (awaiting_host_key_)
            return {};
        // No packet may be opened ahead of a NEWKEYS, and one can only
        // arrive while an exchange we take part in is running: until we
        // have sent KEXINIT, the peer cannot have sent its NEWKEYS.
        receiver_.set_lookahead(!kex_.active);
        auto r = receiver_.next(in_);
        if (!r) {
            switch (r.error()) {
            case errc::bad_packet_length:
                return fail(errc::bad_packet_length, "Bad packet length " + std::to_string(receiver_.last_bad_length()) + ".");
            case errc::mac_mismatch:
                return fail(errc::mac_mismatch, "Corrupted MAC on input.");
            case errc::bad_padding:
                return fail(errc::bad_padding, "Invalid padding length on input.");
            default:
                return fail(r.error(), "Incoming packet: " + std::string(to_string(r.error())));
            }
        }
        if (!*r) {
            if (eof_)
                return fail(errc::connection_closed, "Connection closed by remote host");
            return {};
        }
        const received_packet& pkt = **r;
        ++stats_.packets_in;
        if (!established_ && pkt.seq == 0xffffffffu)
            return fail(errc::sequence_wrap, "incoming sequence number wrapped during initial key exchange");
        auto ev = dispatch(pkt);
        if (ev.type != transport_event_type::none || closed_)
            return ev;
    }
}

transport_event transport::handle_version()
{
    for (;;) {
        auto line = take_identification_line(in_);
        if (!line) {
            return fail(errc::bad_version, disconnect_reason::protocol_error,
                        line.error() == errc::too_large ? "banner line too long"
                                                         : "banner line contains invalid characters");
        }
        if (!*line) {
            if (eof_)
                return fail(errc::connection_closed, "Connection closed by remote host during banner exchange");
            return {};
        }
        line_ = std::move(**line);
        if (line_.starts_with("SSH-")) {
            auto id = parse_identification(line_);
            if (!id)
                return fail(errc::bad_version, "Bad remote protocol version identification: '" +
                                                   printable(line_.substr(0, 100)) + "'");
            peer_id_ = std::move(*id);
            version_received_ = true;
            return {.type = transport_event_type::peer_version, .text = peer_id_.line};
        }
        // Servers may greet with text before their version (RFC 4253 §4.2); clients may not.
        if (!is_client())
            return fail(errc::bad_version, "Bad remote protocol version identification: '" +
                                               printable(line_.substr(0, 100)) + "'");
        if (++pre_version_lines_ > max_pre_version_lines)
            return fail(errc::bad_version, "banner exchange: too many pre-version lines");
        line_ = printable(line_);
        return {.type = transport_event_type::banner_line, .text = line_};
    }
}

transport_event transport::dispatch(const received_packet& pkt)
{
    const std::uint8_t type = pkt.payload[0];
    switch (type) {
    case msg::disconnect: return handle_disconnect(pkt.payload);
    case msg::kexinit: return handle_kexinit(pkt);
    case msg::newkeys: return handle_newkeys(pkt);
    default: break;
    }
    if (msg::is_kex_method_message(type))
        return handle_kex_message(pkt);
    // Strict kex admits nothing but the exchange itself until it completes;
    // an injected IGNORE is exactly the Terrapin prefix-truncation attack.
    if (strict_ && !established_)
        return fail(errc::strict_kex_violation, "strict KEX violation: unexpected packet type " +
                                                    std::to_string(type) + " (seqnr " + std::to_string(pkt.seq) + ")");
    switch (type) {
    case msg::ignore: return {};
    case msg::debug: {
        wire_reader r(pkt.payload.subspan(1));
        bool display = r.boolean();
        auto text = r.text(64 * 1024);
        r.text(256);
        if (!r.ok())
            return fail(errc::malformed, "malformed SSH_MSG_DEBUG");
        debug_text_ = printable(text, true);
        return {.type = transport_event_type::debug, .text = debug_text_, .always_display = display};
    }
    case msg::unimplemented: {
        wire_reader r(pkt.payload.subspan(1));
        auto seq = r.u32();
        if (!r.finish())
            return fail(errc::malformed, "malformed SSH_MSG_UNIMPLEMENTED");
        // A peer that refuses our KEXINIT would leave the exchange hanging forever.
        if (kex_.active && kex_.kexinit_sent && !kex_.peer_kexinit && seq == kex_.kexinit_seq)
            return fail(errc::protocol_error, "peer refused key re-exchange (SSH_MSG_UNIMPLEMENTED for KEXINIT)");
        return {.type = transport_event_type::unimplemented, .seq = seq};
    }
    case msg::ext_info: return handle_ext_info(pkt.payload);
    default: break;
    }
    if (type == msg::service_request || type == msg::service_accept || type >= msg::userauth_request) {
        if (!established_ && !kex_.newkeys_received)
            return fail(errc::protocol_error, "protocol error: message type " + std::to_string(type) +
                                                  " before key exchange completed");
        return {.type = transport_event_type::payload, .payload = pkt.payload, .seq = pkt.seq};
    }
    send_unimplemented(pkt.seq);
    return {};
}

transport_event transport::handle_disconnect(byte_span payload)
{
    wire_reader r(payload.subspan(1));
    auto reason = r.u32();
    auto text = r.text(64 * 1024);
    close_text_ = r.ok() ? printable(text) : std::string("(malformed disconnect message)");
    closed_ = true;
    close_event_ = {.type = transport_event_type::disconnected,
                    .text = close_text_,
                    .reason = static_cast<disconnect_reason>(reason),
                    .error = errc::peer_disconnected,
                    .local = false};
    return closed_event();
}

transport_event transport::handle_ext_info(byte_span payload)
{
    // As OpenSSH's kex_input_ext_info(): a server takes one EXT_INFO, a
    // client two (the second right before USERAUTH_SUCCESS, for
    // ext-info-in-auth@openssh.com), and only once keys are in use. Without
    // a count a peer could send them for ever and have every new name kept.
    const std::uint32_t max_ext_info = is_client() ? 2 : 1;
    if (!established_ && !kex_.newkeys_received)
        return fail(errc::protocol_error, "protocol error: SSH2_MSG_EXT_INFO before NEWKEYS");
    if (++ext_info_received_ > max_ext_info)
        return fail(errc::protocol_error, "too many SSH2_MSG_EXT_INFO messages sent by peer");
    wire_reader r(payload.subspan(1));
    const std::uint32_t n = r.u32();
    if (n >= max_extensions)
        return fail(errc::too_large, "SSH2_MSG_EXT_INFO with too many entries, expected <=1024, received " +
                                         std::to_string(n));
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        auto name = r.text(1024);
        auto value = r.text(64 * 1024);
        if (r.ok())
            peer_extensions_[std::string(name)] = std::string(value);
    }
    if (!r.finish())
        return fail(errc::malformed, "malformed SSH_MSG_EXT_INFO");
    return {.type = transport_event_type::ext_info};
}

// ---------------------------------------------------------------- sending

bool transport::may_send_now() const noexcept
{
    return !closed_ && (kex_.active ? kex_.newkeys_sent : established_);
}

void transport::flush_deferred()
{
    while (!deferred_.empty() && may_send_now()) {
        sender_.send(deferred_.front());
        ++stats_.packets_out;
        deferred_bytes_ -= deferred_.front().size();
        deferred_.pop_front();
    }
}

result<void> transport::send(byte_span payload)
{
    if (closed_)
        return errc::connection_closed;
    if (payload.empty())
        return errc::invalid_argument;
    if (payload.size() > max_payload_size)
        return errc::too_large;
    if (!may_send_now() || !deferred_.empty()) {
        deferred_.emplace_back(payload.begin(), payload.end());
        deferred_bytes_ += payload.size();
        return {};
    }
    sender_.send(payload);
    ++stats_.packets_out;
    maybe_rekey();
    return {};
}

mutable_byte_span transport::prepare_payload(std::size_t max)
{
    max = std::min(max, max_payload_size);
    staging_deferred_ = !may_send_now() || !deferred_.empty();
    if (staging_deferred_) {
        staging_.resize(max);
        return staging_;
    }
    return sender_.prepare_payload(max);
}

result<void> transport::commit_payload(std::size_t len)
{
    if (closed_)
        return errc::connection_closed;
    if (len == 0)
        return errc::invalid_argument;
    if (staging_deferred_) {
        deferred_.emplace_back(staging_.begin(), staging_.begin() + static_cast<std::ptrdiff_t>(len));
        deferred_bytes_ += len;
        return {};
    }
    sender_.commit_payload(len);
    ++stats_.packets_out;
    maybe_rekey();
    return {};
}

void transport::send_unimplemented(std::uint32_t seq)
{
    if (closed_)
        return;
    bytes m;
    wire_writer(m).u8(msg::unimplemented).u32(seq);
    sender_.send(m);
    ++stats_.packets_out;
}

void transport::send_ignore(std::size_t len)
{
    bytes m(1 + 4 + len);
    m[0] = msg::ignore;
    store_u32(m.data() + 1, static_cast<std::uint32_t>(len));
    rng_.fill(mutable_byte_span(m).subspan(5));
    (void)send(m);
}

void transport::send_debug(bool always_display, std::string_view message)
{
    bytes m;
    wire_writer(m).u8(msg::debug).boolean(always_display).string(message).string("");
    (void)send(m);
}

// ---------------------------------------------------------------- closing

void transport::disconnect(disconnect_reason reason, std::string_view description)
{
    close_with(errc::ok, reason, std::string(description));
}

transport_event transport::fail(errc e, std::string description)
{
    return fail(e, disconnect_reason_for(e), std::move(description));
}

transport_event transport::fail(errc e, disconnect_reason reason, std::string description)
{
    close_with(e, reason, std::move(description));
    return closed_event();
}

void transport::close_with(errc e, disconnect_reason reason, std::string description)
{
    if (closed_)
        return;
    closed_ = true;
    awaiting_host_key_ = false;
    close_text_ = std::move(description);
    // A peer that hung up cannot read a DISCONNECT; anyone else is told why.
    if (e != errc::connection_closed && e != errc::peer_disconnected) {
        bytes m;
        wire_writer(m).u8(msg::disconnect).u32(static_cast<std::uint32_t>(reason)).string(close_text_).string("");
        sender_.send(m);
        ++stats_.packets_out;
    }
    close_event_ = {.type = transport_event_type::disconnected,
                    .text = close_text_,
                    .reason = reason,
                    .error = e, // errc::ok: the application chose to disconnect
                    .local = true};
}

transport_event transport::closed_event()
{
    if (close_reported_)
        return {};
    close_reported_ = true;
    return close_event_;
}

} // namespace longhaul