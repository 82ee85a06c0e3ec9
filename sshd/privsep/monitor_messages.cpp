#include "sshd/privsep/monitor_messages.hpp"

#include "common/crypto/moduli.hpp"
#include "common/wire.hpp"

namespace longhaul::privsep {

namespace {

// Bounds on what the child may send: each a little above what an honest
// child ever does (key blobs: a 16384-bit RSA key; signatures: the same;
// signed data: a userauth request carrying such a key and a host key).
constexpr std::size_t max_blob = 4096;
constexpr std::size_t max_name = 256;
// "Last login: " with ctime's 24 characters, " from " and a lastlog host.
constexpr std::size_t max_login_message = 512;
constexpr std::size_t max_sign_data = 64;
// A publickey key blob may be a certificate (certificate.hpp's bound).
constexpr std::size_t max_key_blob = max_certificate_blob;
constexpr std::size_t max_signed_data = max_key_blob + 2 * max_blob;
constexpr std::size_t max_secret = 1024;
constexpr std::size_t max_log_text = max_log_line;
constexpr std::uint32_t max_responses = 100;
constexpr std::uint32_t max_prompts = 100;
constexpr std::uint32_t max_methods_lists = 1024;
// A user name as the client sent it (the monitor answers "invalid" for
// one longer than any account's), and a banner up to what a packet holds.
constexpr std::size_t max_user_text = max_wire_string;
constexpr std::size_t max_banner_text = max_wire_string;
constexpr std::size_t max_setting_text = 64 * 1024;
// A group's prime and generator: the largest group an exchange asks for,
// and a sign byte.
constexpr std::size_t max_group_value = gex_max_bits / 8 + 1;

bytes start(monitor_type t, bool reply = false)
{
    bytes out;
    out.push_back(static_cast<std::uint8_t>(t) | (reply ? reply_flag : 0));
    return out;
}

// A reader over the fields after the type byte, failed already when the
// type is not `t` (with or without the reply flag as asked).
wire_reader fields(byte_span msg, monitor_type t, bool reply = false)
{
    const std::uint8_t want = static_cast<std::uint8_t>(t) | (reply ? reply_flag : 0);
    if (msg.empty() || msg[0] != want) {
        wire_reader r(byte_span{});
        r.fail(errc::malformed);
        return r;
    }
    return wire_reader(msg.subspan(1));
}

template <class T>
result<T> finished(wire_reader& r, T value)
{
    if (!r.finish())
        return errc::malformed;
    return value;
}

bytes copy(byte_span s) { return bytes(s.begin(), s.end()); }

// A flag: exactly 0 or 1 (stricter than SSH's boolean, so that what the
// monitor accepts is exactly what the child's encoder writes).
// Text from the child that ends up in the log or a system call: no NUL
// (a name that C code would read shorter than the monitor does).
std::string clean_text(wire_reader& r, std::size_t max)
{
    const std::string_view t = r.text(max);
    if (t.find('\0') != std::string_view::npos)
        r.fail(errc::malformed);
    return std::string(t);
}

bool flag(wire_reader& r)
{
    const std::uint8_t b = r.u8();
    if (b > 1)
        r.fail(errc::malformed);
    return b == 1;
}

void put_settings(wire_writer& w, const server_auth_settings& s)
{
    w.boolean(s.pubkey_authentication)
        .boolean(s.password_authentication)
        .boolean(s.kbd_interactive_authentication)
        .boolean(s.permit_empty_passwords)
        .u8(static_cast<std::uint8_t>(s.root_login))
        .u32(static_cast<std::uint32_t>(s.authentication_methods.size()));
    for (const auto& l : s.authentication_methods)
        w.string(l);
    w.u32(static_cast<std::uint32_t>(s.max_auth_tries))
        .string(s.pubkey_accepted_algorithms)
        .string(s.ca_signature_algorithms)
        .string(s.banner)
        .string(s.kbdint_device)
        .boolean(s.hostbased_authentication)
        .string(s.hostbased_accepted_algorithms);
}

server_auth_settings get_settings(wire_reader& r)
{
    server_auth_settings s;
    s.pubkey_authentication = flag(r);
    s.password_authentication = flag(r);
    s.kbd_interactive_authentication = flag(r);
    s.permit_empty_passwords = flag(r);
    const std::uint8_t root = r.u8();
    if (root > static_cast<std::uint8_t>(permit_root_login::no))
        r.fail(errc::malformed);
    s.root_login = static_cast<permit_root_login>(root);
    const std::uint32_t n = r.u32();
    if (n > max_methods_lists)
        r.fail(errc::malformed);
    s.authentication_methods.clear();
    for (std::uint32_t i = 0; i < n && r.ok(); ++i)
        s.authentication_methods.emplace_back(r.text(max_setting_text));
    const std::uint32_t tries = r.u32();
    if (tries > 1000000)
        r.fail(errc::malformed);
    s.max_auth_tries = static_cast<int>(tries);
    s.pubkey_accepted_algorithms = std::string(r.text(max_setting_text));
    s.ca_signature_algorithms = std::string(r.text(max_setting_text));
    s.banner = std::string(r.text(max_banner_text));
    s.kbdint_device = std::string(r.text(max_name));
    s.hostbased_authentication = flag(r);
    s.hostbased_accepted_algorithms = std::string(r.text(max_setting_text));
    return s;
}

} // namespace

std::optional<monitor_type> message_type(byte_span msg, bool reply) noexcept
{
    if (msg.empty())
        return std::nullopt;
    std::uint8_t t = msg[0];
    if (((t & reply_flag) != 0) != reply)
        return std::nullopt;
    t &= static_cast<std::uint8_t>(~reply_flag);
    if (t < static_cast<std::uint8_t>(monitor_type::sign) || t > static_cast<std::uint8_t>(monitor_type::moduli))
        return std::nullopt;
    return static_cast<monitor_type>(t);
}

bytes encode(const sign_request& m)
{
    bytes out = start(monitor_type::sign);
    wire_writer(out).string(m.key_blob).string(m.algorithm).string(m.data);
    return out;
}

result<sign_request> decode_sign_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::sign);
    sign_request m;
    m.key_blob = copy(r.string(max_blob));
    m.algorithm = clean_text(r, max_name);
    m.data = copy(r.string(max_sign_data));
    return finished(r, std::move(m));
}

