#include "common/keys/key_lines.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/evp_util.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <sstream>

namespace longhaul {

namespace {

std::string_view trim_left(std::string_view s) noexcept
{
    while (!s.empty() && is_blank(s.front()))
        s.remove_prefix(1);
    return s;
}

std::string_view trim(std::string_view s) noexcept
{
    s = trim_left(s);
    while (!s.empty() && (is_blank(s.back()) || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

// Takes the token up to the next space or tab.
std::string_view next_token(std::string_view& s) noexcept
{
    s = trim_left(s);
    std::size_t n = 0;
    while (n < s.size() && !is_blank(s[n]))
        ++n;
    const auto token = s.substr(0, n);
    s.remove_prefix(n);
    return token;
}

// "keytype base64 [comment]" from the start of s (already trimmed).
result<public_key_line> read_key(std::string_view s)
{
    const auto type_name = next_token(s);
    const auto encoded = next_token(s);
    if (type_name.empty() || encoded.empty())
        return errc::invalid_format;
    const auto named_type = key_type_from_name(type_name);
    if (!named_type)
        return errc::unsupported;
    auto blob = base64_decode(encoded);
    if (!blob)
        return errc::invalid_format;
    auto key = public_key::from_blob(*blob);
    if (!key)
        return key.error();
    if (key->type() != *named_type)
        return errc::key_type_mismatch;
    public_key_line out;
    out.key = std::move(*key);
    out.comment = std::string(trim(s));
    return out;
}

} // namespace

std::optional<std::size_t> key_options_length(std::string_view s) noexcept
{
    bool quoted = false;
    std::size_t i = 0;
    for (; i < s.size() && (quoted || !is_blank(s[i])); ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '"')
            ++i;
        else if (s[i] == '"')
            quoted = !quoted;
    }
    if (quoted)
        return std::nullopt;
    return i;
}

namespace {

bool is_option_name_char(char c) noexcept
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

result<bytes> hmac_sha1(byte_span key, std::string_view data)
{
    bytes out(20);
    std::size_t len = 0;
    if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA1", nullptr, key.data(), key.size(),
                  reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), out.size(),
                  &len) == nullptr ||
        len != out.size()) {
        detail::clear_openssl_errors();
        return errc::crypto_error;
    }
    return out;
}

} // namespace

std::string format_public_key(const public_key& key)
{
    std::string out(key.type_name());
    out.push_back(' ');
    out += base64_encode(key.blob());
    return out;
}

std::string format_public_key_line(const public_key& key, std::string_view comment)
{
    std::string out = format_public_key(key);
    out.push_back(' ');
    out += comment;
    return out;
}

bool is_blank_or_comment(std::string_view line) noexcept
{
    line = trim(line);
    return line.empty() || line.front() == '#';
}

result<public_key_line> parse_public_key_line(std::string_view line)
{
    if (is_blank_or_comment(line))
        return errc::invalid_format;
    return read_key(trim(line));
}

result<public_key_line> parse_authorized_keys_line(std::string_view line)
{
    if (is_blank_or_comment(line))
        return errc::invalid_format;
    line = trim(line);
    auto plain = read_key(line);
    if (plain)
        return plain;
    // A line that starts with a key type is a key line with a bad key, not
    // an options field: report why the key failed.
    std::string_view first = line;
    if (key_type_from_name(next_token(first)))
        return plain.error();
    const auto n = key_options_length(line);
    if (!n || *n == 0)
        return errc::invalid_format;
    auto key = read_key(trim_left(line.substr(*n)));
    if (!key)
        return key.error();
    key->options = std::string(line.substr(0, *n));
    return key;
}

result<std::vector<key_option>> parse_key_options(std::string_view options)
{
    std::vector<key_option> out;
    std::size_t i = 0;
    while (i < options.size()) {
        key_option opt;
        const std::size_t name_start = i;
        while (i < options.size() && is_option_name_char(options[i]))
            ++i;
        opt.name = std::string(options.substr(name_start, i - name_start));
        if (opt.name.empty())
            return errc::invalid_format;
        if (i < options.size() && options[i] == '=') {
            if (++i >= options.size() || options[i] != '"')
                return errc::invalid_format;
            ++i;
            std::string value;
            bool closed = false;
            while (i < options.size()) {
                if (options[i] == '\\' && i + 1 < options.size() && options[i + 1] == '"') {
                    value.push_back('"');
                    i += 2;
                } else if (options[i] == '"') {
                    closed = true;
                    ++i;
                    break;
                } else {
                    value.push_back(options[i++]);
                }
            }
            if (!closed)
                return errc::invalid_format;
            opt.value = std::move(value);
        }
        out.push_back(std::move(opt));
        if (i == options.size())
            break;
        if (options[i] != ',' || i + 1 == options.size())
            return errc::invalid_format;
        ++i;
    }
    if (out.empty())
        return errc::invalid_format;
    return out;
}

