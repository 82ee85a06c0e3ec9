// Private key files in every format ssh-keygen writes: openssh-key-v1 (the
// default), PEM and PKCS#8. This is the entry point; the formats live in
// openssh_key_v1.hpp and pem_key.hpp.
#pragma once

#include "common/keys/openssh_key_v1.hpp"
#include "common/keys/pem_key.hpp"
#include "common/keys/private_key.hpp"
#include "common/random.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

enum class private_key_format { openssh, pem, pkcs8 };

// Largest key file read (OpenSSH's MAX_KEY_FILE_SIZE).
inline constexpr std::size_t max_key_file_size = 1024 * 1024;

// Any supported format, told apart by its armor. passphrase: nullopt when
// the caller has none (encrypted files then give passphrase_required).
// Errors: invalid_format, unsupported, passphrase_required,
// wrong_passphrase, too_large (bcrypt rounds over the limit).
result<private_key> parse_private_key(std::string_view file_contents, std::optional<std::string_view> passphrase,
                                      const key_parse_options& options = {});

// Whether parsing needs a passphrase.
result<bool> private_key_is_encrypted(std::string_view file_contents);

// The public key of a private key file without decrypting it, where the
// format allows: openssh-key-v1 stores it in the clear; an encrypted PEM
// file gives passphrase_required.
result<public_key> private_key_file_public_key(std::string_view file_contents);

// Writes `key` in `format`; an empty passphrase means unencrypted. For
// openssh-key-v1: `openssh_cipher` (ssh-keygen -Z; aes256-ctr by default)
// with bcrypt_pbkdf of kdf_rounds rounds. The text is secret when
// unencrypted.
result<std::string> write_private_key(const private_key& key, private_key_format format,
                                      std::string_view passphrase, random_source& rng,
                                      int kdf_rounds = openssh_default_kdf_rounds,
                                      std::string_view openssh_cipher = openssh_default_cipher);

// OpenSSH's sshkey_perm_ok: a private key file owned by us must not be
// accessible by group or others. Returns the warning block OpenSSH prints
// (empty when the permissions are fine or the file cannot be examined).
std::vector<std::string> private_key_permission_warning(const std::filesystem::path& path);

// Reads the file (at most max_key_file_size bytes; io_error when it
// cannot be read) and parses it. A key without a comment gets none: OpenSSH
// tools show the path instead, which is the caller's choice.
result<private_key> load_private_key_file(const std::filesystem::path& path,
                                          std::optional<std::string_view> passphrase,
                                          const key_parse_options& options = {});

// Reads a key file's bytes into memory that is wiped afterwards.
result<secret_bytes> read_key_file(const std::filesystem::path& path);
// The same from a file already open (ssh-keysign opens the host keys as
// root, reads them after giving root up); `fd` stays open.
result<secret_bytes> read_key_file(int fd);

// Creates or replaces `path` with mode 0600 (ssh refuses private keys that
// others can read) and writes `contents`.
result<void> write_private_key_file(const std::filesystem::path& path, std::string_view contents);

} // namespace longhaul
