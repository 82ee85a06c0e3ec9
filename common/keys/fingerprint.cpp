#include "common/keys/fingerprint.hpp"

#include "common/crypto/hash.hpp"
#include "common/keys/base64.hpp"
#include "common/text_parse.hpp"

#include <algorithm>
#include <cstdio>

namespace longhaul {

namespace {

hash_alg to_hash(fingerprint_hash h)
{
    switch (h) {
    case fingerprint_hash::md5: return hash_alg::md5;
    case fingerprint_hash::sha1: return hash_alg::sha1;
    case fingerprint_hash::sha256: return hash_alg::sha256;
    case fingerprint_hash::sha384: return hash_alg::sha384;
    case fingerprint_hash::sha512: return hash_alg::sha512;
    }
    return hash_alg::sha256;
}

// The field: a 17x9 board the bishop walks on, two bits of the digest per
// step; a square's symbol says how often it was visited.
constexpr int field_x = 17;
constexpr int field_y = 9;
constexpr std::string_view symbols = " .o+=*BOX@%&#/^SE";

std::string border(std::string_view label)
{
    std::string line = "+";
    const int pad = (field_x - static_cast<int>(label.size())) / 2;
    int i = 0;
    for (; i < pad; ++i)
        line.push_back('-');
    line.append(label);
    for (i += static_cast<int>(label.size()); i < field_x; ++i)
        line.push_back('-');
    line.push_back('+');
    return line;
}

} // namespace

std::string_view fingerprint_hash_name(fingerprint_hash h) noexcept
{
    switch (h) {
    case fingerprint_hash::md5: return "MD5";
    case fingerprint_hash::sha1: return "SHA1";
    case fingerprint_hash::sha256: return "SHA256";
    case fingerprint_hash::sha384: return "SHA384";
    case fingerprint_hash::sha512: return "SHA512";
    }
    return "SHA256";
}

std::optional<fingerprint_hash> parse_fingerprint_hash(std::string_view name)
{
    for (auto h : {fingerprint_hash::md5, fingerprint_hash::sha1, fingerprint_hash::sha256, fingerprint_hash::sha384,
                   fingerprint_hash::sha512})
        if (iequals(fingerprint_hash_name(h), name))
            return h;
    return std::nullopt;
}

bytes key_digest(const public_key& key, fingerprint_hash h) { return digest(to_hash(h), key.blob()); }

std::string key_fingerprint(const public_key& key, fingerprint_hash h) { return blob_fingerprint(key.blob(), h); }

std::string blob_fingerprint(byte_span blob, fingerprint_hash h)
{
    const bytes d = digest(to_hash(h), blob);
    std::string out(fingerprint_hash_name(h));
    out.push_back(':');
    if (h == fingerprint_hash::md5) {
        char hex[4];
        for (std::size_t i = 0; i < d.size(); ++i) {
            std::snprintf(hex, sizeof hex, i == 0 ? "%02x" : ":%02x", d[i]);
            out += hex;
        }
        return out;
    }
    return out + base64_encode(d, false);
}

std::string randomart(byte_span digest, std::string_view key_type, int bits, std::string_view hash_name)
{
    unsigned char field[field_x][field_y] = {};
    const int len = static_cast<int>(symbols.size()) - 1; // 'E' marks the end, 'S' (len - 1) the start
    int x = field_x / 2, y = field_y / 2;
    for (std::uint8_t byte : digest) {
        unsigned input = byte;
        for (int step = 0; step < 4; ++step) {
            x += (input & 0x1) ? 1 : -1;
            y += (input & 0x2) ? 1 : -1;
            x = std::clamp(x, 0, field_x - 1);
            y = std::clamp(y, 0, field_y - 1);
            if (field[x][y] < len - 2)
                ++field[x][y];
            input >>= 2;
        }
    }
    field[field_x / 2][field_y / 2] = static_cast<unsigned char>(len - 1);
    field[x][y] = static_cast<unsigned char>(len);

    std::string title = "[" + std::string(key_type) + " " + std::to_string(bits) + "]";
    // Too wide for the border: just the type, as OpenSSH falls back to.
    if (title.size() > field_x)
        title = "[" + std::string(key_type) + "]";
    // OpenSSH formats the title into a buffer of field_x bytes, so at most
    // field_x - 1 characters survive: "[ED25519-SK-CERT]" loses its "]".
    if (title.size() > field_x - 1)
        title.resize(field_x - 1);
    std::string out = border(title) + "\n";
    for (int row = 0; row < field_y; ++row) {
        out.push_back('|');
        for (int col = 0; col < field_x; ++col)
            out.push_back(symbols[std::min<int>(field[col][row], len)]);
        out += "|\n";
    }
    out += border("[" + std::string(hash_name) + "]");
    return out;
}

std::string key_randomart(const public_key& key, fingerprint_hash h)
{
    return randomart(key_digest(key, h), key_type_short_name(key.type()), key.bits(), fingerprint_hash_name(h));
}

std::string bubblebabble(byte_span d)
{
    static constexpr char vowels[] = "aeiouy";
    static constexpr char consonants[] = "bcdfghklmnprstvzx";
    const std::size_t rounds = d.size() / 2 + 1;
    std::size_t seed = 1;
    std::string out = "x";
    for (std::size_t i = 0; i < rounds; ++i) {
        if (i + 1 < rounds || d.size() % 2 != 0) {
            const unsigned b = d[2 * i];
            out += vowels[(((b >> 6) & 3) + seed) % 6];
            out += consonants[(b >> 2) & 15];
            out += vowels[((b & 3) + seed / 6) % 6];
            if (i + 1 < rounds) {
                const unsigned c = d[2 * i + 1];
                out += consonants[(c >> 4) & 15];
                out += '-';
                out += consonants[c & 15];
                seed = (seed * 5 + b * 7 + c) % 36;
            }
        } else {
            out += vowels[seed % 6];
            out += consonants[16];
            out += vowels[seed / 6];
        }
    }
    out += 'x';
    return out;
}

} // namespace longhaul
