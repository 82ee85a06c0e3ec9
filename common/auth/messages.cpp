#include "common/auth/messages.hpp"

#include "common/wire.hpp"

#include <algorithm>
#include <cstring>

namespace longhaul {

namespace {

// A text field as OpenSSH's sshpkt_get_cstring reads it: a NUL inside
// is an encoding error, not something to truncate at.
std::string read_text(wire_reader& r, std::size_t max = max_wire_string)
{
    auto s = r.text(max);
    if (!r.ok())
        return {};
    if (!valid_auth_text(s)) {
        r.fail(errc::malformed);
        return {};
    }
    return std::string(s);
}

secret_bytes read_secret(wire_reader& r)
{
    auto s = r.string();
    if (!r.ok())
        return {};
    if (std::find(s.begin(), s.end(), std::uint8_t{0}) != s.end()) {
        r.fail(errc::malformed);
        return {};
    }
    return secret_bytes(s);
}

// Checks the message number; the reader is left after it.
bool expect_type(wire_reader& r, std::uint8_t type)
{
    if (r.u8() != type && r.ok())
        r.fail(errc::malformed);
    return r.ok();
}

template <class T>
result<T> finish(wire_reader& r, T&& value)
{
    if (auto f = r.finish(); !f)
        return f.error();
    return std::forward<T>(value);
}

// Moves an encoding that holds secrets into wiped storage. The vector was
// reserved to its final size up front, so no reallocation left a copy.
secret_bytes into_secret(bytes& b)
{
    secret_bytes s(b);
    cleanse(b.data(), b.size());
    return s;
}

void encode_request(const userauth_request& req, wire_writer& w, bool with_signature)
{
    w.u8(msg::userauth_request).string(req.user).string(req.service).string(req.method);
    std::visit(
        [&](const auto& d) {
            using T = std::decay_t<decltype(d)>;
            if constexpr (std::is_same_v<T, userauth_publickey_data>) {
                w.boolean(d.has_signature).string(d.algorithm).string(d.key_blob);
                if (d.hostbound)
                    w.string(d.host_key_blob);
                if (d.has_signature && with_signature)
                    w.string(d.signature);
            } else if constexpr (std::is_same_v<T, userauth_password_data>) {
                w.boolean(d.change).string(d.password.span());
                if (d.change)
                    w.string(d.new_password.span());
            } else if constexpr (std::is_same_v<T, userauth_kbdint_data>) {
                w.string(d.language).string(d.submethods);
            } else if constexpr (std::is_same_v<T, userauth_hostbased_data>) {
                w.string(d.algorithm).string(d.key_blob).string(d.client_host).string(d.client_user);
                if (with_signature)
                    w.string(d.signature);
            } else if constexpr (std::is_same_v<T, userauth_other_data>) {
                w.raw(d.data);
            }
        },
        req.data);
}

std::size_t request_size_bound(const userauth_request& req)
{
    std::size_t n = 1 + 12 + req.user.size() + req.service.size() + req.method.size() + 64;
    std::visit(
        [&](const auto& d) {
            using T = std::decay_t<decltype(d)>;
            if constexpr (std::is_same_v<T, userauth_publickey_data>)
                n += d.algorithm.size() + d.key_blob.size() + d.host_key_blob.size() + d.signature.size() + 16;
            else if constexpr (std::is_same_v<T, userauth_password_data>)
                n += d.password.size() + d.new_password.size() + 16;
            else if constexpr (std::is_same_v<T, userauth_kbdint_data>)
                n += d.language.size() + d.submethods.size() + 8;
            else if constexpr (std::is_same_v<T, userauth_hostbased_data>)
                n += d.algorithm.size() + d.key_blob.size() + d.client_host.size() + d.client_user.size() +
                     d.signature.size() + 20;
            else if constexpr (std::is_same_v<T, userauth_other_data>)
                n += d.data.size();
        },
        req.data);
    return n;
}

} // namespace

bool valid_auth_text(std::string_view s) noexcept { return s.find('\0') == std::string_view::npos; }

// --- service request / accept ---

bytes service_request::encode() const
{
    bytes out;
    wire_writer(out).u8(msg::service_request).string(service);
    return out;
}

result<service_request> service_request::decode(byte_span payload)
{
    wire_reader r(payload);
    service_request m;
    if (expect_type(r, msg::service_request))
        m.service = read_text(r, max_auth_name);
    return finish(r, std::move(m));
}

bytes service_accept::encode() const
{
    bytes out;
    wire_writer(out).u8(msg::service_accept).string(service);
    return out;
}

result<service_accept> service_accept::decode(byte_span payload)
{
    wire_reader r(payload);
    service_accept m;
    if (expect_type(r, msg::service_accept))
        m.service = read_text(r, max_auth_name);
    return finish(r, std::move(m));
}

// --- userauth request ---

bytes userauth_request::encode() const
{
    bytes out;
    out.reserve(request_size_bound(*this));
    wire_writer w(out);
    encode_request(*this, w, true);
    return out;
}

secret_bytes userauth_request::encode_secret() const
{
    bytes out;
    out.reserve(request_size_bound(*this));
    wire_writer w(out);
    encode_request(*this, w, true);
    return into_secret(out);
}

result<userauth_request> userauth_request::decode(byte_span payload)
{
    wire_reader r(payload);
    userauth_request m;
    if (!expect_type(r, msg::userauth_request))
        return r.error();
    m.user = read_text(r, max_auth_name);
    m.service = read_text(r, max_auth_name);
    m.method = read_text(r, max_auth_name);
    if (!r.ok())
        return r.error();

    if (m.method == method_none) {
        m.data = userauth_none_data{};
    } else if (m.method == method_publickey || m.method == method_publickey_hostbound) {
        userauth_publickey_data d;
        d.hostbound = m.method == method_publickey_hostbound;
        d.has_signature = r.boolean();
        d.algorithm = read_text(r, max_auth_name);
        d.key_blob = to_bytes(r.string());
        if (d.hostbound)
            d.host_key_blob = to_bytes(r.string());
        if (d.has_signature)
            d.signature = to_bytes(r.string());
        m.data = std::move(d);
    } else if (m.method == method_password) {
        userauth_password_data d;
        d.change = r.boolean();
        d.password = read_secret(r);
        if (d.change)
            d.new_password = read_secret(r);
        m.data = std::move(d);
    } else if (m.method == method_kbdint) {
        userauth_kbdint_data d;
        d.language = read_text(r, max_auth_name);
        d.submethods = read_text(r, max_auth_name);
        m.data = std::move(d);
    } else if (m.method == method_hostbased) {
        userauth_hostbased_data d;
        d.algorithm = read_text(r, max_auth_name);
        d.key_blob = to_bytes(r.string());
        d.client_host = read_text(r, max_auth_name);
        d.client_user = read_text(r, max_auth_name);
        d.signature = to_bytes(r.string());
        m.data = std::move(d);
    } else {
        m.data = userauth_other_data{to_bytes(r.rest())};
    }
    return finish(r, std::move(m));
}

bytes publickey_signed_data(byte_span session_id, const userauth_request& request)
{
    bytes out;
    out.reserve(request_size_bound(request) + session_id.size() + 4);
    wire_writer w(out);
    w.string(session_id);
    encode_request(request, w, false);
    return out;
}

// --- failure / success / banner ---

bytes userauth_failure::encode() const
{
    bytes out;
    wire_writer(out).u8(msg::userauth_failure).string(methods).boolean(partial_success);
    return out;
}

result<userauth_failure> userauth_failure::decode(byte_span payload)
{
    wire_reader r(payload);
    userauth_failure m;
    if (expect_type(r, msg::userauth_failure)) {
        // Read as text, not a strict name-list: OpenSSH's client takes the
        // list as a C string and matches names in it.
        m.methods = read_text(r, 64 * 1024);
        m.partial_success = r.boolean();
    }
    return finish(r, std::move(m));
}

bytes userauth_success::encode() const { return bytes{msg::userauth_success}; }

result<userauth_success> userauth_success::decode(byte_span payload)
{
    wire_reader r(payload);
    expect_type(r, msg::userauth_success);
    return finish(r, userauth_success{});
}

bytes userauth_banner::encode() const
{
    bytes out;
    wire_writer(out).u8(msg::userauth_banner).string(message).string(language);
    return out;
}

result<userauth_banner> userauth_banner::decode(byte_span payload)
{
    wire_reader r(payload);
    userauth_banner m;
    if (expect_type(r, msg::userauth_banner)) {
        m.message = read_text(r);
        m.language = read_text(r, max_auth_name);
    }
    return finish(r, std::move(m));
}

// --- method-specific replies ---

bytes userauth_pk_ok::encode() const
{
    bytes out;
    wire_writer(out).u8(msg::userauth_pk_ok).string(algorithm).string(key_blob);
    return out;
}

result<userauth_pk_ok> userauth_pk_ok::decode(byte_span payload)
{
    wire_reader r(payload);
    userauth_pk_ok m;
    if (expect_type(r, msg::userauth_pk_ok)) {
        m.algorithm = read_text(r, max_auth_name);
        m.key_blob = to_bytes(r.string());
    }
    return finish(r, std::move(m));
}

bytes userauth_passwd_changereq::encode() const
{
    bytes out;
    wire_writer(out).u8(msg::userauth_passwd_changereq).string(prompt).string(language);
    return out;
}

result<userauth_passwd_changereq> userauth_passwd_changereq::decode(byte_span payload)
{
    wire_reader r(payload);
    userauth_passwd_changereq m;
    if (expect_type(r, msg::userauth_passwd_changereq)) {
        m.prompt = read_text(r);
        m.language = read_text(r, max_auth_name);
    }
    return finish(r, std::move(m));
}

bytes userauth_info_request::encode() const
{
    bytes out;
    wire_writer w(out);
    w.u8(msg::userauth_info_request).string(name).string(instruction).string(language);
    w.u32(static_cast<std::uint32_t>(prompts.size()));
    for (const auto& p : prompts)
        w.string(p.text).boolean(p.echo);
    return out;
}

result<userauth_info_request> userauth_info_request::decode(byte_span payload)
{
    wire_reader r(payload);
    userauth_info_request m;
    if (!expect_type(r, msg::userauth_info_request))
        return r.error();
    m.name = read_text(r);
    m.instruction = read_text(r);
    m.language = read_text(r, max_auth_name);
    const std::uint32_t n = r.u32();
    if (r.ok() && n > max_kbdint_prompts)
        return errc::too_large;
    // Each prompt takes at least five bytes, so n is also bounded by the
    // payload; reserving it cannot be abused.
    if (r.ok())
        m.prompts.reserve(std::min<std::size_t>(n, r.remaining() / 5));
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        kbdint_prompt p;
        p.text = read_text(r);
        p.echo = r.boolean();
        m.prompts.push_back(std::move(p));
    }
    return finish(r, std::move(m));
}

secret_bytes userauth_info_response::encode() const
{
    std::size_t total = 5;
    for (const auto& s : responses)
        total += 4 + s.size();
    bytes out;
    out.reserve(total);
    wire_writer w(out);
    w.u8(msg::userauth_info_response).u32(static_cast<std::uint32_t>(responses.size()));
    for (const auto& s : responses)
        w.string(s.span());
    return into_secret(out);
}

result<userauth_info_response> userauth_info_response::decode(byte_span payload)
{
    wire_reader r(payload);
    userauth_info_response m;
    if (!expect_type(r, msg::userauth_info_response))
        return r.error();
    const std::uint32_t n = r.u32();
    if (r.ok() && n > max_kbdint_prompts)
        return errc::too_large;
    if (r.ok())
        m.responses.reserve(std::min<std::size_t>(n, r.remaining() / 4));
    for (std::uint32_t i = 0; i < n && r.ok(); ++i)
        m.responses.push_back(read_secret(r));
    return finish(r, std::move(m));
}

} // namespace longhaul
