#include "ssh/pkcs11/pkcs11_keys.hpp"

#include "common/wire.hpp"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <array>
#include <memory>

namespace longhaul::pkcs11 {

namespace {

struct curve {
    key_type type;
    std::string_view ssh_name;     // "nistp256"
    bytes oid_der;                 // CKA_EC_PARAMS of a named curve
    std::size_t field_bytes;       // the size of r and of s
    const EVP_MD* (*hash)();
};

const std::array<curve, 3>& curves()
{
    static const std::array<curve, 3> table{{
        {key_type::ecdsa_p256, "nistp256", {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}, 32,
         EVP_sha256},
        {key_type::ecdsa_p384, "nistp384", {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22}, 48, EVP_sha384},
        {key_type::ecdsa_p521, "nistp521", {0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23}, 66, EVP_sha512},
    }};
    return table;
}

const curve* curve_of(key_type t)
{
    for (const auto& c : curves())
        if (c.type == t)
            return &c;
    return nullptr;
}

// The DigestInfo prefixes of RFC 8017 section 9.2 (note 1), to which the
// hash is appended.
struct rsa_hash {
    std::string_view alg;
    const EVP_MD* (*hash)();
    bytes prefix;
};

const std::array<rsa_hash, 3>& rsa_hashes()
{
    static const std::array<rsa_hash, 3> table{{
        {"rsa-sha2-512", EVP_sha512,
         {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04,
          0x40}},
        {"rsa-sha2-256", EVP_sha256,
         {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04,
          0x20}},
        {"ssh-rsa", EVP_sha1, {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14}},
    }};
    return table;
}

std::optional<bytes> digest(const EVP_MD* md, byte_span data)
{
    bytes out(static_cast<std::size_t>(EVP_MD_get_size(md)));
    unsigned int n = 0;
    if (EVP_Digest(data.data(), data.size(), out.data(), &n, md, nullptr) != 1 || n != out.size())
        return std::nullopt;
    return out;
}

// One DER length (short or long form, at most four length bytes) at the
// start of `in`, which is advanced past it; nullopt when malformed or cut.
std::optional<std::size_t> der_length(byte_span& in)
{
    if (in.empty())
        return std::nullopt;
    const std::uint8_t first = in[0];
    in = in.subspan(1);
    if (first < 0x80)
        return first;
    const std::size_t n = first & 0x7f;
    if (n == 0 || n > 4 || in.size() < n)
        return std::nullopt;
    std::size_t len = 0;
    for (std::size_t i = 0; i < n; ++i)
        len = (len << 8) | in[i];
    in = in.subspan(n);
    // DER: the shortest form only.
    if (len < 0x80 || (n > 1 && len < (std::size_t{1} << (8 * (n - 1)))))
        return std::nullopt;
    return len;
}

} // namespace

result<public_key> rsa_public_key(byte_span modulus, byte_span exponent)
{
    if (modulus.size() > max_mpint_bytes || exponent.size() > max_mpint_bytes)
        return errc::invalid_format;
    bytes blob;
    wire_writer(blob).string("ssh-rsa").mpint(strip_leading_zeros(exponent)).mpint(strip_leading_zeros(modulus));
    return public_key::from_blob(blob);
}

result<public_key> ecdsa_public_key(byte_span ec_params, byte_span ec_point)
{
    const curve* c = nullptr;
    for (const auto& k : curves())
        if (ec_params.size() == k.oid_der.size() && std::equal(ec_params.begin(), ec_params.end(), k.oid_der.begin()))
            c = &k;
    if (c == nullptr)
        return errc::unsupported;
    // CKA_EC_POINT is DER: OCTET STRING { 04 || x || y }.
    byte_span in = ec_point;
    if (in.empty() || in[0] != 0x04)
        return errc::invalid_format;
    in = in.subspan(1);
    const auto len = der_length(in);
    if (!len || *len != in.size() || *len != 1 + 2 * c->field_bytes)
        return errc::invalid_format;
    bytes blob;
    wire_writer(blob).string(key_type_name(c->type)).string(c->ssh_name).string(in);
    auto key = public_key::from_blob(blob);
    if (key && key->type() != c->type)
        return errc::invalid_format;
    return key;
}

std::optional<certificate_key> x509_public_key(byte_span subject_der, byte_span cert_der, std::string& error)
{
    if (subject_der.size() > max_attribute || cert_der.size() > max_attribute) {
        error = "invalid attribute length";
        return std::nullopt;
    }
    std::string subject = "invalid subject";
    const unsigned char* p = subject_der.data();
    if (X509_NAME* name = d2i_X509_NAME(nullptr, &p, static_cast<long>(subject_der.size())); name != nullptr) {
        if (char* line = X509_NAME_oneline(name, nullptr, 0); line != nullptr) {
            subject = line;
            OPENSSL_free(line);
        }
        X509_NAME_free(name);
    }
    p = cert_der.data();
    std::unique_ptr<X509, decltype(&X509_free)> cert(d2i_X509(nullptr, &p, static_cast<long>(cert_der.size())),
                                                     X509_free);
    if (!cert) {
        error = "d2i_x509 failed";
        return std::nullopt;
    }
    EVP_PKEY* pkey = X509_get0_pubkey(cert.get());
    if (pkey == nullptr) {
        error = "X509_get_pubkey failed";
        return std::nullopt;
    }
    // OpenSSH 9.2 takes RSA and ECDSA keys from certificates, nothing else.
    const int id = EVP_PKEY_get_base_id(pkey);
    auto key = id == EVP_PKEY_RSA || id == EVP_PKEY_EC ? public_key::from_evp(pkey) : result<public_key>(errc::unsupported);
    if (!key) {
        error = "unknown certificate key type";
        return std::nullopt;
    }
    return certificate_key{std::move(*key), std::move(subject)};
}

std::string padded_text(const unsigned char* field, std::size_t width)
{
    // OpenSSH's rmspace always clears the field's last byte (it makes room
    // for a terminating NUL in a field that has none), then trailing
    // blanks; its log lines and PIN prompt show that text, so this does too.
    std::size_t n = width == 0 ? 0 : width - 1;
    for (std::size_t i = 0; i < n; ++i)
        if (field[i] == '\0')
            n = i;
    while (n > 0 && field[n - 1] == ' ')
        --n;
    return std::string(reinterpret_cast<const char*>(field), n);
}

std::optional<bytes> sign_input(const public_key& key, std::string_view alg, byte_span data)
{
    if (key.type() == key_type::rsa) {
        for (const auto& h : rsa_hashes()) {
            if (h.alg != alg)
                continue;
            auto d = digest(h.hash(), data);
            if (!d)
                return std::nullopt;
            bytes out = h.prefix;
            out.insert(out.end(), d->begin(), d->end());
            return out;
        }
        return std::nullopt;
    }
    const curve* c = curve_of(key.type());
    if (c == nullptr || alg != key_type_name(key.type()))
        return std::nullopt;
    return digest(c->hash(), data);
}

std::optional<bytes> signature_blob(const public_key& key, std::string_view alg, byte_span sig)
{
    bytes blob;
    wire_writer w(blob);
    w.string(alg);
    if (key.type() == key_type::rsa) {
        const int size = EVP_PKEY_get_size(key.evp());
        if (size <= 0 || sig.empty() || sig.size() > static_cast<std::size_t>(size))
            return std::nullopt;
        bytes padded(static_cast<std::size_t>(size) - sig.size(), 0);
        padded.insert(padded.end(), sig.begin(), sig.end());
        w.string(byte_span(padded));
        return blob;
    }
    const curve* c = curve_of(key.type());
    if (c == nullptr || sig.size() != 2 * c->field_bytes)
        return std::nullopt;
    bytes inner;
    wire_writer(inner).mpint(strip_leading_zeros(sig.first(c->field_bytes)))
        .mpint(strip_leading_zeros(sig.subspan(c->field_bytes)));
    w.string(byte_span(inner));
    return blob;
}

} // namespace longhaul::pkcs11