result<known_hosts_line> parse_known_hosts_line(std::string_view line)
{
    if (is_blank_or_comment(line))
        return errc::invalid_format;
    std::string_view s = trim(line);
    known_hosts_line out;
    if (!s.empty() && s.front() == '@') {
        const auto marker = next_token(s);
        if (marker == "@cert-authority")
            out.marker = known_hosts_marker::cert_authority;
        else if (marker == "@revoked")
            out.marker = known_hosts_marker::revoked;
        else
            return errc::invalid_format;
    }
    const auto hosts = next_token(s);
    if (hosts.empty())
        return errc::invalid_format;
    auto key = read_key(trim_left(s));
    if (!key)
        return key.error();
    out.hosts = std::string(hosts);
    out.key = std::move(key->key);
    out.comment = std::move(key->comment);
    return out;
}

std::string format_known_hosts_line(const known_hosts_line& entry)
{
    std::string out;
    if (entry.marker == known_hosts_marker::cert_authority)
        out = "@cert-authority ";
    else if (entry.marker == known_hosts_marker::revoked)
        out = "@revoked ";
    out += entry.hosts;
    out.push_back(' ');
    out += format_public_key(entry.key);
    if (!entry.comment.empty()) {
        out.push_back(' ');
        out += entry.comment;
    }
    return out;
}

result<std::string> hash_known_host(std::string_view host, byte_span salt)
{
    if (salt.size() != hashed_host_salt_size)
        return errc::invalid_argument;
    auto mac = hmac_sha1(salt, host);
    if (!mac)
        return mac.error();
    return "|1|" + base64_encode(salt) + "|" + base64_encode(*mac);
}

std::string hash_known_host(std::string_view host, random_source& rng)
{
    bytes salt(hashed_host_salt_size);
    rng.fill(salt);
    auto out = hash_known_host(host, salt);
    if (!out)
        throw std::runtime_error("HMAC-SHA1 failed");
    return std::move(*out);
}

result<hashed_host> parse_hashed_host(std::string_view entry)
{
    constexpr std::string_view magic = "|1|";
    if (entry.substr(0, magic.size()) != magic)
        return errc::invalid_format;
    entry.remove_prefix(magic.size());
    const auto bar = entry.find('|');
    if (bar == std::string_view::npos)
        return errc::invalid_format;
    auto salt = base64_decode(entry.substr(0, bar));
    auto hash = base64_decode(entry.substr(bar + 1));
    if (!salt || !hash || salt->size() != hashed_host_salt_size || hash->size() != 20)
        return errc::invalid_format;
    return hashed_host{std::move(*salt), std::move(*hash)};
}

bool hashed_host_matches(std::string_view entry, std::string_view host)
{
    auto parsed = parse_hashed_host(entry);
    if (!parsed)
        return false;
    auto mac = hmac_sha1(parsed->salt, host);
    return mac && equal_constant_time(*mac, parsed->hash);
}

result<public_key_line> load_public_key_file(const std::filesystem::path& path)
{
    std::ifstream in(path);
    if (!in)
        return errc::io_error;
    std::string line;
    // A .pub file holds one key; lines are bounded so a wrong path (a huge
    // file) fails fast.
    constexpr std::size_t max_line = 64 * 1024;
    while (std::getline(in, line)) {
        if (line.size() > max_line)
            return errc::too_large;
        if (!is_blank_or_comment(line))
            return parse_public_key_line(line);
    }
    return errc::invalid_format;
}

result<certificate> parse_certificate_line(std::string_view line, std::string* comment)
{
    line = trim(line);
    const auto type = next_token(line);
    const auto text = next_token(line);
    if (type.empty() || text.empty())
        return errc::invalid_format;
    if (!certificate_key_type(type))
        return errc::unsupported;
    // Bounded before decoding: a certificate blob has a fixed ceiling.
    if (base64_decoded_size(text) > max_certificate_blob)
        return errc::invalid_format;
    auto blob = base64_decode(text);
    if (!blob)
        return errc::invalid_format;
    auto cert = certificate::from_blob(*blob);
    if (!cert)
        return cert.error() == errc::unsupported ? errc::unsupported : errc::invalid_format;
    if (cert->type_name() != type)
        return errc::invalid_format;
    if (comment != nullptr)
        *comment = std::string(trim(line));
    return cert;
}

} // namespace longhaul
