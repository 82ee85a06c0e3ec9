#include "common/transport/key_exchange.hpp"

#include "common/crypto/hash.hpp"
#include "common/crypto/moduli.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "common/transport/messages.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul {

namespace {

// K as the exchange hash and the key derivation take it: an mpint, but a
// string for the hybrid KEM (its K is a hash output, not a number).
secret_bytes encode_shared_secret(kex_family family, const secret_bytes& k)
{
    bytes tmp;
    if (family == kex_family::hybrid_kem)
        wire_writer(tmp).string(k.span());
    else
        wire_writer(tmp).mpint(k);
    secret_bytes out(tmp);
    cleanse(tmp);
    return out;
}

// Public values travel as strings except in finite-field Diffie-Hellman.
bool public_values_are_strings(kex_family family) noexcept
{
    return family == kex_family::ecdh || family == kex_family::hybrid_kem;
}

} // namespace

key_exchange::key_exchange(const kex_method& method, kex_context ctx, bool is_server)
    : method_(method), ctx_(std::move(ctx)), server_(is_server), expect_(0)
{
}

key_exchange::~key_exchange() = default;

result<std::unique_ptr<key_exchange>> key_exchange::client(const kex_method& method, kex_context ctx)
{
    return std::unique_ptr<key_exchange>(new key_exchange(method, std::move(ctx), false));
}

result<std::unique_ptr<key_exchange>> key_exchange::server(const kex_method& method, kex_context ctx,
                                                           const private_key& host_key, gex_group_provider groups)
{
    // The caller keeps `host_key` alive while the exchange runs, as this
    // form always required.
    const private_key* key = &host_key;
    return server(method, std::move(ctx), host_key.public_part(),
                  [key](std::string_view alg, byte_span data) { return key->sign(alg, data); }, std::move(groups));
}

result<std::unique_ptr<key_exchange>> key_exchange::server(const kex_method& method, kex_context ctx,
                                                           public_key host_key, host_key_sign_function sign,
                                                           gex_group_provider groups)
{
    if (host_key.empty() || !sign)
        return errc::invalid_argument;
    std::unique_ptr<key_exchange> k(new key_exchange(method, std::move(ctx), true));
    k->host_key_ = std::move(host_key);
    k->sign_ = std::move(sign);
    k->groups_ = std::move(groups);
    k->expect_ = method.family == kex_family::dh_gex ? msg::kex_dh_gex_request : msg::kexdh_init;
    return k;
}

result<void> key_exchange::fail(errc e, std::string why)
{
    failure_ = std::move(why);
    return e;
}

result<void> key_exchange::make_agreement(const dh_group* group)
{
    result<std::unique_ptr<key_agreement>> a = errc::unsupported;
    switch (method_.family) {
    case kex_family::ecdh:
        a = method_.x25519 ? make_x25519_agreement() : make_ecdh_agreement(method_.curve);
        break;
    case kex_family::hybrid_kem:
        a = make_hybrid_kem_agreement(method_.kem, server_);
        break;
    case kex_family::dh_fixed:
    case kex_family::dh_gex:
    {
        auto bits = dh_private_exponent_bits(ctx_.we_need, dh_group_bits(*group));
        if (!bits)
            return fail(bits.error(), "DH group too small for the negotiated ciphers");
        a = make_dh_agreement(*group, *bits);
        break;
    }
    }
    if (!a)
        return fail(a.error(), "cannot create key agreement");
    agreement_ = std::move(*a);
    return {};
}

void key_exchange::write_public(wire_writer& w) const
{
    if (public_values_are_strings(method_.family))
        w.string(agreement_->public_value());
    else
        w.mpint(agreement_->public_value());
}

byte_span key_exchange::read_public(wire_reader& r) const
{
    // The longest string: mlkem768x25519's C_INIT (1216 bytes; sntrup761's
    // is 1190); ECDH's points are at most 133.
    return public_values_are_strings(method_.family) ? r.string(2048) : r.mpint();
}

bytes key_exchange::exchange_hash(byte_span host_key_blob, byte_span client_public, byte_span server_public) const
{
    bytes buf;
    wire_writer w(buf);
    w.string(ctx_.v_c).string(ctx_.v_s).string(ctx_.i_c).string(ctx_.i_s).string(host_key_blob);
    if (method_.family == kex_family::dh_gex) {
        w.u32(gex_min_).u32(gex_n_).u32(gex_max_).mpint(gex_group_.p).mpint(gex_group_.g);
    }
    if (public_values_are_strings(method_.family))
        w.string(client_public).string(server_public);
    else
        w.mpint(client_public).mpint(server_public);
    w.raw(outcome_.shared_secret);
    bytes h = digest(method_.hash, buf);
    cleanse(buf);
    return h;
}

