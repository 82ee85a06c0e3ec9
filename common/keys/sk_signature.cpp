// Verification of FIDO security-key ("sk") signatures (PROTOCOL.u2f):
// sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com and the
// webauthn-sk-ecdsa-sha2-nistp256@openssh.com form of the latter.
//
// An authenticator never signs the message itself: it signs its
// authenticator data (H(application) || flags || counter [|| extensions])
// followed by a hash of the client data, which for SSH is H(message) and
// for WebAuthn is H(clientDataJSON), a JSON text that embeds the message.
#include "common/keys/public_key.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/evp_util.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul {

namespace {

// WebAuthn authenticator-data flags that only the webauthn form may carry
// (plain SSH authenticators never set them).
constexpr std::uint8_t sk_flag_attested_data = 0x40;
constexpr std::uint8_t sk_flag_extension_data = 0x80;

// Inner signature bounds: Ed25519 is exactly 64 bytes; ECDSA P-256 is two
// mpints of at most 33 bytes each with their length words.
constexpr std::size_t ed25519_signature_size = 64;
constexpr std::size_t max_ecdsa_p256_inner = 2 * (4 + 33);
// A browser's origin ("https://example.com") is short; bound it well above
// any real one.
constexpr std::size_t max_webauthn_origin = 2048;

std::string base64url(byte_span data)
{
    std::string s = base64_encode(data, false);
    std::replace(s.begin(), s.end(), '+', '-');
    std::replace(s.begin(), s.end(), '/', '_');
    return s;
}

// What the authenticator signed: H(app) || flags || counter_be ||
// extensions || client_data_hash (69 bytes without extensions).
bytes authenticator_message(std::string_view application, std::uint8_t flags, std::uint32_t counter,
                            byte_span extensions, byte_span client_data_hash)
{
    bytes out;
    wire_writer w(out);
    w.raw(digest(hash_alg::sha256, as_bytes(application))).u8(flags).u32(counter);
    w.raw(extensions).raw(client_data_hash);
    return out;
}

} // namespace

result<void> public_key::verify_sk(std::string_view sig_alg, byte_span data, byte_span signature_blob,
                                   sk_signature_details* sk) const
{
    const bool is_ecdsa = type_ == key_type::sk_ecdsa_p256;
    // The caller names the key's own algorithm (OpenSSH clients only ever
    // offer that); the webauthn name is also taken for sk-ecdsa keys, but
    // then the blob must really be in that form.
    const bool alg_ok = sig_alg == type_name() || (is_ecdsa && sig_alg == webauthn_sk_ecdsa_signature);
    if (!alg_ok || !pkey_ || signature_blob.size() > max_signature_blob)
        return errc::signature_invalid;

    wire_reader r(signature_blob);
    const auto name = r.text(64);
    if (!r.ok())
        return errc::signature_invalid;
    const bool webauthn = is_ecdsa && name == webauthn_sk_ecdsa_signature;
    if (!webauthn && (name != type_name() || sig_alg != type_name()))
        return errc::signature_invalid;

    const byte_span inner = r.string(is_ecdsa ? max_ecdsa_p256_inner : ed25519_signature_size);
    const std::uint8_t flags = r.u8();
    const std::uint32_t counter = r.u32();
    std::string_view origin;
    byte_span client_data, extensions;
    if (webauthn) {
        origin = r.text(max_webauthn_origin);
        client_data = r.string(max_signature_blob);
        extensions = r.string(max_signature_blob);
    }
    if (!r.finish())
        return errc::signature_invalid;

    bytes client_data_hash;
    if (webauthn) {
        // A quote in the origin could end the JSON string early and smuggle
        // other members into the prefix compared below.
        if (origin.find('"') != std::string_view::npos)
            return errc::signature_invalid;
        // Attested credential data belongs to registration, not assertions.
        if ((flags & sk_flag_attested_data) != 0)
            return errc::signature_invalid;
        // ED announces extension data; both must agree or the signed
        // authenticator data would be parsed differently than it was made.
        if (((flags & sk_flag_extension_data) != 0) != !extensions.empty())
            return errc::signature_invalid;
        // The clientData must bind the SSH message as its challenge. Only
        // the prefix is fixed by the WebAuthn serialization; browsers may
        // append members (crossOrigin, ...), which are not interpreted.
        const std::string prefix = R"({"type":"webauthn.get","challenge":")" + base64url(data) +
                                   R"(","origin":")" + std::string(origin) + "\"";
        if (client_data.size() < prefix.size() ||
            !std::equal(prefix.begin(), prefix.end(), client_data.begin(),
                        [](char c, std::uint8_t b) { return static_cast<std::uint8_t>(c) == b; }))
            return errc::signature_invalid;
        client_data_hash = digest(hash_alg::sha256, client_data);
    } else {
        client_data_hash = digest(hash_alg::sha256, data);
    }

    const bytes message = authenticator_message(application_, flags, counter, extensions, client_data_hash);
    const bool ok = is_ecdsa ? detail::verify_ecdsa(pkey_.get(), type_, inner, message)
                             : inner.size() == ed25519_signature_size &&
                                   detail::evp_verify(pkey_.get(), nullptr, inner, message);
    if (!ok)
        return errc::signature_invalid;
    if (sk != nullptr)
        *sk = {flags, counter};
    return {};
}

} // namespace longhaul