bytes encode(const sign_reply& m)
{
    bytes out = start(monitor_type::sign, true);
    wire_writer(out).boolean(m.ok).string(m.signature);
    return out;
}

result<sign_reply> decode_sign_reply(byte_span msg)
{
    auto r = fields(msg, monitor_type::sign, true);
    sign_reply m;
    m.ok = flag(r);
    m.signature = copy(r.string(max_blob));
    return finished(r, std::move(m));
}

bytes encode(const pty_reply& m)
{
    bytes out = start(monitor_type::pty, true);
    wire_writer(out).boolean(m.ok).string(m.name).string(m.login_message);
    return out;
}

bytes encode(const pty_release_request& m)
{
    bytes out = start(monitor_type::pty_release);
    wire_writer(out).string(m.name);
    return out;
}

result<pty_release_request> decode_pty_release_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::pty_release);
    pty_release_request m;
    m.name = clean_text(r, max_name);
    return finished(r, std::move(m));
}

result<pty_reply> decode_pty_reply(byte_span msg)
{
    auto r = fields(msg, monitor_type::pty, true);
    pty_reply m;
    m.ok = flag(r);
    m.name = clean_text(r, max_name);
    m.login_message = clean_text(r, max_login_message);
    return finished(r, std::move(m));
}

bytes encode(const lookup_user_request& m)
{
    bytes out = start(monitor_type::lookup_user);
    wire_writer(out).string(m.user);
    return out;
}

result<lookup_user_request> decode_lookup_user_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::lookup_user);
    lookup_user_request m;
    m.user = clean_text(r, max_user_text);
    return finished(r, std::move(m));
}

bytes encode(const lookup_user_reply& m)
{
    bytes out = start(monitor_type::lookup_user, true);
    wire_writer w(out);
    w.u8(static_cast<std::uint8_t>(m.status)).boolean(m.is_root).u8(static_cast<std::uint8_t>(m.level));
    w.boolean(m.settings.has_value());
    if (m.settings)
        put_settings(w, *m.settings);
    return out;
}

