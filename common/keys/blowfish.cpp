#include "common/keys/blowfish.hpp"

namespace longhaul {

namespace {
#include "common/keys/blowfish_pi.inc"
} // namespace

std::uint32_t blowfish_stream_word(byte_span data, std::size_t& pos) noexcept
{
    std::uint32_t w = 0;
    for (int i = 0; i < 4; ++i) {
        if (pos >= data.size())
            pos = 0;
        w = w << 8 | data[pos++];
    }
    return w;
}

blowfish::blowfish() noexcept
{
    for (std::size_t i = 0; i < p_.size(); ++i)
        p_[i] = blowfish_initial_p[i];
    for (std::size_t b = 0; b < 4; ++b)
        for (std::size_t i = 0; i < 256; ++i)
            s_[b][i] = blowfish_initial_s[b][i];
}

blowfish::blowfish(byte_span key) noexcept : blowfish() { expand0_state(key); }

blowfish::~blowfish()
{
    // The state is a function of the key (and in bcrypt, of a password).
    cleanse(p_.data(), sizeof(p_));
    cleanse(s_.data(), sizeof(s_));
}

void blowfish::encrypt(std::uint32_t& left, std::uint32_t& right) const noexcept
{
    std::uint32_t l = left, r = right;
    for (int i = 0; i < 16; i += 2) {
        l ^= p_[i];
        r ^= f(l);
        r ^= p_[i + 1];
        l ^= f(r);
    }
    l ^= p_[16];
    r ^= p_[17];
    left = r;
    right = l;
}

void blowfish::decrypt(std::uint32_t& left, std::uint32_t& right) const noexcept
{
    std::uint32_t l = left, r = right;
    for (int i = 17; i > 1; i -= 2) {
        l ^= p_[i];
        r ^= f(l);
        r ^= p_[i - 1];
        l ^= f(r);
    }
    l ^= p_[1];
    r ^= p_[0];
    left = r;
    right = l;
}

void blowfish::encrypt_block(const std::uint8_t in[8], std::uint8_t out[8]) const noexcept
{
    std::uint32_t l = std::uint32_t(in[0]) << 24 | std::uint32_t(in[1]) << 16 | std::uint32_t(in[2]) << 8 | in[3];
    std::uint32_t r = std::uint32_t(in[4]) << 24 | std::uint32_t(in[5]) << 16 | std::uint32_t(in[6]) << 8 | in[7];
    encrypt(l, r);
    for (int i = 0; i < 4; ++i) {
        out[i] = std::uint8_t(l >> (24 - 8 * i));
        out[4 + i] = std::uint8_t(r >> (24 - 8 * i));
    }
}

void blowfish::decrypt_block(const std::uint8_t in[8], std::uint8_t out[8]) const noexcept
{
    std::uint32_t l = std::uint32_t(in[0]) << 24 | std::uint32_t(in[1]) << 16 | std::uint32_t(in[2]) << 8 | in[3];
    std::uint32_t r = std::uint32_t(in[4]) << 24 | std::uint32_t(in[5]) << 16 | std::uint32_t(in[6]) << 8 | in[7];
    decrypt(l, r);
    for (int i = 0; i < 4; ++i) {
        out[i] = std::uint8_t(l >> (24 - 8 * i));
        out[4 + i] = std::uint8_t(r >> (24 - 8 * i));
    }
}

void blowfish::xor_key_into_p(byte_span key) noexcept
{
    if (key.empty())
        return;
    std::size_t pos = 0;
    for (auto& w : p_)
        w ^= blowfish_stream_word(key, pos);
}

void blowfish::expand_state(byte_span salt, byte_span key) noexcept
{
    xor_key_into_p(key);

    // bcrypt calls this 129 times per hash with 64-byte salts: turning the
    // salt into words once (when it is whole words) keeps the byte-wise
    // stream out of the 521-encryption loop.
    std::uint32_t words[16];
    std::size_t nwords = 0;
    const bool precomputed = !salt.empty() && salt.size() % 4 == 0 && salt.size() <= sizeof(words);
    if (precomputed) {
        std::size_t pos = 0;
        nwords = salt.size() / 4;
        for (std::size_t i = 0; i < nwords; ++i)
            words[i] = blowfish_stream_word(salt, pos);
    }

    std::size_t pos = 0, wi = 0;
    std::uint32_t l = 0, r = 0;
    auto fill = [&](std::uint32_t* dest, std::size_t n) {
        for (std::size_t i = 0; i < n; i += 2) {
            if (precomputed) {
                l ^= words[wi];
                r ^= words[wi + 1 == nwords ? 0 : wi + 1];
                wi = (wi + 2) % nwords;
            } else if (!salt.empty()) {
                l ^= blowfish_stream_word(salt, pos);
                r ^= blowfish_stream_word(salt, pos);
            }
            encrypt(l, r);
            dest[i] = l;
            dest[i + 1] = r;
        }
    };
    fill(p_.data(), p_.size());
    for (auto& box : s_)
        fill(box.data(), box.size());
    cleanse(words, sizeof(words));
}

void blowfish::expand0_state(byte_span key) noexcept { expand_state({}, key); }

} // namespace longhaul
