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
// Seeds: tests/data/keys/*_key prefixed with 0x00, and files written by
// write_openssh_private_key with passphrase "pw" and 1 round, prefixed with
// 0x01, or their decoded blobs prefixed with 0x02.
#include "common/keys/base64.hpp"
#include "common/keys/key_file.hpp"

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
}

constexpr std::string_view pem_labels[] = {"PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY",
                                           "EC PRIVATE KEY"};

} // namespace

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
