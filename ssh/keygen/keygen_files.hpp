// The pieces ssh-keygen's commands share (keygen_commands.cpp): loading
// and saving key files with OpenSSH's messages, passphrase and file name
// prompts, key type choice, fingerprint lines, the invoking user.
#pragma once

#include "common/errc.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/private_key.hpp"
#include "common/keys/public_key.hpp"
#include "ssh/keygen/keygen_commands.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace longhaul::keygen {

inline constexpr const char* progname = "ssh-keygen";

// OpenSSH's fatal(): ends the program with status 255 (keygen_exit).
[[noreturn]] void fatal(std::string message);

// The invoking user's name and home directory (default key paths, key
// comments), from the password database as OpenSSH's ssh-keygen takes them.
struct local_user {
    std::string name;
    std::string home;
};

struct loaded_private {
    std::optional<private_key> key;
    std::optional<openssh_security_key> sk; // load_editable only
    errc error = errc::ok;
    int saved_errno = 0;

    bool loaded() const noexcept { return key || sk; }
    const std::string& comment() const { return key ? key->comment() : sk->comment; }
    public_key public_part() const { return key ? key->public_part() : sk->key; }
};

struct type_choice {
    key_type type;
    int bits;
    std::string name; // for "Generating public/private <name> key pair."
    std::string default_file;
};

std::string hostname();

local_user me();

// OpenSSH's ssh_err() wording for the failures key loading can have.
std::string error_text(errc e, int saved_errno);

// readpassphrase(3): the terminal with echo off when there is one, else
// standard input (prompt on stderr), as OpenSSH's RP_ALLOW_STDIN.
std::string read_passphrase(const char* prompt);

std::string read_whole_file(const std::string& path, int& saved_errno);

// sshkey_load_private with sshkey_perm_ok's warning for files others may read.
loaded_private load_private(const std::string& path, std::string_view passphrase);

std::string load_error_text(const loaded_private& l);

// For -p and -c, which rewrite the file: load_private, or for a security
// key's file its record (sk), with the same errors (passphrase_required,
// wrong_passphrase) so that the caller asks as for any key.
loaded_private load_editable(const std::string& path, std::string_view passphrase);

// Writes what load_editable loaded back to `path`, with `comment`.
std::optional<std::string> save_editable(loaded_private& l, const std::string& path, const std::string& comment,
                                         std::string_view passphrase, const keygen_options& o);

// load_identity: an empty passphrase first, then -P or a prompt.
private_key load_identity(const std::string& path, const keygen_options& o, const char* what);

// The public half and comment of an identity (ssh-keygen -y): as
// load_identity, except that a security-key file gives its record's, which
// needs no authenticator (Longhaul cannot sign with one yet).
struct identity_public {
    public_key key;
    std::string comment;
};
identity_public load_identity_public(const std::string& path, const keygen_options& o, const char* what);

// The record of a security-key private file, when `path` is an unencrypted
// one (for its comment); nullopt otherwise.
std::optional<openssh_security_key> load_security_key_record(const std::string& path);
// A security key's file as load_identity reads a key's: an empty
// passphrase first, then -P or a prompt; exits with "WHAT \"PATH\": ..."
// when it cannot be read.
openssh_security_key load_security_key_identity(const std::string& path, const keygen_options& o, const char* what);

private_key_format format_for(const keygen_options& o, key_type t);

// sshkey_save_private: returns the strerror/ssh_err text on failure.
std::optional<std::string> save_private(const private_key& key, const std::string& path, std::string_view passphrase,
                                        const keygen_options& o);

// The same for a security key's record (always the openssh-key-v1 form,
// as OpenSSH writes security keys whatever -m says).
std::optional<std::string> save_security_key(const openssh_security_key& key, const std::string& path,
                                             std::string_view passphrase, const keygen_options& o);

std::optional<std::string> save_public(const public_key& key, const std::string& path, const std::string& comment);

std::string private_key_passphrase(const keygen_options& o);

bool confirm_overwrite(const std::string& path);

std::string ask_filename(const std::string& prompt, const std::string& fallback);

type_choice choose_type(const keygen_options& o);

void print_fingerprint_line(const public_key& key, const std::string& comment, const keygen_options& o);

// A key in "type base64" form at the start of s; on success `s` is left
// after the key and the blanks that follow it.
std::optional<public_key> read_key(std::string_view& s);

// The first key of a public key file and its comment (the file name when
// the line has none), as sshkey_try_load_public.
std::optional<std::pair<public_key, std::string>> load_public_file(const std::string& path);
// The whole file (or standard input for "-"), at most `max` bytes; false
// with errno in saved_errno (EFBIG when larger) otherwise.
bool read_capped(const std::string& path, std::size_t max, std::string& text, int& saved_errno);
// sshkey_load_public: `path` as a public key file, then `path`.pub, then
// the public key an openssh-key-v1 private key file keeps in clear (its
// comment empty: it is inside the encrypted part).
std::optional<std::pair<public_key, std::string>> load_public_key(const std::string& path);

void fingerprint_private(const std::string& path, const keygen_options& o);
// The fingerprint -l (o.hash) or -B (SHA-1 bubble babble) prints.
std::string fingerprint_text(const public_key& key, const keygen_options& o);

std::string identity_or_ask(const keygen_options& o, const type_choice* t);

} // namespace longhaul::keygen
