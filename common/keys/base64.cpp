#include "common/keys/base64.hpp"

#include "common/text_parse.hpp"

#include <cstdint>

namespace longhaul {

namespace {

// All-ones when lo <= c <= hi, else zero; c, lo, hi < 2^31, no branches.
constexpr std::uint32_t range_mask(std::uint32_t c, std::uint32_t lo, std::uint32_t hi) noexcept
{
    const std::uint32_t below = (c - lo) >> 31;      // 1 when c < lo
    const std::uint32_t above = (hi - c) >> 31;      // 1 when c > hi
    return 0u - (1u ^ (below | above));
}

constexpr char encode_6bits(std::uint32_t v) noexcept
{
    std::uint32_t c = (range_mask(v, 0, 25) & (v + 'A')) | (range_mask(v, 26, 51) & (v - 26 + 'a')) |
                      (range_mask(v, 52, 61) & (v - 52 + '0')) | (range_mask(v, 62, 62) & '+') |
                      (range_mask(v, 63, 63) & '/');
    return static_cast<char>(c);
}

// The 6-bit value of c; `valid` is and-ed with all-ones when c is in the
// alphabet and with zero otherwise.
constexpr std::uint32_t decode_6bits(std::uint32_t c, std::uint32_t& valid) noexcept
{
    const std::uint32_t upper = range_mask(c, 'A', 'Z');
    const std::uint32_t lower = range_mask(c, 'a', 'z');
    const std::uint32_t digit = range_mask(c, '0', '9');
    const std::uint32_t plus = range_mask(c, '+', '+');
    const std::uint32_t slash = range_mask(c, '/', '/');
    valid &= upper | lower | digit | plus | slash;
    return (upper & (c - 'A')) | (lower & (c - 'a' + 26)) | (digit & (c - '0' + 52)) | (plus & 62) | (slash & 63);
}

static_assert(encode_6bits(0) == 'A' && encode_6bits(26) == 'a' && encode_6bits(52) == '0' &&
              encode_6bits(62) == '+' && encode_6bits(63) == '/');

std::size_t padding_of(std::string_view text) noexcept
{
    if (text.size() >= 1 && text.back() == '=')
        return (text.size() >= 2 && text[text.size() - 2] == '=') ? 2 : 1;
    return 0;
}

// Decodes into out (exactly base64_decoded_size bytes). Only the length and
// padding position steer control flow; the data does not.
bool decode_into(std::string_view text, mutable_byte_span out) noexcept
{
    const std::size_t pad = padding_of(text);
    std::uint32_t valid = ~0u;
    std::size_t o = 0;
    for (std::size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        const std::size_t chars = last ? 4 - pad : 4;
        std::uint32_t v[4] = {0, 0, 0, 0};
        for (std::size_t k = 0; k < chars; ++k)
            v[k] = decode_6bits(static_cast<unsigned char>(text[i + k]), valid);
        const std::uint32_t w = v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3];
        out[o++] = static_cast<std::uint8_t>(w >> 16);
        if (chars >= 3)
            out[o++] = static_cast<std::uint8_t>(w >> 8);
        if (chars == 4)
            out[o++] = static_cast<std::uint8_t>(w);
        // Bits that fall off the end must be zero (one encoding per value).
        if (chars == 2)
            valid &= 0u - static_cast<std::uint32_t>((w & 0xffff) == 0);
        else if (chars == 3)
            valid &= 0u - static_cast<std::uint32_t>((w & 0xff) == 0);
    }
    return valid == ~0u;
}

std::string begin_line(std::string_view label) { return "-----BEGIN " + std::string(label) + "-----"; }
std::string end_line(std::string_view label) { return "-----END " + std::string(label) + "-----"; }

} // namespace

std::size_t base64_decoded_size(std::string_view text) noexcept
{
    if (text.size() % 4 != 0)
        return 0;
    return text.size() / 4 * 3 - padding_of(text);
}

