#include "common/keys/sshsig.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/wire.hpp"

namespace longhaul {

namespace {

constexpr std::string_view sshsig_magic = "SSHSIG";
constexpr std::uint32_t version = 1;

bytes signed_data(std::string_view ns, std::string_view reserved, std::string_view hash_name, byte_span message_digest)
{
    bytes out;
    wire_writer(out).raw(sshsig_magic).string(ns).string(reserved).string(hash_name).string(message_digest);
    return out;
}

// The algorithm named inside an SSH signature blob.
std::string_view signature_algorithm(byte_span signature) noexcept
{
    wire_reader r(signature);
    const auto name = r.text(64);
    return r.ok() ? name : std::string_view{};
}

} // namespace

result<hash_alg> sshsig_hash_alg(std::string_view name) noexcept
{
    if (name == "sha256")
        return hash_alg::sha256;
    if (name == "sha512")
        return hash_alg::sha512;
    return errc::unsupported;
}

result<sshsig> parse_sshsig_blob(byte_span blob)
{
    wire_reader r(blob);
    const byte_span m = r.raw(sshsig_magic.size());
    const std::uint32_t v = r.u32();
    const byte_span key_blob = r.string();
    const auto ns = r.text(1024);
    const auto reserved = r.text(1024);
    const auto hash_name = r.text(64);
    const byte_span signature = r.string(max_signature_blob);
    if (!r.finish() || as_string_view(m) != sshsig_magic || v != version || ns.empty())
        return errc::invalid_format;
    if (!sshsig_hash_alg(hash_name))
        return errc::unsupported;
    sshsig out;
    wire_reader type_reader(key_blob);
    if (is_certificate_algorithm(type_reader.text(128))) {
        auto cert = certificate::from_blob(key_blob);
        if (!cert)
            return cert.error();
        if (!cert->verify_signature(certificate::any_signature_algorithm()))
            return errc::signature_invalid;
        out.key = cert->key();
        out.cert = std::move(*cert);
    } else {
        auto key = public_key::from_blob(key_blob);
        if (!key)
            return key.error();
        out.key = std::move(*key);
    }
    out.ns = std::string(ns);
    out.reserved = std::string(reserved);
    out.hash_alg = std::string(hash_name);
    out.signature = to_bytes(signature);
    return out;
}

result<sshsig> parse_sshsig(std::string_view armored)
{
    auto blob = armor_decode(armored, sshsig_label);
    if (!blob)
        return errc::invalid_format;
    return parse_sshsig_blob(blob->span());
}

result<void> verify_sshsig_digest(const sshsig& sig, std::string_view ns, byte_span message_digest)
{
    const auto h = sshsig_hash_alg(sig.hash_alg);
    if (!h || sig.ns != ns || sig.key.empty() || message_digest.size() != digest_size(*h))
        return errc::signature_invalid;
    const auto alg = signature_algorithm(sig.signature);
    // SHA-1 RSA signatures are refused here as by ssh-keygen -Y verify.
    if (alg.empty() || alg == "ssh-rsa")
        return errc::signature_invalid;
    return sig.key.verify(alg, signed_data(sig.ns, sig.reserved, sig.hash_alg, message_digest), sig.signature);
}

result<void> verify_sshsig(const sshsig& sig, std::string_view ns, byte_span message)
{
    const auto h = sshsig_hash_alg(sig.hash_alg);
    if (!h)
        return errc::signature_invalid;
    return verify_sshsig_digest(sig, ns, digest(*h, message));
}

bytes sshsig_to_blob(const sshsig& sig)
{
    bytes out;
    wire_writer(out)
        .raw(sshsig_magic)
        .u32(version)
        .string(sig.cert ? sig.cert->blob() : sig.key.blob())
        .string(sig.ns)
        .string(sig.reserved)
        .string(sig.hash_alg)
        .string(sig.signature);
    return out;
}

result<std::string> sign_sshsig(const private_key& key, std::string_view ns, byte_span message,
                                std::string_view hash_name)
{
    return sign_sshsig(
        key.public_part(), std::nullopt, [&key](std::string_view alg, byte_span data) { return key.sign(alg, data); },
        ns, message, hash_name);
}

result<std::string> sign_sshsig(const public_key& key, const std::optional<certificate>& cert,
                                const sshsig_signer& sign, std::string_view ns, byte_span message,
                                std::string_view hash_name)
{
    const auto h = sshsig_hash_alg(hash_name);
    if (!h)
        return errc::invalid_argument;
    return sign_sshsig_digest(key, cert, sign, ns, hash_name, digest(*h, message));
}

result<std::string> sign_sshsig_digest(const public_key& key, const std::optional<certificate>& cert,
                                       const sshsig_signer& sign, std::string_view ns, std::string_view hash_name,
                                       byte_span message_digest)
{
    const auto h = sshsig_hash_alg(hash_name);
    if (!h || ns.empty() || key.empty() || (cert && !(cert->key() == key)) ||
        message_digest.size() != digest_size(*h))
        return errc::invalid_argument;
    const std::string_view alg = key.type() == key_type::rsa ? "rsa-sha2-512" : key.type_name();
    auto signature = sign(alg, signed_data(ns, "", hash_name, message_digest));
    if (!signature)
        return signature.error();
    sshsig sig;
    sig.key = key;
    sig.cert = cert;
    sig.ns = std::string(ns);
    sig.hash_alg = std::string(hash_name);
    sig.signature = std::move(*signature);
    // A signer we do not hold (an agent) may have used another key.
    if (!verify_sshsig_digest(sig, ns, message_digest))
        return errc::signature_invalid;
    return armor_encode(sshsig_label, sshsig_to_blob(sig));
}

} // namespace longhaul
