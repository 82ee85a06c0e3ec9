// The transport core's hand-off to another process (sshd's privilege
// separation): export_state(), the import constructor, and host key
// signatures moved to a signer elsewhere. Apart from transport.cpp so
// that file stays the protocol's state machine.
#include "common/transport/transport.hpp"

#include "common/crypto/packet_cipher.hpp"

#include <algorithm>

namespace longhaul {

transport::transport(transport_config config, random_source& rng, steady_time now, transport_state state)
    : config_(std::move(config)), rng_(rng), now_(now), last_kex_time_(now), in_(max_transport_input), sender_(rng)
{
    import_state(state);
}

void transport::import_state(transport_state& state)
{
    // Closed without a DISCONNECT: there are no keys to send one under.
    auto refuse = [this](errc e, std::string why) {
        closed_ = true;
        close_text_ = std::move(why);
        close_event_ = {.type = transport_event_type::disconnected,
                        .text = close_text_,
                        .reason = disconnect_reason_for(e),
                        .error = e,
                        .local = true};
    };
    if (state.role != config_.role)
        return refuse(errc::invalid_argument, "imported transport state is for the other role");
    if (auto v = validate_transport_state(state); !v)
        return refuse(v.error(), "invalid imported transport state: " + std::string(to_string(v.error())));
    auto peer = parse_identification(state.peer_identification);
    if (!peer)
        return refuse(errc::invalid_argument, "invalid imported transport state: peer identification");

    const auto& a = state.algorithms;
    const bool client = is_client();
    auto out = make_packet_cipher(client ? a.cipher_c2s : a.cipher_s2c, client ? a.mac_c2s : a.mac_s2c,
                                  state.out.keys, cipher_direction::seal);
    auto in = make_packet_cipher(client ? a.cipher_s2c : a.cipher_c2s, client ? a.mac_s2c : a.mac_c2s,
                                 state.in.keys, cipher_direction::open);
    if (!out || !in)
        return refuse(out ? in.error() : out.error(), "cannot initialise the imported ciphers");

    local_id_ = std::move(state.local_identification);
    peer_id_ = std::move(*peer);
    version_received_ = true;
    algs_ = a;
    established_ = true;
    strict_ = state.strict_kex;
    peer_wants_ext_info_ = state.peer_wants_ext_info;
    authenticated_ = state.authenticated;
    session_id_ = std::move(state.session_id);
    host_key_ = std::move(state.host_key);
    peer_extensions_ = std::move(state.peer_extensions);
    ext_info_received_ = state.ext_info_received;
    stats_ = state.stats;

    sender_.set_cipher(std::move(*out));
    sender_.resume(state.out.position, state.out.usage);
    // The importer's own RekeyLimit: sshd's post-authentication process
    // gives the user's (a Match block's), which applies from here on.
    rekey_limit_out_ = rekey_limit_for(client ? a.cipher_c2s : a.cipher_s2c);
    out_keys_ = std::move(state.out.keys);
    receiver_.set_cipher(std::move(*in));
    receiver_.resume(state.in.position, state.in.usage);
    rekey_limit_in_ = rekey_limit_for(client ? a.cipher_s2c : a.cipher_c2s);
    in_keys_ = std::move(state.in.keys);
    // The exporter's streams had taken nothing (export_state() refuses
    // otherwise), so fresh ones continue them exactly.
    if (state.out.compression)
        sender_.set_compressor(std::make_unique<compressor>());
    if (state.in.compression)
        receiver_.set_decompressor(std::make_unique<decompressor>());
    // Already counted in stats_.bytes_in by the exporter.
    in_.append(state.unread_input);
}

result<void> transport::use_host_key_signer(
    std::function<result<bytes>(const public_key& key, std::string_view sig_alg, byte_span data)> signer)
{
    if (kex_.active)
        return errc::protocol_error;
    if (!config_.host_key_signer)
        for (const auto& k : config_.host_keys)
            if (k)
                config_.host_public_keys.push_back(k->public_part());
    config_.host_keys.clear();
    config_.host_key_signer = std::move(signer);
    return {};
}

std::string_view transport::export_refusal() const noexcept { return export_blocker().second; }

// What keeps the core from being handed off, the most lasting reason first:
// draining the output does not end a key exchange.
std::pair<errc, std::string_view> transport::export_blocker() const noexcept
{
    if (closed_)
        return {errc::connection_closed, "the connection is closed"};
    if (eof_)
        return {errc::connection_closed, "the input has ended"};
    if (!established_)
        return {errc::protocol_error, "the first key exchange has not completed"};
    if (kex_.active)
        return {errc::protocol_error, "a key exchange is in progress"};
    if (kex_complete_pending_)
        return {errc::protocol_error, "a kex_complete event has not been polled"};
    if (sender_.compression_used() || receiver_.compression_used())
        return {errc::unsupported, "a compression stream has taken data"};
    if (sender_.output().size() != 0 || !deferred_.empty())
        return {errc::incomplete, "output is queued"};
    if (receiver_.opened_ahead() != 0)
        return {errc::incomplete, "packets were opened ahead"};
    return {errc::ok, {}};
}

result<transport_state> transport::export_state() const
{
    if (auto [e, why] = export_blocker(); e != errc::ok)
        return e;
    transport_state s;
    s.role = config_.role;
    s.local_identification = local_id_;
    s.peer_identification = peer_id_.line;
    s.algorithms = algs_;
    s.session_id = session_id_;
    s.strict_kex = strict_;
    s.peer_wants_ext_info = peer_wants_ext_info_;
    s.peer_extensions = peer_extensions_;
    s.ext_info_received = ext_info_received_;
    s.host_key = host_key_;
    s.authenticated = authenticated_;
    s.out = {.keys = out_keys_,
             .position = sender_.position(),
             .usage = sender_.usage(),
             .compression = sender_.compressing()};
    s.in = {.keys = in_keys_,
            .position = receiver_.position(),
            .usage = receiver_.usage(),
            .compression = receiver_.decompressing()};
    s.stats = stats_;
    // The packet last handed out is still at the front until released.
    s.unread_input = to_bytes(in_.data().subspan(receiver_.delivered_bytes()));
    return s;
}

} // namespace longhaul