result<lookup_user_reply> decode_lookup_user_reply(byte_span msg)
{
    auto r = fields(msg, monitor_type::lookup_user, true);
    lookup_user_reply m;
    const std::uint8_t status = r.u8();
    if (status > static_cast<std::uint8_t>(user_status::refused))
        r.fail(errc::malformed);
    m.status = static_cast<user_status>(status);
    m.is_root = flag(r);
    const std::uint8_t level = r.u8();
    if (level > static_cast<std::uint8_t>(log_level::debug3))
        r.fail(errc::malformed);
    m.level = static_cast<log_level>(level);
    if (flag(r))
        m.settings = get_settings(r);
    return finished(r, std::move(m));
}

bytes encode(const key_allowed_request& m)
{
    bytes out = start(monitor_type::key_allowed);
    wire_writer(out).string(m.key_blob).boolean(m.with_signature);
    return out;
}

result<key_allowed_request> decode_key_allowed_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::key_allowed);
    key_allowed_request m;
    m.key_blob = copy(r.string(max_key_blob));
    m.with_signature = flag(r);
    return finished(r, std::move(m));
}

bytes encode(const key_allowed_reply& m)
{
    bytes out = start(monitor_type::key_allowed, true);
    wire_writer(out).boolean(m.allowed).boolean(m.forced_command);
    return out;
}

result<key_allowed_reply> decode_key_allowed_reply(byte_span msg)
{
    auto r = fields(msg, monitor_type::key_allowed, true);
    key_allowed_reply m;
    m.allowed = flag(r);
    m.forced_command = flag(r);
    return finished(r, m);
}

bytes encode(const host_allowed_request& m)
{
    bytes out = start(monitor_type::host_allowed);
    wire_writer(out).string(m.key_blob).string(m.client_host).string(m.client_user);
    return out;
}

result<host_allowed_request> decode_host_allowed_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::host_allowed);
    host_allowed_request m;
    m.key_blob = copy(r.string(max_key_blob));
    m.client_host = clean_text(r, max_hostbased_name);
    m.client_user = clean_text(r, max_hostbased_name);
    return finished(r, std::move(m));
}

bytes encode(const moduli_request& m)
{
    bytes out = start(monitor_type::moduli);
    wire_writer(out).u32(m.min_bits).u32(m.preferred_bits).u32(m.max_bits);
    return out;
}

result<moduli_request> decode_moduli_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::moduli);
    moduli_request m;
    m.min_bits = r.u32();
    m.preferred_bits = r.u32();
    m.max_bits = r.u32();
    return finished(r, m);
}

bool is_clamped(const moduli_request& q) noexcept
{
    auto c = clamp_gex_request(q.min_bits, q.preferred_bits, q.max_bits);
    return c && c->min_bits == q.min_bits && c->preferred_bits == q.preferred_bits && c->max_bits == q.max_bits;
}

bytes encode(const moduli_reply& m)
{
    bytes out = start(monitor_type::moduli, true);
    wire_writer w(out);
    w.boolean(m.ok);
    if (m.ok)
        w.string(m.group.p).string(m.group.g);
    return out;
}

result<moduli_reply> decode_moduli_reply(byte_span msg)
{
    auto r = fields(msg, monitor_type::moduli, true);
    moduli_reply m;
    m.ok = flag(r);
    if (m.ok) {
        m.group.p = copy(r.string(max_group_value));
        m.group.g = copy(r.string(max_group_value));
    }
    return finished(r, std::move(m));
}

bytes encode(const verify_pubkey_request& m)
{
    bytes out = start(monitor_type::verify_pubkey);
    wire_writer(out).string(m.key_blob).string(m.algorithm).string(m.signed_data).string(m.signature);
    return out;
}

result<verify_pubkey_request> decode_verify_pubkey_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::verify_pubkey);
    verify_pubkey_request m;
    m.key_blob = copy(r.string(max_key_blob));
    m.algorithm = clean_text(r, max_name);
    m.signed_data = copy(r.string(max_signed_data));
    m.signature = copy(r.string(max_blob));
    return finished(r, std::move(m));
}

bytes encode(const password_request& m)
{
    bytes out = start(monitor_type::password);
    wire_writer(out).string(byte_span(m.password.data(), m.password.size()));
    return out;
}

result<password_request> decode_password_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::password);
    password_request m;
    m.password = secret_bytes(r.string(max_secret));
    return finished(r, std::move(m));
}

bytes encode(const kbdint_start_request& m)
{
    bytes out = start(monitor_type::kbdint_start);
    wire_writer(out).string(m.submethods);
    return out;
}

