#include "common/keys/pem_key.hpp"

#include "common/keys/evp_util.hpp"

#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/encoder.h>
#include <openssl/evp.h>

#include <array>

namespace longhaul {

namespace {

using detail::clear_openssl_errors;

constexpr std::array<std::string_view, 4> labels = {
    "RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY"};

std::string_view skip_pem_space(std::string_view s) noexcept
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
        s.remove_prefix(1);
    return s;
}

// The label of the first PEM block, when the text starts with one.
std::string_view pem_label(std::string_view contents) noexcept
{
    contents = skip_pem_space(contents);
    constexpr std::string_view begin = "-----BEGIN ";
    if (contents.substr(0, begin.size()) != begin)
        return {};
    contents.remove_prefix(begin.size());
    const auto end = contents.find("-----");
    if (end == std::string_view::npos || end > 64)
        return {};
    return contents.substr(0, end);
}

bool known_label(std::string_view label) noexcept
{
    for (auto l : labels)
        if (l == label)
            return true;
    return false;
}

// Traditional PEM encryption is announced in the headers right after the
// begin line (RFC 1421 §4.6.1.1).
bool has_encrypted_proc_type(std::string_view contents) noexcept
{
    const auto first_break = contents.find('\n');
    if (first_break == std::string_view::npos)
        return false;
    std::string_view rest = contents.substr(first_break + 1);
    constexpr std::string_view proc = "Proc-Type:";
    if (rest.substr(0, proc.size()) != proc)
        return false;
    const auto line_end = rest.find('\n');
    const std::string_view line = rest.substr(0, line_end);
    return line.find("ENCRYPTED") != std::string_view::npos;
}

// Installed when no passphrase is expected, so that OpenSSL never falls back
// to prompting on the terminal.
int refuse_passphrase(char*, std::size_t, std::size_t*, const OSSL_PARAM[], void*) { return 0; }

} // namespace

bool is_pem_private_key(std::string_view contents) noexcept
{
    const auto label = pem_label(contents);
    // Other "... PRIVATE KEY" labels (DSA, ...) count, so that they are
    // reported as unsupported rather than unknown; OpenSSH's own format is
    // not PEM.
    return !label.empty() && label != "OPENSSH PRIVATE KEY" &&
           (known_label(label) || label.ends_with("PRIVATE KEY"));
}

result<bool> pem_private_key_is_encrypted(std::string_view contents)
{
    const auto label = pem_label(contents);
    if (!known_label(label))
        return errc::invalid_format;
    if (label == "ENCRYPTED PRIVATE KEY")
        return true;
    return has_encrypted_proc_type(skip_pem_space(contents));
}

result<private_key> parse_pem_private_key(std::string_view contents, std::optional<std::string_view> passphrase)
{
    const auto label = pem_label(contents);
    if (!known_label(label))
        return label.ends_with("PRIVATE KEY") ? errc::unsupported : errc::invalid_format;
    const bool encrypted = label == "ENCRYPTED PRIVATE KEY" || has_encrypted_proc_type(skip_pem_space(contents));
    if (encrypted && !passphrase)
        return errc::passphrase_required;

    EVP_PKEY* raw = nullptr;
    detail::decoder_ctx_ptr ctx(
        OSSL_DECODER_CTX_new_for_pkey(&raw, "PEM", nullptr, nullptr, EVP_PKEY_KEYPAIR, nullptr, nullptr));
    if (!ctx) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    const bool pass_ok =
        encrypted ? OSSL_DECODER_CTX_set_passphrase(ctx.get(), reinterpret_cast<const unsigned char*>(passphrase->data()),
                                                    passphrase->size()) == 1
                  : OSSL_DECODER_CTX_set_passphrase_cb(ctx.get(), refuse_passphrase, nullptr) == 1;
    if (!pass_ok) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    const unsigned char* data = reinterpret_cast<const unsigned char*>(contents.data());
    std::size_t len = contents.size();
    if (OSSL_DECODER_from_data(ctx.get(), &data, &len) != 1 || raw == nullptr) {
        clear_openssl_errors();
        EVP_PKEY_free(raw);
        return encrypted ? errc::wrong_passphrase : errc::invalid_format;
    }
    auto pkey = detail::adopt(raw);
    auto type = detail::key_type_of(pkey.get());
    if (!type)
        return type.error();
    // from_evp re-reads the private components, which also rejects a PEM
    // block that decoded to a public key only.
    auto key = private_key::from_evp(pkey.get());
    if (!key)
        return key.error() == errc::unsupported ? errc::unsupported : errc::invalid_format;
    return key;
}

result<std::string> write_pem_private_key(const private_key& key, std::string_view passphrase, pem_format format)
{
    if (format == pem_format::traditional && key.type() == key_type::ed25519)
        return errc::unsupported; // PKCS#1/SEC1 have no Ed25519 structure
    const char* structure = format == pem_format::traditional ? "type-specific" : "PrivateKeyInfo";
    detail::encoder_ctx_ptr ctx(
        OSSL_ENCODER_CTX_new_for_pkey(key.evp(), OSSL_KEYMGMT_SELECT_ALL, "PEM", structure, nullptr));
    if (!ctx || OSSL_ENCODER_CTX_get_num_encoders(ctx.get()) == 0) {
        clear_openssl_errors();
        return errc::unsupported;
    }
    if (!passphrase.empty() &&
        (OSSL_ENCODER_CTX_set_cipher(ctx.get(), "AES-256-CBC", nullptr) != 1 ||
         OSSL_ENCODER_CTX_set_passphrase(ctx.get(), reinterpret_cast<const unsigned char*>(passphrase.data()),
                                         passphrase.size()) != 1)) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    unsigned char* out = nullptr;
    std::size_t len = 0;
    if (OSSL_ENCODER_to_data(ctx.get(), &out, &len) != 1 || out == nullptr) {
        clear_openssl_errors();
        return errc::crypto_error;
    }
    std::string text(reinterpret_cast<const char*>(out), len);
    OPENSSL_clear_free(out, len);
    return text;
}

} // namespace longhaul