result<void> key_exchange::start(std::vector<bytes>& out)
{
    if (server_)
        return {};
    bytes m;
    wire_writer w(m);
    if (method_.family == kex_family::dh_gex) {
        gex_min_ = gex_min_bits;
        gex_n_ = dh_estimate(static_cast<std::uint32_t>(ctx_.dh_need * 8));
        gex_max_ = gex_max_bits;
        w.u8(msg::kex_dh_gex_request).u32(gex_min_).u32(gex_n_).u32(gex_max_);
        expect_ = msg::kex_dh_gex_group;
    } else {
        if (auto r = make_agreement(method_.family == kex_family::dh_fixed ? method_.group() : nullptr); !r)
            return r;
        w.u8(msg::kexdh_init);
        write_public(w);
        expect_ = msg::kexdh_reply;
    }
    out.push_back(std::move(m));
    return {};
}

result<bool> key_exchange::handle(byte_span payload, std::vector<bytes>& out)
{
    if (payload.empty() || payload[0] != expect_) {
        failure_ = "unexpected key exchange message " + std::to_string(payload.empty() ? 0 : payload[0]);
        return errc::protocol_error;
    }
    if (!server_) {
        if (method_.family == kex_family::dh_gex && expect_ == msg::kex_dh_gex_group) {
            if (auto r = client_group(payload, out); !r)
                return r.error();
            return false;
        }
        return client_reply(payload);
    }
    if (method_.family == kex_family::dh_gex && expect_ == msg::kex_dh_gex_request) {
        if (auto r = server_gex_request(payload, out); !r)
            return r.error();
        return false;
    }
    return server_init(payload, out);
}

result<void> key_exchange::client_group(byte_span payload, std::vector<bytes>& out)
{
    wire_reader r(payload);
    r.u8();
    auto p = r.mpint();
    auto g = r.mpint();
    if (!r.finish())
        return fail(errc::malformed, "malformed DH group exchange group message");
    dh_group group{to_bytes(p), to_bytes(g)};
    if (!validate_gex_group(group, gex_min_, gex_max_))
        return fail(errc::invalid_argument, "DH group exchange: server sent a " + std::to_string(dh_group_bits(group)) +
                                                "-bit group outside " + std::to_string(gex_min_) + ".." +
                                                std::to_string(gex_max_) + " or with invalid parameters");
    gex_group_ = std::move(group);
    if (auto a = make_agreement(&gex_group_); !a)
        return a;
    bytes m;
    wire_writer w(m);
    w.u8(msg::kex_dh_gex_init);
    write_public(w);
    out.push_back(std::move(m));
    expect_ = msg::kex_dh_gex_reply;
    return {};
}

result<bool> key_exchange::client_reply(byte_span payload)
{
    wire_reader r(payload);
    r.u8();
    auto host_blob = r.string(16 * 1024);
    auto server_public = read_public(r);
    auto signature = r.string(16 * 1024);
    if (!r.finish()) {
        failure_ = "malformed key exchange reply";
        return errc::malformed;
    }
    // A certificate algorithm: K_S is the certificate, the exchange hash
    // is signed by the key it certifies. Its CA signature is checked here,
    // with any algorithm the CA key can make, a security key's too
    // (OpenSSH's cert_parse does the same); CASignatureAlgorithms and the
    // CA's trust are the caller's.
    std::optional<certificate> cert;
    if (is_certificate_algorithm(ctx_.host_key_algorithm)) {
        auto c = certificate::from_blob(host_blob);
        if (!c) {
            failure_ = "server host certificate could not be parsed";
            return c.error();
        }
        if (!c->verify_signature(certificate::any_signature_algorithm())) {
            failure_ = "server host certificate: invalid CA signature";
            return errc::signature_invalid;
        }
        cert = std::move(*c);
    }
    auto key = cert ? result<public_key>(cert->key()) : public_key::from_blob(host_blob);
    if (!key) {
        failure_ = "server host key could not be parsed";
        return key.error();
    }
    auto want = host_key_type_for_algorithm(ctx_.host_key_algorithm);
    if (!want || *want != key->type()) {
        failure_ = "server host key type " + std::string(key->type_name()) + " does not match negotiated " +
                   ctx_.host_key_algorithm;
        return errc::key_type_mismatch;
    }
    auto k = agreement_->derive(server_public);
    if (!k) {
        failure_ = "invalid server key exchange value";
        return k.error();
    }
    outcome_.shared_secret = encode_shared_secret(method_.family, *k);
    outcome_.exchange_hash = exchange_hash(host_blob, agreement_->public_value(), server_public);
    if (auto v = key->verify(host_key_signature_algorithm(ctx_.host_key_algorithm), outcome_.exchange_hash, signature);
        !v) {
        failure_ = "incorrect signature on the key exchange hash";
        return errc::signature_invalid;
    }
    outcome_.host_key = std::move(*key);
    outcome_.host_certificate = std::move(cert);
    outcome_.host_key_signature.assign(signature.begin(), signature.end());
    agreement_.reset();
    expect_ = 0;
    return true;
}

