#include "common/keys/openssh_key_v1.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/bcrypt_pbkdf.hpp"
#include "common/keys/evp_util.hpp"
#include "common/keys/key_cipher.hpp"
#include "common/wire.hpp"

#include <cstring>

namespace longhaul {

namespace {

constexpr std::string_view key_v1_magic{"openssh-key-v1\0", 15};
constexpr std::size_t salt_len = 16;
constexpr std::size_t max_salt_len = 1024;
constexpr std::size_t max_comment_len = 64 * 1024;

// The decoded file, split into its parts. Views point into `blob`.
struct parsed_file {
    secret_bytes blob;
    openssh_key_header header;
    const detail::key_cipher* cipher = nullptr;
    byte_span salt;
    byte_span encrypted;
    byte_span tag;
};

result<parsed_file> parse_file(std::string_view contents, const key_parse_options& options)
{
    auto blob = armor_decode(contents, openssh_key_label);
    if (!blob)
        return errc::invalid_format;
    parsed_file f;
    f.blob = std::move(*blob);

    wire_reader r(f.blob.span());
    const byte_span m = r.raw(key_v1_magic.size());
    const auto cipher = r.text(64);
    const auto kdf = r.text(64);
    const byte_span kdf_options = r.string(max_salt_len + 8);
    const std::uint32_t nkeys = r.u32();
    const byte_span pub_blob = r.string();
    if (!r.ok() || as_string_view(m) != key_v1_magic)
        return errc::invalid_format;
    // OpenSSH reads and writes exactly one key per file.
    if (nkeys != 1)
        return errc::invalid_format;

    f.cipher = detail::find_key_cipher(cipher);
    if (f.cipher == nullptr)
        return errc::unsupported;
    f.header.cipher = std::string(cipher);
    f.header.kdf = std::string(kdf);

    if (kdf == "none") {
        if (cipher != "none" || !kdf_options.empty())
            return errc::invalid_format;
    } else if (kdf == "bcrypt") {
        // Cipher "none" under bcrypt is what `ssh-keygen -Z none -N pass`
        // writes: OpenSSH asks for a passphrase and takes any.
        wire_reader o(kdf_options);
        f.salt = o.string(max_salt_len);
        f.header.kdf_rounds = o.u32();
        if (!o.finish() || f.salt.empty() || f.header.kdf_rounds == 0)
            return errc::invalid_format;
        if (f.header.kdf_rounds > options.max_kdf_rounds)
            return errc::too_large;
    } else {
        return errc::unsupported;
    }

    f.encrypted = r.string(f.blob.size());
    f.tag = r.raw(f.cipher->tag_len);
    if (!r.finish())
        return errc::invalid_format;
    if (f.encrypted.empty() || f.encrypted.size() % f.cipher->block_size != 0)
        return errc::invalid_format;

    auto key = public_key::from_blob(pub_blob);
    if (!key)
        return key.error();
    f.header.key = std::move(*key);
    return f;
}

// The check-ints, which open the section.
result<void> read_check_ints(wire_reader& r, bool encrypted)
{
    const std::uint32_t check1 = r.u32();
    const std::uint32_t check2 = r.u32();
    if (!r.ok())
        return errc::invalid_format;
    if (check1 != check2)
        return encrypted ? errc::wrong_passphrase : errc::invalid_format;
    return {};
}

// What follows the key fields: comment, then padding 1, 2, 3, ...
result<std::string> read_comment_and_padding(wire_reader& r)
{
    const auto comment = r.text(max_comment_len);
    if (!r.ok() || comment.find('\0') != std::string_view::npos)
        return errc::invalid_format;
    const byte_span padding = r.rest();
    for (std::size_t i = 0; i < padding.size(); ++i)
        if (padding[i] != static_cast<std::uint8_t>(i + 1))
            return errc::invalid_format;
    return std::string(comment);
}

// After the check-ints: key fields, comment, then padding.
result<private_key> parse_private_section(byte_span plain, bool encrypted, const public_key& header_key)
{
    wire_reader r(plain);
    if (auto c = read_check_ints(r, encrypted); !c)
        return c.error();

    // The header already named a supported type, so any failure here,
    // "unknown type" included, means the section is corrupt.
    auto key = private_key::deserialize(r);
    if (!key)
        return errc::invalid_format;
    auto comment = read_comment_and_padding(r);
    if (!comment)
        return comment.error();
    // The unencrypted copy of the public key must be the encrypted one.
    if (!(key->public_part() == header_key))
        return errc::invalid_format;
    key->set_comment(std::move(*comment));
    return key;
}

// A security key's section: the public key's fields (application
// included), byte flags, string key handle, string reserved.
result<openssh_security_key> parse_security_key_section(byte_span plain, bool encrypted, const public_key& header_key)
{
    wire_reader r(plain);
    if (auto c = read_check_ints(r, encrypted); !c)
        return c.error();
    const std::size_t start = r.position();
    (void)r.text(64);
    (void)r.string();
    if (header_key.type() == key_type::sk_ecdsa_p256)
        (void)r.string();
    (void)r.string();
    if (!r.ok())
        return errc::invalid_format;
    auto key = public_key::from_blob(plain.subspan(start, r.position() - start));
    openssh_security_key out;
    out.flags = r.u8();
    const byte_span handle = r.string(max_comment_len);
    (void)r.string(max_comment_len); // reserved
    if (!r.ok() || !key || !(*key == header_key))
        return errc::invalid_format;
    auto comment = read_comment_and_padding(r);
    if (!comment)
        return comment.error();
    out.key = std::move(*key);
    out.key_handle = to_bytes(handle);
    out.comment = std::move(*comment);
    return out;
}

// Key and IV, derived together (bcrypt_pbkdf interleaves its output).
result<secret_bytes> derive_key_iv(const detail::key_cipher& c, std::string_view passphrase, byte_span salt,
                                   std::uint32_t rounds, key_derivation_fn kdf = nullptr)
{
    secret_bytes key_iv(c.key_len + c.iv_len);
    if (auto r = (kdf != nullptr ? kdf : bcrypt_pbkdf)(as_bytes(passphrase), salt, rounds, key_iv.span()); !r)
        return r.error();
    return key_iv;
}

} // namespace

result<openssh_key_header> parse_openssh_key_header(std::string_view file_contents, const key_parse_options& options)
{
    auto f = parse_file(file_contents, options);
    if (!f)
        return f.error();
    return std::move(f->header);
}

namespace {

// The private section in the clear (a copy, wiped when dropped).
result<secret_bytes> plain_section(const parsed_file& f, std::optional<std::string_view> passphrase,
                                   const key_parse_options& options)
{
    const detail::key_cipher& c = *f.cipher;
    if (!f.header.encrypted())
        return secret_bytes(f.encrypted);
    if (!passphrase)
        return errc::passphrase_required;
    // bcrypt_pbkdf refuses empty passwords, and so does OpenSSH.
    if (passphrase->empty())
        return errc::wrong_passphrase;
    if (c.key_len == 0)
        return secret_bytes(f.encrypted);
    auto key_iv = derive_key_iv(c, *passphrase, f.salt, f.header.kdf_rounds, options.kdf);
    if (!key_iv)
        return key_iv.error();
    secret_bytes plain(f.encrypted);
    const byte_span key = key_iv->span().first(c.key_len);
    const byte_span iv = key_iv->span().subspan(c.key_len);
    if (auto r = detail::key_cipher_decrypt(c, key, iv, plain.span(), f.tag); !r)
        return r.error() == errc::mac_mismatch ? errc::wrong_passphrase : r.error();
    return plain;
}

} // namespace

result<private_key> parse_openssh_private_key(std::string_view file_contents,
                                              std::optional<std::string_view> passphrase,
                                              const key_parse_options& options)
{
    auto f = parse_file(file_contents, options);
    if (!f)
        return f.error();
    // Said before any passphrase prompt: even the right one would not
    // make the key usable here.
    if (is_security_key(f->header.key.type()))
        return errc::security_key_unsupported;
    auto plain = plain_section(*f, passphrase, options);
    if (!plain)
        return plain.error();
    return parse_private_section(plain->span(), f->header.encrypted(), f->header.key);
}

result<openssh_security_key> parse_openssh_security_key(std::string_view file_contents,
                                                        std::optional<std::string_view> passphrase,
                                                        const key_parse_options& options)
{
    auto f = parse_file(file_contents, options);
    if (!f)
        return f.error();
    if (!is_security_key(f->header.key.type()))
        return errc::unsupported;
    auto plain = plain_section(*f, passphrase, options);
    if (!plain)
        return plain.error();
    return parse_security_key_section(plain->span(), f->header.encrypted(), f->header.key);
}

bool openssh_key_cipher_known(std::string_view name) noexcept
{
    return detail::find_key_cipher(name) != nullptr;
}

namespace {

// The armored file around a private section whose key fields
// `write_fields` writes (the check-ints before them, the comment and
// padding after).
template <class Fields>
result<std::string> write_key_file(const public_key& pub_key, std::string_view comment, std::string_view passphrase,
                                   int kdf_rounds, random_source& rng, std::string_view cipher_name,
                                   std::size_t fields_size, Fields&& write_fields)
{
    const bool encrypt = !passphrase.empty();
    const detail::key_cipher* c = detail::find_key_cipher(encrypt ? cipher_name : "none");
    if (c == nullptr || (encrypt && kdf_rounds < 1))
        return errc::invalid_argument;
    if (comment.find('\0') != std::string_view::npos || comment.size() > max_comment_len)
        return errc::invalid_argument;

    // Reserved once so no copy of the section is left behind.
    detail::wiped_bytes section(fields_size + comment.size() + 64);
    std::uint8_t check[4];
    rng.fill(check);
    wire_writer w(section.get());
    w.raw(byte_span(check, 4)).raw(byte_span(check, 4));
    if (auto r = write_fields(w); !r)
        return r.error();
    w.string(comment);
    for (std::uint8_t pad = 1; section.get().size() % c->block_size != 0; ++pad)
        w.u8(pad);

    bytes kdf_options, salt(encrypt ? salt_len : 0);
    bytes tag(c->tag_len);
    if (encrypt) {
        rng.fill(salt);
        wire_writer(kdf_options).string(salt).u32(static_cast<std::uint32_t>(kdf_rounds));
    }
    // Cipher "none" with a passphrase (ssh-keygen -Z none): bcrypt named,
    // nothing encrypted, as OpenSSH writes it.
    if (encrypt && c->key_len > 0) {
        auto key_iv = derive_key_iv(*c, passphrase, salt, static_cast<std::uint32_t>(kdf_rounds));
        if (!key_iv)
            return key_iv.error();
        const byte_span k = key_iv->span().first(c->key_len);
        const byte_span iv = key_iv->span().subspan(c->key_len);
        if (auto r = detail::key_cipher_encrypt(*c, k, iv, section.get(), tag); !r)
            return r.error();
    }

    // For cipher "none" the whole file is secret too.
    const bytes& pub = pub_key.blob();
    detail::wiped_bytes file(section.get().size() + pub.size() + kdf_options.size() + 256);
    wire_writer(file.get())
        .raw(as_bytes(key_v1_magic))
        .string(c->name)
        .string(encrypt ? "bcrypt" : "none")
        .string(kdf_options)
        .u32(1)
        .string(pub)
        .string(section.span())
        .raw(tag);
    return armor_encode(openssh_key_label, file.span());
}

} // namespace

result<std::string> write_openssh_private_key(const private_key& key, std::string_view passphrase, int kdf_rounds,
                                              random_source& rng, std::string_view cipher_name)
{
    // At most ~8.5 KiB of RSA-16384 fields.
    return write_key_file(key.public_part(), key.comment(), passphrase, kdf_rounds, rng, cipher_name, 16 * 1024,
                          [&](wire_writer& w) { return key.serialize(w); });
}

result<std::string> write_openssh_security_key(const openssh_security_key& key, std::string_view passphrase,
                                               int kdf_rounds, random_source& rng, std::string_view cipher_name)
{
    if (!is_security_key(key.key.type()))
        return errc::invalid_argument;
    // The public blob's fields (type, key, application) are the section's
    // first fields; then the flags, the key handle and an empty reserved.
    const bytes& pub = key.key.blob();
    return write_key_file(key.key, key.comment, passphrase, kdf_rounds, rng, cipher_name,
                          pub.size() + key.key_handle.size() + 16, [&](wire_writer& w) -> result<void> {
                              w.raw(pub).u8(key.flags).string(key.key_handle).string("");
                              return {};
                          });
}

} // namespace longhaul
