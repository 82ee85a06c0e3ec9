// The transport core's key exchange: KEXINIT out and in (with the
// client's guess on a re-exchange), the negotiated method's messages, the
// host key check, NEWKEYS and EXT_INFO. Apart from transport.cpp, which
// keeps input, dispatch, sending and closing; new keys and the re-key
// accounting are in transport_rekey.cpp.
#include "common/transport/transport.hpp"

#include "common/crypto/moduli.hpp"
#include "common/name_list.hpp"
#include "common/text.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul {

namespace {

std::size_t cipher_security_bytes(const cipher_info& c)
{
    // chacha20-poly1305 derives 64 key bytes but offers 256-bit security.
    return c.name == "chacha20-poly1305@openssh.com" ? 32 : c.key_size;
}

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

} // namespace longhaul