namespace {

// Appends base64 of data to out, inserting '\n' every `width` characters
// when width is non-zero (and after the last line).
void encode_append(std::string& out, byte_span data, bool pad, std::size_t width)
{
    std::size_t column = 0;
    auto put = [&](char c) {
        out.push_back(c);
        if (width != 0 && ++column == width) {
            out.push_back('\n');
            column = 0;
        }
    };
    std::size_t i = 0;
    for (; i + 3 <= data.size(); i += 3) {
        const std::uint32_t w = std::uint32_t(data[i]) << 16 | std::uint32_t(data[i + 1]) << 8 | data[i + 2];
        put(encode_6bits(w >> 18));
        put(encode_6bits((w >> 12) & 63));
        put(encode_6bits((w >> 6) & 63));
        put(encode_6bits(w & 63));
    }
    const std::size_t rest = data.size() - i;
    if (rest != 0) {
        std::uint32_t w = std::uint32_t(data[i]) << 16;
        if (rest == 2)
            w |= std::uint32_t(data[i + 1]) << 8;
        put(encode_6bits(w >> 18));
        put(encode_6bits((w >> 12) & 63));
        if (rest == 2)
            put(encode_6bits((w >> 6) & 63));
        if (pad) {
            put('=');
            if (rest == 1)
                put('=');
        }
    }
    if (width != 0 && column != 0)
        out.push_back('\n');
}

} // namespace

std::string base64_encode(byte_span data, bool pad)
{
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    encode_append(out, data, pad, 0);
    return out;
}

result<bytes> base64_decode(std::string_view text)
{
    if (text.size() % 4 != 0)
        return errc::malformed;
    bytes out(base64_decoded_size(text));
    if (!decode_into(text, out))
        return errc::malformed;
    return out;
}

result<secret_bytes> base64_decode_secret(std::string_view text)
{
    if (text.size() % 4 != 0)
        return errc::malformed;
    secret_bytes out(base64_decoded_size(text));
    if (!decode_into(text, out.span()))
        return errc::malformed;
    return out;
}

std::string armor_encode(std::string_view label, byte_span data, std::size_t width)
{
    const std::string begin = begin_line(label), end = end_line(label);
    const std::size_t chars = (data.size() + 2) / 3 * 4;
    const std::size_t lines = width == 0 ? 1 : (chars + width - 1) / width;
    // Sized exactly, so the text (a private key, possibly unencrypted) is
    // never copied by a reallocation.
    std::string out;
    out.reserve(begin.size() + 1 + chars + lines + end.size() + 1);
    out.append(begin).push_back('\n');
    encode_append(out, data, true, width == 0 ? chars : width);
    out.append(end).push_back('\n');
    return out;
}

bool armor_starts_with(std::string_view text, std::string_view label) noexcept
{
    text = skip_spaces(text);
    constexpr std::string_view begin = "-----BEGIN ";
    constexpr std::string_view dashes = "-----";
    return text.substr(0, begin.size()) == begin && text.substr(begin.size(), label.size()) == label &&
           text.substr(begin.size() + label.size(), dashes.size()) == dashes;
}

result<secret_bytes> armor_decode(std::string_view text, std::string_view label)
{
    if (!armor_starts_with(text, label))
        return errc::invalid_format;
    text = skip_spaces(text);
    const std::string begin = begin_line(label), end = end_line(label);
    text.remove_prefix(begin.size());
    if (text.empty() || (text.front() != '\n' && text.substr(0, 2) != "\r\n"))
        return errc::invalid_format;

    const std::size_t end_at = text.find(end);
    if (end_at == std::string_view::npos)
        return errc::invalid_format;
    if (!skip_spaces(text.substr(end_at + end.size())).empty())
        return errc::invalid_format;

    // The body is secret for private keys: gather it into a buffer sized up
    // front (so it never reallocates) and wipe it afterwards.
    const std::string_view body = text.substr(0, end_at);
    secret_bytes joined(body.size());
    std::size_t n = 0;
    for (char c : body) {
        if (is_space_char(c))
            continue;
        joined.data()[n++] = static_cast<std::uint8_t>(c);
    }
    if (n == 0)
        return errc::invalid_format;
    auto decoded = base64_decode_secret(as_string_view(byte_span(joined.data(), n)));
    if (!decoded)
        return errc::invalid_format;
    return decoded;
}

} // namespace longhaul
