// The one-line text forms of public keys: .pub files, authorized_keys
// (with a leading options field) and known_hosts (with an optional marker
// and host patterns), plus the hashed host names of known_hosts
// ("|1|base64 salt|base64 HMAC-SHA1(salt, host)"). Matching host patterns
// against names is the ssh client's business, not this module's.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/random.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// The separators of key lines (authorized_keys, known_hosts, KRL sources).
inline bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

// "ssh-ed25519 AAAA..." (type and base64 blob only, OpenSSH's sshkey_write).
std::string format_public_key(const public_key& key);
// "ssh-ed25519 AAAA... comment" without the newline, byte for byte as
// ssh-keygen writes .pub files: the separating space is written even when
// the comment is empty.
std::string format_public_key_line(const public_key& key, std::string_view comment);

struct public_key_line {
    std::string options; // authorized_keys options, verbatim; empty when none
    public_key key;
    std::string comment; // the rest of the line, whitespace-trimmed
};

// True for lines to skip: empty, whitespace only, or starting with '#'
// after leading whitespace.
bool is_blank_or_comment(std::string_view line) noexcept;

// "keytype base64 [comment]" (.pub files). The type name must be that of
// the decoded blob (key_type_mismatch otherwise). A trailing "\n" or "\r\n"
// is ignored. invalid_format for anything malformed, including blank and
// comment lines and base64 that is not strict; unsupported for unknown
// key types in a well-formed line.
result<public_key_line> parse_public_key_line(std::string_view line);

// One certificate line, "ssh-ed25519-cert-v01@openssh.com AAAA... [comment]"
// (a -cert.pub file, HostCertificate; a trailing newline is ignored). The
// type name must be the blob's; the blob is bounded (max_certificate_blob)
// before it is decoded; the CA's signature is not checked here.
// errc::unsupported when the line holds a plain key or an unknown type,
// invalid_format for anything malformed. `comment`, when given, receives
// what follows the base64 text, blanks and line ends trimmed.
result<certificate> parse_certificate_line(std::string_view line, std::string* comment = nullptr);

// "[options] keytype base64 [comment]" (authorized_keys). As OpenSSH does,
// the line is first read as a key; only when that fails is a leading
// options field (up to the first space or tab outside double quotes, \"
// escaping a quote) skipped and the key read after it.
result<public_key_line> parse_authorized_keys_line(std::string_view line);

// Length of the options field at the start of `s` (authorized_keys,
// allowed_signers): up to the first blank outside double quotes (\"
// escaping a quote). nullopt for an unterminated quote.
std::optional<std::size_t> key_options_length(std::string_view s) noexcept;

// One authorized_keys option: name, and for name="value" the value with
// \" unescaped.
struct key_option {
    std::string name;
    std::optional<std::string> value;
};
// Splits an options field at the commas outside quotes. invalid_format
// for unterminated quotes, empty entries and names that are not
// [A-Za-z0-9-] (option semantics are the server's).
result<std::vector<key_option>> parse_key_options(std::string_view options);

enum class known_hosts_marker { none, cert_authority, revoked };

struct known_hosts_line {
    known_hosts_marker marker = known_hosts_marker::none;
    std::string hosts; // the comma-separated pattern list, verbatim
    public_key key;
    std::string comment;
};

// "[@cert-authority|@revoked] hostpatterns keytype base64 [comment]".
result<known_hosts_line> parse_known_hosts_line(std::string_view line);
std::string format_known_hosts_line(const known_hosts_line& entry);

// Hashed known_hosts names (ssh-keygen -H, HashKnownHosts yes).
inline constexpr std::size_t hashed_host_salt_size = 20; // SHA-1 block of OpenSSH's choice
struct hashed_host {
    bytes salt;
    bytes hash;
};
// "|1|" + base64(salt) + "|" + base64(HMAC-SHA1 keyed by salt over host).
// salt must be hashed_host_salt_size bytes (invalid_argument otherwise).
result<std::string> hash_known_host(std::string_view host, byte_span salt);
std::string hash_known_host(std::string_view host, random_source& rng);
// Parses "|1|salt|hash" (both exactly 20 bytes, as OpenSSH requires).
result<hashed_host> parse_hashed_host(std::string_view entry);
// Whether `entry` is a hashed name of `host` (compared in constant time).
bool hashed_host_matches(std::string_view entry, std::string_view host);

// The first key line of a .pub file (blank and comment lines skipped).
result<public_key_line> load_public_key_file(const std::filesystem::path& path);

} // namespace longhaul
