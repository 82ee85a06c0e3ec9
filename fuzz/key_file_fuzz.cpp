// Fuzzes private key file parsing (openssh-key-v1, PEM, PKCS#8).
//
// The first input byte picks a mode, the rest is the input:
//   0  the text as a key file, no passphrase (armor, header, unencrypted
//      keys; encrypted files stop at passphrase_required)
//   1  the text as a key file with passphrase "pw"
//   2  the bytes armored as "OPENSSH PRIVATE KEY" with passphrase "pw", so
//      the binary structure is reached without base64 in the way
//   3  the bytes (after a label byte) armored as a PEM private key, for
//      OpenSSL's decoders, with or without a passphrase
// bcrypt is the cost of a decryption attempt: files may ask for at most one
// round here (key_parse_options), so every attempt costs one bcrypt hash per
// output block instead of up to 2^16.
//
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR writes keys of each type in
// openssh-key-v1, unencrypted and encrypted (aes256-ctr) with passphrase
// "pw" under the fuzz build's cheap KDF, so that decryption succeeds and the
// private section is reached, as text (0x00, 0x01) and as blobs (0x02);
// Security keys' records are read too (parse_openssh_security_key) and
// written back; seeds of both sk types, as text and blob.
// fuzz/make_corpora.sh adds tests/data/keys/*_key (0x00) and ssh-keygen's
// PEM and PKCS#8 files (0x03 + label byte).
#include "common/keys/base64.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "common/wire.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace longhaul;

namespace {

class fixed_random final : public random_source {
public:
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = static_cast<std::uint8_t>(state_ = state_ * 1103515245u + 12345u);
    }

private:
    std::uint32_t state_ = 1;
};

void check(bool ok)
{
    if (!ok)
        std::abort();
}

// Whatever parses must write out and parse back to the same key.
void round_trip(const private_key& key)
{
    fixed_random rng;
    auto text = write_openssh_private_key(key, "", 1, rng);
    check(text.has_value());
    auto back = parse_private_key(*text, std::nullopt);
    check(back.has_value());
    check(back->public_part() == key.public_part());
    check(back->comment() == key.comment());
}

// The same for a security key's record (no secret, a key handle).
void round_trip(const openssh_security_key& key)
{
    fixed_random rng;
    auto text = write_openssh_security_key(key, "", 1, rng);
    check(text.has_value());
    auto back = parse_openssh_security_key(*text, std::nullopt);
    check(back.has_value());
    check(back->key == key.key && back->flags == key.flags && back->key_handle == key.key_handle &&
          back->comment == key.comment);
}

result<void> cheap_kdf(byte_span passphrase, byte_span salt, std::uint32_t rounds, mutable_byte_span out)
{
    if (passphrase.empty() || salt.empty() || rounds == 0 || out.empty())
        return errc::invalid_argument;
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<std::uint8_t>(passphrase[i % passphrase.size()] ^ salt[i % salt.size()] ^ rounds ^ i);
    return {};
}

void parse_text(std::string_view text, std::optional<std::string_view> passphrase)
{
    key_parse_options options;
    options.kdf = cheap_kdf;
    auto key = parse_private_key(text, passphrase, options);
    auto encrypted = private_key_is_encrypted(text);
    auto pub = private_key_file_public_key(text);
    if (key) {
        check(encrypted.has_value());
        // A public key readable without the passphrase is the private one's.
        if (pub)
            check(*pub == key->public_part());
        round_trip(*key);
    }
    if (auto sk = parse_openssh_security_key(text, passphrase, options)) {
        // A security key is never a private key, and its header names it.
        check(!key && pub && *pub == sk->key);
        round_trip(*sk);
    }
}

constexpr std::string_view pem_labels[] = {"PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY",
                                           "EC PRIVATE KEY"};

// ---------------------------------------------------------------- seeds

