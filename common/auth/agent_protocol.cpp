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

} // namespace

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

} // namespace longhaul::agent
