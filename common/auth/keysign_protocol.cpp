#include "common/auth/keysign_protocol.hpp"

#include "common/auth/messages.hpp"
#include "common/keys/certificate.hpp"
#include "common/text_parse.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "common/wire.hpp"

namespace longhaul {

bytes keysign_frame(byte_span body, std::uint8_t version)
{
    bytes out;
    wire_writer(out).u32(static_cast<std::uint32_t>(body.size() + 1)).u8(version).raw(body);
    return out;
}

std::optional<std::uint32_t> keysign_frame_length(const std::uint8_t (&header)[4])
{
    wire_reader r(byte_span(header, 4));
    const std::uint32_t n = r.u32();
    if (n > max_keysign_message)
        return std::nullopt;
    return n;
}

bytes encode_keysign_request(std::uint32_t fd, byte_span data)
{
    bytes body;
    wire_writer(body).u32(fd).string(data);
    return keysign_frame(body);
}

bytes encode_keysign_reply(byte_span signature)
{
    bytes body;
    wire_writer(body).string(signature);
    return keysign_frame(body);
}

result<keysign_request> decode_keysign_request(byte_span body, std::string& error)
{
    error.clear();
    wire_reader r(body);
    const std::uint8_t version = r.u8();
    if (r.ok() && version != keysign_version) {
        error = "bad version: received " + std::to_string(version) + ", expected " + std::to_string(keysign_version);
        return errc::unsupported;
    }
    keysign_request req;
    req.fd = static_cast<std::int32_t>(r.u32());
    if (r.ok() && req.fd <= 2) {
        error = "bad fd = " + std::to_string(req.fd);
        return errc::invalid_argument;
    }
    const byte_span data = r.string(max_keysign_message);
    if (!r.ok()) {
        error = "buffer error: incomplete message";
        return errc::incomplete;
    }
    req.data = to_bytes(data);
    return req;
}

namespace {

// The request's key against its algorithm, as OpenSSH compares
// sshkey_type_from_name(algorithm) with the parsed key's type: a
// certificate algorithm wants a certificate of that key type, a plain one a
// plain key. Certificates must also carry a good CA signature (OpenSSH's
// sshkey_from_blob checks it). Fills req.key and req.certificate.
bool key_fits(keysign_sign_request& req)
{
    const auto want = host_key_type_for_algorithm(req.algorithm);
    req.certificate = is_certificate_algorithm(req.algorithm);
    if (req.certificate) {
        auto cert = certificate::from_blob(req.key_blob);
        if (!cert || !cert->verify_signature(certificate::any_signature_algorithm()))
            return false;
        req.key = cert->key();
    } else if (auto key = public_key::from_blob(req.key_blob)) {
        req.key = std::move(*key);
    } else {
        return false;
    }
    return want && req.key.type() == *want;
}

} // namespace

result<keysign_sign_request> check_keysign_data(byte_span data, std::string_view local_host,
                                                std::string_view local_user, std::string& parse_error)
{
    parse_error.clear();
    wire_reader r(data);
    int fail = 0;
    // A field that cannot be read ends the check, in OpenSSH's words.
    const auto unreadable = [&](const char* what) {
        parse_error = std::string(what) + ": " + (r.error() == errc::malformed ? "invalid format" : "incomplete message");
        return errc::invalid_format;
    };
    // sshbuf_get_cstring: a NUL inside the string is an invalid format.
    const auto text = [&]() -> std::string {
        auto s = r.text();
        if (r.ok() && !valid_auth_text(s))
            r.fail(errc::malformed);
        return r.ok() ? std::string(s) : std::string();
    };

    const std::size_t id_len = r.string().size();
    if (!r.ok())
        return unreadable("parse session ID");
    fail += id_len != 20 && id_len != 32 && id_len != 48 && id_len != 64;
    const std::uint8_t type = r.u8();
    if (!r.ok())
        return unreadable("parse type");
    fail += type != msg::userauth_request;
    (void)r.string();
    if (!r.ok())
        return unreadable("parse user");
    const std::string service = text();
    if (!r.ok())
        return unreadable("parse service");
    fail += service != "ssh-connection";
    const std::string method = text();
    if (!r.ok())
        return unreadable("parse method");
    fail += method != method_hostbased;
    keysign_sign_request req;
    req.algorithm = text();
    const byte_span blob = r.ok() ? r.string() : byte_span();
    if (!r.ok())
        return unreadable("parse pk");
    req.key_blob = to_bytes(blob);
    fail += !key_fits(req);
    // The client host: this connection's local name with a trailing dot.
    const std::string chost = text();
    if (!r.ok())
        return unreadable("parse hostname");
    fail += chost.size() != local_host.size() + 1 || chost.back() != '.' ||
            !iequals(std::string_view(chost).substr(0, local_host.size()), local_host);
    const std::string luser = text();
    if (!r.ok())
        return unreadable("parse luser");
    fail += luser != local_user;
    fail += r.remaining() != 0;
    if (fail != 0)
        return errc::invalid_argument;
    return req;
}

} // namespace longhaul
