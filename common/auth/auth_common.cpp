#include "common/auth/auth_common.hpp"

#include "common/auth/messages.hpp"
#include "common/name_list.hpp"

namespace longhaul {

log_level to_log_level(auth_log_level level) noexcept
{
    switch (level) {
    case auth_log_level::error: return log_level::error;
    case auth_log_level::info: return log_level::info;
    case auth_log_level::verbose: return log_level::verbose;
    case auth_log_level::debug1: return log_level::debug1;
    case auth_log_level::debug2: return log_level::debug2;
    case auth_log_level::debug3: return log_level::debug3;
    }
    return log_level::info;
}

std::string_view to_string(auth_log_level level) noexcept
{
    switch (level) {
    case auth_log_level::error: return "error";
    case auth_log_level::info: return "info";
    case auth_log_level::verbose: return "verbose";
    case auth_log_level::debug1: return "debug1";
    case auth_log_level::debug2: return "debug2";
    case auth_log_level::debug3: return "debug3";
    }
    return "?";
}

std::string default_pubkey_accepted_algorithms()
{
    return "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256";
}

std::optional<std::string> choose_signature_algorithm(const public_key& key, std::string_view accepted,
                                                      const std::optional<std::string>& server_sig_algs)
{
    // Only RSA keys sign with an algorithm other than their own name, and
    // only a server that said what it verifies lets us pick one.
    if (key.type() != key_type::rsa || !server_sig_algs) {
        if (name_list_contains(accepted, key.type_name()))
            return std::string(key.type_name());
        return std::nullopt;
    }
    for (auto alg : split_name_list(accepted)) {
        auto t = key_type_for_signature_algorithm(alg);
        if (!t || *t != key_type::rsa)
            continue;
        if (name_list_contains(*server_sig_algs, alg))
            return std::string(alg);
    }
    return std::nullopt;
}

bool key_type_allowed(const public_key& key, std::string_view accepted)
{
    if (name_list_contains(accepted, key.type_name()))
        return true;
    if (key.type() == key_type::rsa)
        return name_list_contains(accepted, "rsa-sha2-512") || name_list_contains(accepted, "rsa-sha2-256");
    return false;
}

std::string describe_key(const public_key& key)
{
    std::string s(key_type_short_name(key.type()));
    s += ' ';
    s += key.fingerprint_sha256();
    return s;
}

std::string describe_certificate(const certificate& cert)
{
    return std::string(key_type_short_name(cert.key().type())) + "-CERT " + cert.key().fingerprint_sha256() + " ID " +
           sanitize_peer_text(cert.key_id(), false) + " (serial " + std::to_string(cert.serial()) + ") CA " + describe_key(cert.signature_key());
}

std::string auth_attempt_line(const auth_attempt_record& a)
{
    std::string line(a.verdict);
    line += ' ';
    line += a.method;
    if (!a.submethod.empty()) {
        line += '/';
        line += a.submethod;
    }
    line += " for ";
    if (!a.valid_user)
        line += "invalid user ";
    line += truncated(a.user, 100);
    line += " from ";
    line += truncated(a.remote_ip, 200);
    line += " port " + std::to_string(a.remote_port) + " ssh2";
    if (a.cert != nullptr)
        line += ": " + describe_certificate(*a.cert);
    else if (a.key != nullptr)
        line += ": " + describe_key(*a.key);
    if (!a.note.empty()) {
        line += ", ";
        line += a.note;
    }
    return line;
}

bool key_based_method(std::string_view method) noexcept
{
    return method == method_publickey || method == method_hostbased;
}

std::string hostbased_failure_note(std::string_view client_user, std::string_view client_host)
{
    if (!client_host.empty() && client_host.back() == '.')
        client_host.remove_suffix(1);
    return "client user \"" + sanitize_peer_text(truncated(client_user, 100), false) + "\", client host \"" +
           sanitize_peer_text(truncated(client_host, 100), false) + "\"";
}

std::string invalid_user_line(std::string_view user, std::string_view remote_ip, int remote_port)
{
    return "Invalid user " + std::string(truncated(user, 100)) + " from " + std::string(truncated(remote_ip, 100)) +
           " port " + std::to_string(remote_port);
}

std::string root_refused_line(std::string_view remote_ip, int remote_port)
{
    return "ROOT LOGIN REFUSED FROM " + std::string(remote_ip) + " port " + std::to_string(remote_port);
}

auth_log_level auth_attempt_level(const auth_attempt_record& a, bool authenticated, int failures, int max_auth_tries)
{
    const bool raise = authenticated || !a.valid_user || failures >= max_auth_tries / 2 || a.method == "password";
    return raise ? auth_log_level::info : auth_log_level::verbose;
}

namespace {

void escape_byte(std::string& out, unsigned char c)
{
    out.push_back('\\');
    out.push_back(static_cast<char>('0' + (c >> 6)));
    out.push_back(static_cast<char>('0' + ((c >> 3) & 7)));
    out.push_back(static_cast<char>('0' + (c & 7)));
}

// Length of a well-formed UTF-8 sequence at s[i] that encodes a printable
// character (not C1, not a surrogate, at most U+10FFFF), or 0.
std::size_t utf8_char_length(std::string_view s, std::size_t i)
{
    const auto b0 = static_cast<unsigned char>(s[i]);
    std::size_t n;
    std::uint32_t cp;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
        n = 2;
        cp = b0 & 0x1f;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
        n = 3;
        cp = b0 & 0x0f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        n = 4;
        cp = b0 & 0x07;
    } else {
        return 0;
    }
    if (s.size() - i < n)
        return 0;
    for (std::size_t k = 1; k < n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (b & 0x3f);
    }
    const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
        return 0;
    return n;
}

} // namespace

std::string sanitize_peer_text(std::string_view s, bool keep_newlines)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if ((c >= 0x20 && c < 0x7f) || c == '\t' || (keep_newlines && (c == '\n' || c == '\r'))) {
            out.push_back(static_cast<char>(c));
            ++i;
        } else if (auto n = c >= 0x80 ? utf8_char_length(s, i) : 0; n != 0) {
            out.append(s.substr(i, n));
            i += n;
        } else {
            escape_byte(out, c);
            ++i;
        }
    }
    return out;
}

} // namespace longhaul