result<void> key_exchange::server_gex_request(byte_span payload, std::vector<bytes>& out)
{
    wire_reader r(payload);
    r.u8();
    gex_min_ = r.u32();
    gex_n_ = r.u32();
    gex_max_ = r.u32();
    if (!r.finish())
        return fail(errc::malformed, "malformed DH group exchange request");
    // Clamped as sshd does; the hash covers what the client sent.
    auto req = clamp_gex_request(gex_min_, gex_n_, gex_max_);
    if (!req)
        return fail(errc::invalid_argument, "DH group exchange request out of range: " + std::to_string(gex_min_) +
                                                "/" + std::to_string(gex_n_) + "/" + std::to_string(gex_max_));
    std::optional<dh_group> group = groups_(req->min_bits, req->preferred_bits, req->max_bits);
    if (!group)
        return fail(errc::no_matching_algorithm, "no DH group available for the requested size");
    gex_group_ = std::move(*group);
    if (auto a = make_agreement(&gex_group_); !a)
        return a;
    bytes m;
    wire_writer(m).u8(msg::kex_dh_gex_group).mpint(gex_group_.p).mpint(gex_group_.g);
    out.push_back(std::move(m));
    expect_ = msg::kex_dh_gex_init;
    return {};
}

result<bool> key_exchange::server_init(byte_span payload, std::vector<bytes>& out)
{
    wire_reader r(payload);
    r.u8();
    auto client_public = read_public(r);
    if (!r.finish()) {
        failure_ = "malformed key exchange init";
        return errc::malformed;
    }
    if (!agreement_) {
        if (auto a = make_agreement(method_.family == kex_family::dh_fixed ? method_.group() : nullptr); !a)
            return a.error();
    }
    auto k = agreement_->derive(client_public);
    if (!k) {
        failure_ = "invalid client key exchange value";
        return k.error();
    }
    outcome_.shared_secret = encode_shared_secret(method_.family, *k);
    const bytes& host_blob = ctx_.server_host_key_blob.empty() ? host_key_.blob() : ctx_.server_host_key_blob;
    outcome_.exchange_hash = exchange_hash(host_blob, client_public, agreement_->public_value());
    auto sig = sign_(host_key_signature_algorithm(ctx_.host_key_algorithm), outcome_.exchange_hash);
    if (!sig) {
        failure_ = "cannot sign with the host key";
        return sig.error();
    }
    // A signer elsewhere (sshd's monitor) answers with bytes we forward to
    // the client: an empty blob would only fail there, less clearly.
    if (sig->empty()) {
        failure_ = "cannot sign with the host key: empty signature";
        return errc::signature_invalid;
    }
    outcome_.host_key = host_key_;
    bytes m;
    wire_writer w(m);
    w.u8(method_.family == kex_family::dh_gex ? msg::kex_dh_gex_reply : msg::kexdh_reply).string(host_blob);
    write_public(w);
    w.string(*sig);
    out.push_back(std::move(m));
    agreement_.reset();
    expect_ = 0;
    return true;
}

secret_bytes derive_key(hash_alg hash, byte_span encoded_shared_secret, byte_span exchange_hash, byte_span session_id,
                        char letter, std::size_t size)
{
    secret_bytes out(size);
    const std::size_t dlen = digest_size(hash);
    secret_bytes block(dlen);
    hasher h(hash);
    const std::uint8_t x = static_cast<std::uint8_t>(letter);
    h.update(encoded_shared_secret).update(exchange_hash).update(byte_span(&x, 1)).update(session_id);
    h.finish_into(block.span());
    std::size_t have = std::min(size, dlen);
    std::copy_n(block.data(), have, out.data());
    // K_n = HASH(K || H || K_1 || ... || K_{n-1}) until enough bytes exist.
    while (have < size) {
        h.reset();
        h.update(encoded_shared_secret).update(exchange_hash).update(byte_span(out.data(), have));
        h.finish_into(block.span());
        std::size_t n = std::min(size - have, dlen);
        std::copy_n(block.data(), n, out.data() + have);
        have += n;
    }
    return out;
}

} // namespace longhaul
