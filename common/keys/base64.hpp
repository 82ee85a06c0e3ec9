// Base64 (RFC 4648 §4, standard alphabet) and the "-----BEGIN X-----" armor
// of OpenSSH key and signature files.
//
// Decoding is strict, as OpenSSH's b64_pton is: '=' padding is required,
// the length must be a multiple of four, unused bits must be zero, and
// nothing outside the alphabet is accepted. The character mapping is
// branch-free and table-free in both directions, because the text decoded
// is often a private key file.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <string>
#include <string_view>

namespace longhaul {

std::string base64_encode(byte_span data, bool pad = true);
result<bytes> base64_decode(std::string_view text);
// The same, into a buffer that wipes itself (private key bodies).
result<secret_bytes> base64_decode_secret(std::string_view text);
// Exact decoded size of valid base64 text, or 0 when the text cannot be
// valid (length not a multiple of 4).
std::size_t base64_decoded_size(std::string_view text) noexcept;

// `-----BEGIN label-----`, base64 lines of `width` columns, `-----END
// label-----`, each line ending in '\n'.
std::string armor_encode(std::string_view label, byte_span data, std::size_t width = 70);

// Finds the armored block with `label` at the start of `text` (leading
// whitespace allowed; only whitespace may follow the end line) and decodes
// its body. Line breaks (LF or CRLF) and other whitespace inside the body
// are skipped. invalid_format when the armor is missing or broken.
result<secret_bytes> armor_decode(std::string_view text, std::string_view label);

// True when `text`, after leading whitespace, starts with the begin line
// of `label`.
bool armor_starts_with(std::string_view text, std::string_view label) noexcept;

} // namespace longhaul
