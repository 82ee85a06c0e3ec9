#include "common/auth/agent_protocol.hpp"

#include "common/wire.hpp"

#include <algorithm>

namespace longhaul::agent {

std::uint32_t sign_flags_for(std::string_view algorithm) noexcept
{
    if (algorithm == "rsa-sha2-256")
        return rsa_sha2_256;
    if (algorithm == "rsa-sha2-512")
        return rsa_sha2_512;
    return 0;
}

bool is_failure(std::uint8_t type) noexcept
{
    return type == failure || type == extension_failure || type == ssh2_failure || type == ssh_com_failure;
}

namespace {

bytes frame(const bytes& body)
{
    bytes out;
    out.reserve(body.size() + 4);
    wire_writer(out).u32(static_cast<std::uint32_t>(body.size())).raw(body);
    return out;
}

// The answer's type byte: unsupported for any of the agent's failure codes,
// malformed for anything but `expected`.
result<void> expect_answer(wire_reader& r, std::uint8_t expected)
{
    const std::uint8_t type = r.u8();
    if (!r.ok())
        return r.error();
    if (is_failure(type))
        return errc::unsupported;
    if (type != expected)
        return errc::malformed;
    return {};
}

// frame() for messages holding secrets: the buffer is sized once (no
// reallocation leaves copies behind) and wiped after the copy.
secret_bytes frame_secret(bytes& body)
{
    secret_bytes out(body.size() + 4);
    store_u32(out.data(), static_cast<std::uint32_t>(body.size()));
    std::copy(body.begin(), body.end(), out.data() + 4);
    cleanse(body.data(), body.size());
    return out;
}

} // namespace

namespace {

// The bytes the constraints take, so that a message holding a secret is
// sized up front (growing would leave copies of the secret behind).
std::size_t constraints_size(const key_constraints& constraints)
{
    std::size_t size = 16;
    if (constraints.sk_provider)
        size += 1 + 4 + sk_provider_extension.size() + 4 + constraints.sk_provider->size();
    if (!constraints.destinations.empty())
        size += 1 + 4 + restrict_destination_extension.size() + 4;
    for (const auto& c : constraints.destinations) {
        size += 4 + 4;
        for (const destination_hop* hop : {&c.from, &c.to}) {
            size += 4 + 4 + hop->user.size() + 4 + hop->hostname.size() + 4;
            for (const auto& k : hop->keys)
                size += 4 + k.blob.size() + 1;
        }
    }
    return size;
}

void write_constraints(wire_writer& w, const key_constraints& constraints)
{
    if (constraints.lifetime_seconds)
        w.u8(constrain_lifetime).u32(*constraints.lifetime_seconds);
    if (constraints.confirm)
        w.u8(constrain_confirm);
    // OpenSSH's order: lifetime, confirm, the provider, the destinations.
    if (constraints.sk_provider)
        w.u8(constrain_extension).string(sk_provider_extension).string(*constraints.sk_provider);
    if (!constraints.destinations.empty()) {
        // Each constraint, and each hop in it, is a string of its own (as
        // OpenSSH's encode_dest_constraint writes them).
        w.u8(constrain_extension).string(restrict_destination_extension);
        const std::size_t all = w.begin_string();
        for (const auto& c : constraints.destinations) {
            const std::size_t one = w.begin_string();
            for (const destination_hop* hop : {&c.from, &c.to}) {
                const std::size_t h = w.begin_string();
                w.string(hop->user).string(hop->hostname).string(std::string_view{});
                for (const auto& k : hop->keys)
                    w.string(k.blob).boolean(k.is_ca);
                w.end_string(h);
            }
            w.string(std::string_view{}); // reserved
            w.end_string(one);
        }
        w.end_string(all);
    }
}

} // namespace

secret_bytes encode_add_identity(byte_span key_fields, std::string_view comment, const key_constraints& constraints)
{
    bytes body;
    body.reserve(1 + key_fields.size() + 4 + comment.size() + constraints_size(constraints));
    wire_writer w(body);
    w.u8(constraints.empty() ? add_identity : add_id_constrained).raw(key_fields).string(comment);
    write_constraints(w, constraints);
    return frame_secret(body);
}

secret_bytes encode_update_card(bool add, std::string_view provider, byte_span pin,
                                const key_constraints& constraints)
{
    bytes body;
    body.reserve(1 + 4 + provider.size() + 4 + pin.size() + constraints_size(constraints));
    wire_writer w(body);
    const bool constrained = add && !constraints.empty();
    w.u8(!add ? remove_smartcard_key : constrained ? add_smartcard_key_constrained : add_smartcard_key)
        .string(provider)
        .string(pin);
    if (constrained)
        write_constraints(w, constraints);
    return frame_secret(body);
}

bytes encode_remove_identity(byte_span key_blob)
{
    bytes body;
    wire_writer(body).u8(remove_identity).string(key_blob);
    return frame(body);
}

bytes encode_remove_all_identities() { return frame(bytes{remove_all_identities}); }

bytes encode_remove_all_rsa_identities() { return frame(bytes{remove_all_rsa_identities}); }

secret_bytes encode_lock(std::string_view password, bool locking)
{
    bytes body;
    body.reserve(1 + 4 + password.size());
    wire_writer(body).u8(locking ? lock : unlock).string(password);
    return frame_secret(body);
}

bytes encode_extension(std::string_view name, byte_span contents)
{
    bytes body;
    wire_writer(body).u8(extension).string(name).raw(contents);
    return frame(body);
}

bytes encode_query() { return encode_extension(query_extension, {}); }

bytes encode_request_identities() { return frame(bytes{request_identities}); }

bytes encode_sign_request(byte_span key_blob, byte_span data, std::uint32_t flags)
{
    bytes body;
    wire_writer(body).u8(sign_request).string(key_blob).string(data).u32(flags);
    return frame(body);
}

bytes encode_session_bind(byte_span host_key_blob, byte_span session_id, byte_span signature, bool forwarding)
{
    bytes body;
    wire_writer(body)
        .u8(extension)
        .string(session_bind_extension)
        .string(host_key_blob)
        .string(session_id)
        .string(signature)
        .u8(forwarding ? 1 : 0);
    return frame(body);
}

result<std::vector<identity>> decode_identities_answer(byte_span body)
{
    wire_reader r(body);
    if (auto t = expect_answer(r, identities_answer); !t)
        return t.error();
    const std::uint32_t n = r.u32();
    if (!r.ok())
        return r.error();
    if (n > max_identities)
        return errc::too_large;
    std::vector<identity> out;
    // Each entry takes at least eight bytes: the count cannot outgrow the body.
    out.reserve(std::min<std::size_t>(n, r.remaining() / 8));
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        identity id;
        id.key_blob = to_bytes(r.string());
        id.comment = std::string(r.text());
        if (!r.ok())
            break;
        if (auto k = public_key::from_blob(id.key_blob))
            id.key = std::move(*k);
        out.push_back(std::move(id));
    }
    if (auto f = r.finish(); !f)
        return f.error();
    return out;
}

result<bytes> decode_sign_response(byte_span body)
{
    wire_reader r(body);
    if (auto t = expect_answer(r, sign_response); !t)
        return t.error();
    bytes sig = to_bytes(r.string());
    if (auto f = r.finish(); !f)
        return f.error();
    return sig;
}

result<void> decode_success(byte_span body)
{
    wire_reader r(body);
    if (auto t = expect_answer(r, success); !t)
        return t.error();
    return r.finish();
}

result<std::vector<std::string>> decode_query_answer(byte_span body)
{
    wire_reader r(body);
    const std::uint8_t type = r.u8();
    if (!r.ok())
        return r.error();
    if (is_failure(type))
        return errc::unsupported;
    if (type == extension_response) {
        if (r.text() != query_extension || !r.ok())
            return errc::malformed;
    } else if (type != success) {
        return errc::malformed;
    }
    std::vector<std::string> names;
    // Each name takes at least its four length bytes.
    while (r.ok() && r.remaining() >= 4 && names.size() < max_identities)
        names.emplace_back(r.text());
    if (auto f = r.finish(); !f)
        return f.error();
    return names;
}

} // namespace longhaul::agent