// The openssh-key-v1 blob of `key` encrypted with aes256-ctr under
// cheap_kdf("pw", salt, 1), from the unencrypted blob's fields.
bytes encrypt_for_fuzzing(byte_span plain_blob)
{
    wire_reader r(plain_blob);
    (void)r.raw(15); // "openssh-key-v1\0"
    (void)r.text();  // "none"
    (void)r.text();  // "none"
    (void)r.string();
    (void)r.u32();
    const bytes pub = to_bytes(r.string());
    bytes priv = to_bytes(r.string());
    check(r.ok());
    // Strip the 1, 2, 3... padding to 8 and pad to 16 instead.
    std::size_t pad = priv.back();
    if (pad >= 1 && pad < 8 && pad <= priv.size()) {
        bool ok = true;
        for (std::size_t i = 0; i < pad; ++i)
            ok &= priv[priv.size() - pad + i] == i + 1;
        if (ok)
            priv.resize(priv.size() - pad);
    }
    for (std::uint8_t i = 1; priv.size() % 16 != 0; ++i)
        priv.push_back(i);
    const bytes salt(16, 0x42);
    std::uint8_t kiv[48];
    check(cheap_kdf(as_bytes("pw"), salt, 1, mutable_byte_span(kiv, sizeof kiv)).has_value());
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    int len = 0;
    check(EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nullptr, kiv, kiv + 32) == 1);
    check(EVP_EncryptUpdate(ctx, priv.data(), &len, priv.data(), static_cast<int>(priv.size())) == 1);
    EVP_CIPHER_CTX_free(ctx);
    bytes blob;
    bytes kdfopts;
    wire_writer(kdfopts).string(salt).u32(1);
    wire_writer(blob).raw(as_bytes(std::string_view("openssh-key-v1\0", 15))).string("aes256-ctr").string("bcrypt")
        .string(kdfopts).u32(1).string(pub).string(priv);
    return blob;
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](std::uint8_t mode, byte_span b) {
        fuzz::write_seed(dir, "seed-" + std::to_string(n++), fuzz::with_prefix({mode}, b));
    };
    for (auto [t, bits] : {std::pair{key_type::ed25519, 0}, {key_type::ecdsa_p256, 256}, {key_type::ecdsa_p521, 521},
                           {key_type::rsa, 2048}}) {
        auto k = private_key::generate(t, bits);
        check(k.has_value());
        k->set_comment("fuzz");
        fixed_random rng;
        auto text = write_openssh_private_key(*k, "", 1, rng);
        check(text.has_value());
        put(0, as_bytes(*text));
        auto blob = armor_decode(*text, openssh_key_label);
        check(blob.has_value());
        put(2, blob->span());
        const bytes enc = encrypt_for_fuzzing(blob->span());
        put(2, enc);
        const std::string enc_text = armor_encode(openssh_key_label, enc);
        key_parse_options o;
        o.kdf = cheap_kdf;
        auto back = parse_private_key(enc_text, "pw", o);
        check(back.has_value() && back->public_part() == k->public_part());
        put(1, as_bytes(enc_text));
    }
    // Security keys' records, as ssh-keygen -t ed25519-sk / ecdsa-sk writes
    // them after enrolment (the public keys borrowed from plain keys).
    for (key_type t : {key_type::ed25519, key_type::ecdsa_p256}) {
        auto k = private_key::generate(t, t == key_type::ed25519 ? 0 : 256);
        check(k.has_value());
        wire_reader r(k->public_part().blob());
        (void)r.text();
        bytes sk_blob;
        wire_writer w(sk_blob);
        if (t == key_type::ed25519) {
            w.string(key_type_name(key_type::sk_ed25519)).string(r.string());
        } else {
            const auto curve = r.text();
            w.string(key_type_name(key_type::sk_ecdsa_p256)).string(curve).string(r.string());
        }
        w.string("ssh:");
        auto sk_key = public_key::from_blob(sk_blob);
        check(sk_key.has_value());
        openssh_security_key record;
        record.key = std::move(*sk_key);
        record.flags = 0x05;
        record.key_handle = bytes(48, 0x5a);
        record.comment = "fuzz-sk";
        fixed_random rng;
        auto text = write_openssh_security_key(record, "", 1, rng);
        check(text.has_value());
        put(0, as_bytes(*text));
        auto blob = armor_decode(*text, openssh_key_label);
        check(blob.has_value());
        put(2, blob->span());
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const std::uint8_t mode = data[0] & 3;
    const byte_span rest(data + 1, size - 1);
    switch (mode) {
    case 0:
        parse_text(as_string_view(rest), std::nullopt);
        break;
    case 1:
        parse_text(as_string_view(rest), "pw");
        break;
    case 2:
        parse_text(armor_encode(openssh_key_label, rest), "pw");
        break;
    case 3: {
        if (rest.empty())
            break;
        const auto label = pem_labels[rest[0] & 3];
        const bool with_pass = (rest[0] & 4) != 0;
        parse_text(armor_encode(label, rest.subspan(1), 64), with_pass ? std::optional<std::string_view>("pw")
                                                                       : std::nullopt);
        break;
    }
    }
    return 0;
}
