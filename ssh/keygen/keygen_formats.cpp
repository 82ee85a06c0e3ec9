#include "ssh/keygen/keygen_formats.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/key_lines.hpp"
#include "ssh/keygen/keygen_cert.hpp"
#include "ssh/keygen/keygen_files.hpp"

#include <openssl/decoder.h>
#include <openssl/evp.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace longhaul {

namespace {

using keygen::fatal;

// What OpenSSH reads of an import (its line buffer is smaller still).
constexpr std::size_t max_import_file = 1024 * 1024;

std::string hex(byte_span b)
{
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (auto c : b) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

// A public key in PEM form through OpenSSL's decoders: `structure` is
// "SubjectPublicKeyInfo" (PKCS#8) or "type-specific" (PKCS#1, RSA).
EVP_PKEY* decode_public_pem(std::string_view text, const char* structure, const char* key_type)
{
    EVP_PKEY* pkey = nullptr;
    OSSL_DECODER_CTX* ctx = OSSL_DECODER_CTX_new_for_pkey(&pkey, "PEM", structure, key_type,
                                                          EVP_PKEY_PUBLIC_KEY, nullptr, nullptr);
    if (!ctx)
        return nullptr;
    const auto* data = reinterpret_cast<const unsigned char*>(text.data());
    std::size_t len = text.size();
    if (OSSL_DECODER_from_data(ctx, &data, &len) != 1) {
        EVP_PKEY_free(pkey);
        pkey = nullptr;
    }
    OSSL_DECODER_CTX_free(ctx);
    return pkey;
}

// The key line sshkey_write prints for a blob: a key or a certificate.
std::optional<std::string> key_line_of_blob(byte_span blob)
{
    if (auto key = public_key::from_blob(blob))
        return format_public_key(*key);
    if (auto cert = certificate::from_blob(blob))
        return std::string(cert->type_name()) + " " + base64_encode(cert->blob());
    return std::nullopt;
}

} // namespace

result<bytes> read_rfc4716_blob(std::string_view text)
{
    std::string encoded;
    int escaped = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n'))
            line.remove_suffix(1);
        if (!line.empty() && line.back() == '\\')
            ++escaped;
        if (line.starts_with("----") || line.find(": ") != std::string_view::npos) {
            if (line.find("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----") != std::string_view::npos)
                return errc::unsupported;
            if (line.find(" END ") != std::string_view::npos)
                break;
            continue; // a boundary or a header
        }
        if (escaped > 0) {
            --escaped; // a header's continuation
            continue;
        }
        encoded.append(line);
        if (encoded.size() > max_import_file)
            return errc::invalid_format;
    }
    // As OpenSSH: some writers end with "=" where none belongs.
    const std::size_t len = encoded.size();
    if (len % 4 == 3 && len >= 3 && encoded[len - 1] == '=' && encoded[len - 2] != '=' && encoded[len - 3] != '=')
        encoded.resize(len - 3);
    auto blob = base64_decode(encoded);
    if (!blob)
        return errc::invalid_format;
    return std::move(*blob);
}

std::string sshfp_records(const public_key& key, const std::string& host, bool generic)
{
    int algorithm = 0;
    switch (key.type()) {
    case key_type::rsa: algorithm = 1; break;
    case key_type::ecdsa_p256:
    case key_type::ecdsa_p384:
    case key_type::ecdsa_p521: algorithm = 3; break;
    case key_type::ed25519: algorithm = 4; break;
    case key_type::sk_ed25519:
    case key_type::sk_ecdsa_p256: break; // no SSHFP number: the caller refuses these
    }
    std::string out;
    for (const auto& [digest_type, alg] : {std::pair{1, hash_alg::sha1}, std::pair{2, hash_alg::sha256}}) {
        const bytes d = digest(alg, key.blob());
        char head[64];
        if (generic)
            std::snprintf(head, sizeof head, " IN TYPE44 \\# %zu %02x %02x ", d.size() + 2, algorithm, digest_type);
        else
            std::snprintf(head, sizeof head, " IN SSHFP %d %d ", algorithm, digest_type);
        out += host + head + hex(d) + "\n";
    }
    return out;
}