result<kbdint_start_request> decode_kbdint_start_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::kbdint_start);
    kbdint_start_request m;
    m.submethods = clean_text(r, max_name);
    return finished(r, std::move(m));
}

bytes encode(const kbdint_respond_request& m)
{
    bytes out = start(monitor_type::kbdint_respond);
    wire_writer w(out);
    w.u32(static_cast<std::uint32_t>(m.responses.size()));
    for (const auto& s : m.responses)
        w.string(byte_span(s.data(), s.size()));
    return out;
}

result<kbdint_respond_request> decode_kbdint_respond_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::kbdint_respond);
    kbdint_respond_request m;
    const std::uint32_t n = r.u32();
    if (n > max_responses)
        r.fail(errc::malformed);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i)
        m.responses.emplace_back(r.string(max_secret));
    return finished(r, std::move(m));
}

bytes encode_kbdint_reply(monitor_type request, const kbdint_reply& m)
{
    bytes out = start(request, true);
    wire_writer w(out);
    w.u8(static_cast<std::uint8_t>(m.result)).string(m.name).string(m.instruction);
    w.u32(static_cast<std::uint32_t>(m.prompts.size()));
    for (const auto& p : m.prompts)
        w.string(p.text).boolean(p.echo);
    return out;
}

result<kbdint_reply> decode_kbdint_reply(monitor_type request, byte_span msg)
{
    auto r = fields(msg, request, true);
    if (request != monitor_type::kbdint_start && request != monitor_type::kbdint_respond)
        r.fail(errc::malformed);
    kbdint_reply m;
    const std::uint8_t kind = r.u8();
    if (kind > static_cast<std::uint8_t>(kbdint_reply::kind::failure))
        r.fail(errc::malformed);
    m.result = static_cast<kbdint_reply::kind>(kind);
    m.name = std::string(r.text(max_log_text));
    m.instruction = std::string(r.text(max_log_text));
    const std::uint32_t n = r.u32();
    if (n > max_prompts)
        r.fail(errc::malformed);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        kbdint_prompt p;
        p.text = std::string(r.text(max_log_text));
        p.echo = flag(r);
        m.prompts.push_back(std::move(p));
    }
    return finished(r, std::move(m));
}

bytes encode(const account_reply& m)
{
    bytes out = start(monitor_type::account_check, true);
    wire_writer(out).boolean(m.allowed).string(m.message);
    return out;
}

result<account_reply> decode_account_reply(byte_span msg)
{
    auto r = fields(msg, monitor_type::account_check, true);
    account_reply m;
    m.allowed = flag(r);
    m.message = std::string(r.text(max_log_text));
    return finished(r, std::move(m));
}

bytes encode(const log_request& m)
{
    bytes out = start(monitor_type::log);
    wire_writer(out).u8(static_cast<std::uint8_t>(m.level)).string(m.text);
    return out;
}

result<log_request> decode_log_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::log);
    log_request m;
    const std::uint8_t level = r.u8();
    if (level > static_cast<std::uint8_t>(log_level::debug3) || level == static_cast<std::uint8_t>(log_level::quiet))
        r.fail(errc::malformed);
    m.level = static_cast<log_level>(level);
    m.text = clean_text(r, max_log_text);
    return finished(r, std::move(m));
}

bytes encode(const authenticated_request& m)
{
    bytes out = start(monitor_type::authenticated);
    wire_writer(out).string(m.transport_state);
    return out;
}

result<authenticated_request> decode_authenticated_request(byte_span msg)
{
    auto r = fields(msg, monitor_type::authenticated);
    authenticated_request m;
    m.transport_state = copy(r.string(max_monitor_message - 16));
    return finished(r, std::move(m));
}

bytes encode_verdict(monitor_type request, bool ok)
{
    bytes out = start(request, true);
    wire_writer(out).boolean(ok);
    return out;
}

result<bool> decode_verdict(monitor_type request, byte_span msg)
{
    auto r = fields(msg, request, true);
    const bool ok = flag(r);
    return finished(r, ok);
}

bytes encode_empty(monitor_type type) { return start(type); }

result<void> decode_empty(monitor_type type, byte_span msg)
{
    auto r = fields(msg, type);
    if (!r.finish())
        return errc::malformed;
    return {};
}

} // namespace longhaul::privsep
