#include "common/transport/transport.hpp"

#include "common/crypto/moduli.hpp"
#include "common/name_list.hpp"
#include "common/text.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul {

namespace {

// Input beyond one maximal packet plus a generous read is never needed.
constexpr std::size_t max_input_buffer = max_transport_input;
// OpenSSH rekeys before a direction's sequence number can wrap.
constexpr std::uint64_t max_packets_per_key = std::uint64_t(1) << 31;
// Bounds for peer EXT_INFO: fewer than 1024 entries (OpenSSH's limit).
constexpr std::uint32_t max_extensions = 1024;

// OpenSSH's default rekey volume: 2^(2*block bits) blocks for 128-bit block
// ciphers, 1 GiB for smaller blocks (chacha20-poly1305's 8).
std::uint64_t default_rekey_bytes(std::string_view cipher)
{
    const cipher_info* c = find_cipher(cipher);
    if (c == nullptr || c->block_size < 16)
        return std::uint64_t(1) << 30;
    return (std::uint64_t(1) << 32) * c->block_size;
}

std::size_t cipher_security_bytes(const cipher_info& c)
{
    // chacha20-poly1305 derives 64 key bytes but offers 256-bit security.
    return c.name == "chacha20-poly1305@openssh.com" ? 32 : c.key_size;
}

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

// ---------------------------------------------------------------- key exchange

namespace {

// `list` with `first` moved to its front (unchanged when absent).
std::string with_first(std::string_view list, std::string_view first)
{
    auto names = split_name_list(list);
    auto it = std::find(names.begin(), names.end(), first);
    if (it == names.end() || it == names.begin())
        return std::string(list);
    std::rotate(names.begin(), it, it + 1);
    return join_name_list(names);
}

} // namespace

void transport::send_kexinit()
{
    kexinit_message m;
    rng_.fill(m.cookie);
    std::string kex = config_.kex_algorithms;
    std::string host_key_algs = our_host_key_algorithms();
    if (established_) {
        // A re-exchange: what the last exchange chose first. Either side's
        // choice is the first of the client's names the server also
        // offers, so the outcome is the same; but both sides now name the
        // same algorithms first, so the client's guess below is right
        // (RFC 4253 §7) and the exchange costs one round trip less.
        kex = with_first(kex, algs_.kex);
        host_key_algs = with_first(host_key_algs, algs_.host_key);
    } else {
        // Pseudo-algorithms belong to the first KEXINIT only.
        if (is_client() && config_.ext_info)
            kex += std::string(",") + std::string(ext_info_c);
        if (config_.strict_kex)
            kex += std::string(",") + std::string(is_client() ? kex_strict_c : kex_strict_s);
    }
    m.lists[kex_algorithms] = kex;
    m.lists[server_host_key_algorithms] = host_key_algs;
    m.lists[encryption_c2s] = m.lists[encryption_s2c] = config_.ciphers;
    m.lists[mac_c2s] = m.lists[mac_s2c] = config_.macs;
    m.lists[compression_c2s] = m.lists[compression_s2c] = config_.compression;
    // A client re-keying guesses when the server's last KEXINIT named the
    // same kex and host key algorithms first as ours does now: the server
    // has the method's first message (our ephemeral key) with our KEXINIT,
    // and answers both at once. A sender pauses its data from its KEXINIT
    // to its NEWKEYS: without the guess two round trips (the server's
    // KEXINIT, then its reply), with it one; a server sending bulk data to
    // a client that re-keys first does not pause at all.
    // (Not in answer to the server's KEXINIT: then the method's first
    // message follows anyway, from the negotiation itself.)
    auto first_of = [](std::string_view list) {
        auto names = split_name_list(list);
        return names.empty() ? std::string_view() : names.front();
    };
    const bool guess = is_client() && established_ && !kex_.peer_kexinit && config_.guess_rekey &&
                       !peer_first_kex_.empty() && first_of(kex) == peer_first_kex_ &&
                       first_of(host_key_algs) == peer_first_host_key_ && peer_first_kex_ == algs_.kex &&
                       peer_first_host_key_ == algs_.host_key;
    std::vector<bytes> guessed;
    if (guess) {
        const kex_method* method = find_kex_method(algs_.kex);
        if (method != nullptr) {
            // The server's KEXINIT is not known yet: it is hashed when the
            // reply comes (set_server_kexinit).
            auto run = key_exchange::client(*method, make_kex_context(algs_, {}, {}));
            if (run && (*run)->start(guessed)) {
                kex_.run = std::move(*run);
                m.first_kex_packet_follows = true;
            } else {
                guessed.clear();
            }
        }
    }
    kex_.our_kexinit = m.encode();
    if (kex_.run)
        kex_.run->set_client_kexinit(kex_.our_kexinit);
    kex_.kexinit_seq = sender_.sequence();
    sender_.send(kex_.our_kexinit);
    ++stats_.packets_out;
    kex_.kexinit_sent = true;
    kex_.active = true;
    if (kex_.run) {
        kex_.guess_sent = true;
        ++stats_.kex_guesses;
        for (const auto& g : guessed) {
            sender_.send(g);
            ++stats_.packets_out;
        }
    }
}

kex_context transport::make_kex_context(const negotiated_algorithms& algs, bytes our_kexinit,
                                        bytes peer_kexinit) const
{
    kex_context ctx;
    ctx.v_c = is_client() ? local_id_ : peer_id_.line;
    ctx.v_s = is_client() ? peer_id_.line : local_id_;
    ctx.i_c = is_client() ? std::move(our_kexinit) : std::move(peer_kexinit);
    ctx.i_s = is_client() ? std::move(peer_kexinit) : std::move(our_kexinit);
    ctx.host_key_algorithm = algs.host_key;
    for (const auto* name : {&algs.cipher_c2s, &algs.cipher_s2c}) {
        const cipher_info* c = find_cipher(*name);
        ctx.we_need = std::max({ctx.we_need, c->key_size, c->block_size, c->iv_size});
        ctx.dh_need = std::max({ctx.dh_need, cipher_security_bytes(*c), c->block_size, c->iv_size});
    }
    for (const auto* name : {&algs.mac_c2s, &algs.mac_s2c}) {
        if (const mac_info* mi = name->empty() ? nullptr : find_mac(*name)) {
            ctx.we_need = std::max(ctx.we_need, mi->key_size);
            ctx.dh_need = std::max(ctx.dh_need, mi->key_size);
        }
    }
    return ctx;
}

transport_event transport::handle_kexinit(const received_packet& pkt)
{
    if (kex_.peer_kexinit)
        return fail(errc::protocol_error, "protocol error: duplicate SSH_MSG_KEXINIT");
    auto peer = kexinit_message::decode(pkt.payload);
    if (!peer)
        return fail(errc::malformed, "malformed SSH_MSG_KEXINIT");
    kex_.peer_kexinit = true;
    kex_.peer_kexinit_payload = to_bytes(pkt.payload);
    const auto& peer_kex = peer->lists[kex_algorithms];
    if (!established_) {
        if (is_client()) {
            strict_ = config_.strict_kex && name_list_contains(peer_kex, kex_strict_s);
        } else {
            strict_ = config_.strict_kex && name_list_contains(peer_kex, kex_strict_c);
            peer_wants_ext_info_ = name_list_contains(peer_kex, ext_info_c);
        }
        if (strict_ && pkt.seq != 0)
            return fail(errc::strict_kex_violation, "strict KEX violation: KEXINIT was not the first packet");
    }
    if (!kex_.kexinit_sent)
        send_kexinit();

    auto ours = kexinit_message::decode(kex_.our_kexinit);
    const kexinit_message& client = is_client() ? *ours : *peer;
    const kexinit_message& server = is_client() ? *peer : *ours;
    negotiation_failure nf;
    auto algs = negotiate_algorithms(client, server, is_client(), nf);
    if (!algs)
        return fail(errc::no_matching_algorithm, "no matching " + std::string(kexinit_list_title(nf.list)) +
                                                     " found. Their offer: " + printable(nf.peer_offer));
    kex_.algs = *algs;
    if (peer->first_kex_packet_follows && !kex_guess_matches(client, server))
        kex_.ignore_guess = true;
    if (is_client()) {
        auto firsts = [&](kexinit_list l) {
            auto names = split_name_list(peer->lists[l]);
            return names.empty() ? std::string() : std::string(names.front());
        };
        peer_first_kex_ = firsts(kex_algorithms);
        peer_first_host_key_ = firsts(server_host_key_algorithms);
    }
    if (kex_.guess_sent) {
        // Our guess was right when both sides named the same algorithms
        // first (then the negotiation chose them): the server takes the
        // message we sent with our KEXINIT. Otherwise it drops it, and the
        // negotiated method starts afresh below.
        if (kex_guess_matches(client, server) && algs->kex == algs_.kex && algs->host_key == algs_.host_key) {
            kex_.run->set_server_kexinit(kex_.peer_kexinit_payload);
            ++stats_.kex_guesses_right;
            return {};
        }
        kex_.run.reset();
    }

    kex_context ctx = make_kex_context(*algs, kex_.our_kexinit, kex_.peer_kexinit_payload);
    const kex_method* method = find_kex_method(algs->kex);
    result<std::unique_ptr<key_exchange>> run = errc::unsupported;
    if (is_client()) {
        run = key_exchange::client(*method, std::move(ctx));
    } else {
        const host_key_ref key = host_key_for(algs->host_key);
        if (key.key == nullptr)
            return fail(errc::no_matching_algorithm, "no host key for " + algs->host_key);
        host_key_sign_function sign;
        if (key.local != nullptr) {
            sign = [k = key.local](std::string_view alg, byte_span data) { return k->sign(alg, data); };
        } else {
            // config_ lives as long as the core, and the exchange is the core's.
            sign = [this, k = key.key](std::string_view alg, byte_span data) -> result<bytes> {
                auto sig = config_.host_key_signer(*k, alg, data);
                // Checked here, where the failure can be named, rather than
                // by the client as "incorrect signature": the signer is in
                // another process and may answer for the wrong key.
                if (sig && !k->verify(alg, data, *sig))
                    return errc::signature_invalid;
                return sig;
            };
        }
        gex_group_provider groups = config_.gex_groups;
        if (!groups)
            groups = [this](std::uint32_t min, std::uint32_t preferred, std::uint32_t max) -> std::optional<dh_group> {
                // No moduli file: sshd's built-in fallback groups.
                return choose_gex_group({}, min, preferred, max, rng_).group;
            };
        if (key.cert != nullptr)
            ctx.server_host_key_blob = key.cert->blob();
        run = key_exchange::server(*method, std::move(ctx), *key.key, std::move(sign), std::move(groups));
    }
    if (!run)
        return fail(run.error(), "cannot start key exchange");
    kex_.run = std::move(*run);
    std::vector<bytes> out;
    if (auto s = kex_.run->start(out); !s)
        return fail(s.error(), kex_.run->failure());
    for (const auto& m : out) {
        sender_.send(m);
        ++stats_.packets_out;
    }
    return {};
}

transport_event transport::handle_kex_message(const received_packet& pkt)
{
    if (!kex_.active || !kex_.run || kex_.hash_done) {
        if (strict_ && !established_)
            return fail(errc::strict_kex_violation, "strict KEX violation: unexpected packet type " +
                                                        std::to_string(pkt.payload[0]));
        if (kex_.active)
            return fail(errc::protocol_error, "protocol error: unexpected key exchange message type " +
                                                  std::to_string(pkt.payload[0]));
        send_unimplemented(pkt.seq);
        return {};
    }
    if (kex_.ignore_guess) {
        kex_.ignore_guess = false;
        return {};
    }
    std::vector<bytes> out;
    auto done = kex_.run->handle(pkt.payload, out);
    for (const auto& m : out) {
        sender_.send(m);
        ++stats_.packets_out;
    }
    if (!done) {
        std::string why = kex_.run->failure().empty() ? std::string(to_string(done.error())) : kex_.run->failure();
        return fail(done.error(), "key exchange failed: " + why);
    }
    if (!*done)
        return {};
    return after_exchange_hash();
}

transport_event transport::after_exchange_hash()
{
    kex_.hash_done = true;
    auto& outcome = kex_.run->outcome();
    if (session_id_.empty()) {
        session_id_ = outcome.exchange_hash;
        server_signature_ = outcome.host_key_signature;
    }
    if (is_client()) {
        if (!host_key_) {
            host_key_ = outcome.host_key;
            host_certificate_ = outcome.host_certificate;
            awaiting_host_key_ = true;
            return {.type = transport_event_type::host_key,
                    .host_key = &*host_key_,
                    .host_certificate = host_certificate_ ? &*host_certificate_ : nullptr};
        }
        // A re-exchange must show what the caller accepted: the same key,
        // and the same certificate or none, as OpenSSH's check against its
        // initial host key.
        const bool same_cert = outcome.host_certificate.has_value() == host_certificate_.has_value() &&
                               (!host_certificate_ || outcome.host_certificate->blob() == host_certificate_->blob());
        if (!(*outcome.host_key == *host_key_) || !same_cert)
            return fail(errc::host_key_rejected, "server host key changed during key re-exchange");
    } else if (!host_key_) {
        // Kept for a hand-off (transport_state::host_key) and for
        // authentication that binds to it (publickey-hostbound, which names
        // the certificate when one was sent).
        host_key_ = outcome.host_key;
        if (const certificate* cert = host_key_for(kex_.algs.host_key).cert)
            host_certificate_ = *cert;
    }
    send_newkeys();
    return {};
}

void transport::accept_host_key()
{
    if (!awaiting_host_key_ || closed_)
        return;
    awaiting_host_key_ = false;
    send_newkeys();
}

void transport::reject_host_key(std::string_view why)
{
    if (!awaiting_host_key_ || closed_)
        return;
    awaiting_host_key_ = false;
    close_with(errc::host_key_rejected, disconnect_reason::host_key_not_verifiable,
         why.empty() ? std::string("Host key verification failed.") : std::string(why));
}

void transport::send_newkeys()
{
    const std::uint8_t m = msg::newkeys;
    sender_.send(byte_span(&m, 1));
    ++stats_.packets_out;
    kex_.newkeys_sent = true;
    if (!install_keys(true))
        return;
    if (strict_)
        sender_.reset_sequence();
    if (!is_client() && !established_ && peer_wants_ext_info_ && config_.ext_info)
        send_ext_info();
    if (kex_.newkeys_received)
        finish_kex();
    flush_deferred();
}

void transport::send_ext_info()
{
    bytes m;
    wire_writer w(m);
    std::uint32_t n = (config_.server_sig_algs.empty() ? 0 : 1) + static_cast<std::uint32_t>(config_.extra_extensions.size());
    w.u8(msg::ext_info).u32(n);
    if (!config_.server_sig_algs.empty())
        w.string("server-sig-algs").string(config_.server_sig_algs);
    for (const auto& [name, value] : config_.extra_extensions)
        w.string(name).string(value);
    sender_.send(m);
    ++stats_.packets_out;
}

transport_event transport::handle_newkeys(const received_packet& pkt)
{
    if (!kex_.active || !kex_.hash_done || kex_.newkeys_received)
        return fail(errc::protocol_error, "protocol error: unexpected SSH_MSG_NEWKEYS");
    if (pkt.payload.size() != 1)
        return fail(errc::malformed, "malformed SSH_MSG_NEWKEYS");
    kex_.newkeys_received = true;
    if (!install_keys(false))
        return closed_event();
    if (strict_)
        receiver_.reset_sequence();
    if (!kex_.newkeys_sent)
        return {};
    finish_kex();
    kex_complete_pending_ = false;
    return {.type = transport_event_type::kex_complete};
}

void transport::finish_kex()
{
    algs_ = kex_.algs;
    kex_ = kex_state{};
    established_ = true;
    ++stats_.key_exchanges;
    last_kex_time_ = now_;
    kex_complete_pending_ = true;
}

bool transport::install_keys(bool outgoing)
{
    const auto& algs = kex_.algs;
    const bool c2s = is_client() == outgoing;
    const std::string& cipher = c2s ? algs.cipher_c2s : algs.cipher_s2c;
    const std::string& mac = c2s ? algs.mac_c2s : algs.mac_s2c;
    const std::string& compression = c2s ? algs.compression_c2s : algs.compression_s2c;
    const cipher_info* ci = find_cipher(cipher);
    const mac_info* mi = mac.empty() ? nullptr : find_mac(mac);
    auto& outcome = kex_.run->outcome();
    const hash_alg h = kex_.run->hash();
    auto derive = [&](char letter, std::size_t size) {
        return derive_key(h, outcome.shared_secret, outcome.exchange_hash, session_id_, letter, size);
    };
    direction_keys keys;
    keys.iv = derive(c2s ? 'A' : 'B', ci->iv_size);
    keys.enc_key = derive(c2s ? 'C' : 'D', ci->key_size);
    if (mi != nullptr)
        keys.mac_key = derive(c2s ? 'E' : 'F', mi->key_size);
    auto pc = make_packet_cipher(cipher, mac, keys, outgoing ? cipher_direction::seal : cipher_direction::open);
    if (!pc) {
        close_with(pc.error(), disconnect_reason_for(pc.error()), "cannot initialise cipher " + cipher);
        return false;
    }
    (outgoing ? out_keys_ : in_keys_) = std::move(keys);
    const std::uint64_t limit = config_.rekey_limit_bytes != 0
                                    ? std::min(config_.rekey_limit_bytes, default_rekey_bytes(cipher))
                                    : default_rekey_bytes(cipher);
    const bool enable_zlib = compression == "zlib" || (compression == "zlib@openssh.com" && authenticated_);
    if (outgoing) {
        sender_.set_cipher(std::move(*pc));
        rekey_limit_out_ = limit;
        if (compression == "none")
            sender_.set_compressor(nullptr);
        else if (enable_zlib && !sender_.compressing())
            sender_.set_compressor(std::make_unique<compressor>());
    } else {
        receiver_.set_cipher(std::move(*pc));
        rekey_limit_in_ = limit;
        if (compression == "none")
            receiver_.set_decompressor(nullptr);
        else if (enable_zlib && !receiver_.decompressing())
            receiver_.set_decompressor(std::make_unique<decompressor>());
    }
    return true;
}

void transport::set_crypto_engine(crypto_engine* engine)
{
    crypto_engine_ = engine;
    if (authenticated_ || engine == nullptr) {
        sender_.set_crypto_engine(engine);
        receiver_.set_crypto_engine(engine);
    }
}

void transport::user_authenticated()
{
    authenticated_ = true;
    if (crypto_engine_ != nullptr) {
        sender_.set_crypto_engine(crypto_engine_);
        receiver_.set_crypto_engine(crypto_engine_);
    }
    if (algs_.compression_c2s == "zlib@openssh.com" || algs_.compression_s2c == "zlib@openssh.com") {
        const bool out_zlib = (is_client() ? algs_.compression_c2s : algs_.compression_s2c) == "zlib@openssh.com";
        const bool in_zlib = (is_client() ? algs_.compression_s2c : algs_.compression_c2s) == "zlib@openssh.com";
        if (out_zlib && !sender_.compressing())
            sender_.set_compressor(std::make_unique<compressor>());
        if (in_zlib && !receiver_.decompressing())
            receiver_.set_decompressor(std::make_unique<decompressor>());
    }
}

void transport::request_rekey()
{
    if (!closed_ && established_ && !kex_.active)
        send_kexinit();
}

void transport::maybe_rekey()
{
    if (closed_ || !established_ || kex_.active || !authenticated_)
        return;
    const auto& out = sender_.usage();
    const auto& in = receiver_.usage();
    // What we receive re-keys a sixteenth early (64 MiB of a GiB, more than
    // a 1 Gbit/s x 200 ms path holds). A bulk sender would otherwise reach
    // the limit first (its count leads ours by what is in flight) and start
    // the exchange itself: a client waits for the server's KEXINIT, then
    // for the reply to its key (two round trips without data), a server for
    // the client's KEXINIT and key (one). Started by the receiver, the
    // exchange costs a sending client one round trip (the reply) and a
    // sending server none when our guess is right (see send_kexinit).
    bool due = out.bytes >= rekey_limit_out_ || in.bytes >= rekey_limit_in_ - rekey_limit_in_ / 16 ||
               out.packets >= max_packets_per_key || in.packets >= max_packets_per_key;
    if (config_.rekey_interval.count() > 0 && now_ >= last_kex_time_ + config_.rekey_interval)
        due = true;
    if (due)
        send_kexinit();
}

void transport::advance_time(steady_time now)
{
    now_ = now;
    maybe_rekey();
}

std::optional<steady_time> transport::next_deadline() const
{
    if (config_.rekey_interval.count() <= 0 || !established_ || kex_.active || closed_ || !authenticated_)
        return std::nullopt;
    return last_kex_time_ + config_.rekey_interval;
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