int keygen_import(const keygen_options& o)
{
    const std::string file = keygen::identity_or_ask(o, nullptr);
    struct stat st {};
    if (::stat(file.c_str(), &st) == -1)
        fatal(std::string("ssh-keygen: ") + file + ": " + std::strerror(errno));
    std::string text;
    int e = 0;
    if (!keygen::read_capped(file, max_import_file, text, e))
        fatal(std::string("ssh-keygen: ") + file + ": " + std::strerror(e));
    const std::string format = o.format.value_or("RFC4716");
    std::optional<std::string> line;
    if (format == "RFC4716") {
        auto blob = read_rfc4716_blob(text);
        if (!blob && blob.error() == errc::unsupported)
            fatal("do_convert_from_ssh2: SSH.COM private keys are not supported yet");
        if (!blob)
            fatal("do_convert_from_ssh2: base64 decode: invalid format");
        line = key_line_of_blob(*blob);
        if (!line)
            fatal("do_convert_from_ssh2: parse key: invalid format");
    } else {
        const bool pkcs8 = format == "PKCS8";
        // PEM is PKCS#1 only (PEM_read_RSAPublicKey): its own label.
        const bool labelled = pkcs8 || text.find("-----BEGIN RSA PUBLIC KEY-----") != std::string::npos;
        std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> pkey(
            labelled ? decode_public_pem(text, pkcs8 ? "SubjectPublicKeyInfo" : "type-specific", pkcs8 ? nullptr : "RSA")
                     : nullptr,
            EVP_PKEY_free);
        if (!pkey)
            fatal(pkcs8 ? "do_convert_from_pkcs8: " + file + " is not a recognised public key format"
                        : std::string("do_convert_from_pem: unrecognised raw private key format"));
        // OpenSSH 9.2 converts RSA, DSA and ECDSA keys only.
        const int id = EVP_PKEY_get_base_id(pkey.get());
        auto key = id == EVP_PKEY_RSA || id == EVP_PKEY_EC ? public_key::from_evp(pkey.get())
                                                           : result<public_key>(errc::unsupported);
        if (!key)
            fatal("do_convert_from_pkcs8: unsupported pubkey type " + std::to_string(id));
        line = format_public_key(*key);
    }
    std::printf("%s\n", line->c_str());
    return 0;
}

int keygen_dns_records(const keygen_options& o, const std::string& host, bool generic)
{
    // Without -f, the host keys of /etc/ssh that exist.
    std::vector<std::string> files;
    if (o.file)
        files.push_back(*o.file);
    else
        for (const char* t : {"rsa", "dsa", "ecdsa", "ed25519", "xmss"})
            files.push_back(std::string("/etc/ssh/ssh_host_") + t + "_key");
    int printed = 0;
    for (const auto& file : files) {
        struct stat st {};
        if (::stat(file.c_str(), &st) == -1) {
            if (errno == ENOENT)
                continue;
            fatal(file + ": " + std::strerror(errno));
        }
        auto loaded = keygen::load_public_key(file);
        if (!loaded) {
            std::string comment;
            if (keygen::load_certificate_file(file, comment)) {
                // SSHFP has no numbers for certificates.
                std::fprintf(stderr, "export_dns_rr: unsupported algorithm and/or digest_type\r\n");
                ++printed;
                continue;
            }
            // sshkey_load_public says ENOENT for any failure.
            fatal("Failed to read v2 public key from \"" + file + "\": " + std::strerror(ENOENT));
        }
        if (is_security_key(loaded->first.type())) {
            // RFC 4255's registry has no number for security keys.
            std::fprintf(stderr, "export_dns_rr: unsupported algorithm and/or digest_type\r\n");
            ++printed;
            continue;
        }
        std::fputs(sshfp_records(loaded->first, host, generic).c_str(), stdout);
        ++printed;
    }
    if (printed == 0) {
        if (o.file)
            fatal(*o.file + ": " + std::strerror(ENOENT));
        fatal("no keys found.");
    }
    return 0;
}

} // namespace longhaul
