#include "ssh/keygen/keygen_files.hpp"

#include "common/file_read.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/keys/key_lines.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace longhaul::keygen {

void fatal(std::string message) { throw keygen_exit(255, std::move(message)); }

std::string hostname()
{
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0)
        return "localhost";
    return buf;
}


local_user me()
{
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    const uid_t uid = ::getuid();
    while (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == ERANGE && buf.size() < (1u << 20))
        buf.resize(buf.size() * 2);
    if (found == nullptr)
        fatal("No user exists for uid " + std::to_string(uid));
    return {pw.pw_name, pw.pw_dir};
}

// OpenSSH's ssh_err() wording for the failures key loading can have.
std::string error_text(errc e, int saved_errno)
{
    switch (e) {
    case errc::wrong_passphrase:
    case errc::passphrase_required: return "incorrect passphrase supplied to decrypt private key";
    case errc::unsupported: return "unknown or unsupported key type";
    case errc::io_error: return std::strerror(saved_errno != 0 ? saved_errno : EIO);
    case errc::too_large: return "number is too large";
    case errc::security_key_unsupported: return std::string(to_string(e));
    default: return "invalid format";
    }
}

// readpassphrase(3): the terminal with echo off when there is one, else
// standard input (prompt on stderr), as OpenSSH's RP_ALLOW_STDIN.
std::string read_passphrase(const char* prompt)
{
    std::string line;
    const int tty = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (tty >= 0) {
        // Echo off first (flushing typed-ahead input), then the prompt.
        termios saved{}, quiet{};
        const bool have_termios = ::tcgetattr(tty, &saved) == 0;
        if (have_termios) {
            quiet = saved;
            quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL);
            (void)::tcsetattr(tty, TCSAFLUSH, &quiet);
        }
        (void)!::write(tty, prompt, std::strlen(prompt));
        char c;
        while (::read(tty, &c, 1) == 1 && c != '\n' && c != '\r' && line.size() < 8192)
            line.push_back(c);
        if (have_termios)
            (void)::tcsetattr(tty, TCSAFLUSH, &saved);
        (void)!::write(tty, "\n", 1);
        ::close(tty);
        return line;
    }
    std::fputs(prompt, stderr);
    std::fflush(stderr);
    int c;
    while ((c = std::fgetc(stdin)) != EOF && c != '\n' && line.size() < 8192)
        line.push_back(static_cast<char>(c));
    return line;
}

std::string read_whole_file(const std::string& path, int& saved_errno)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        saved_errno = errno;
        return {};
    }
    return std::string(std::istreambuf_iterator<char>(in), {});
}


// sshkey_load_private with sshkey_perm_ok's warning for files others may read.
loaded_private load_private(const std::string& path, std::string_view passphrase)
{
    loaded_private r;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        r.error = errc::io_error;
        r.saved_errno = errno;
        return r;
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_uid == ::getuid() && (st.st_mode & 077) != 0) {
        ::close(fd);
        char mode[8];
        std::snprintf(mode, sizeof mode, "0%3.3o", static_cast<unsigned>(st.st_mode & 0777));
        std::fprintf(stderr,
                     "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\r\n"
                     "@         WARNING: UNPROTECTED PRIVATE KEY FILE!          @\r\n"
                     "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\r\n"
                     "Permissions %s for '%s' are too open.\r\n"
                     "It is required that your private key files are NOT accessible by others.\r\n"
                     "This private key will be ignored.\r\n",
                     mode, path.c_str());
        r.error = errc::invalid_argument; // reported as "bad permissions"
        r.saved_errno = -1;
        return r;
    }
    ::close(fd);
    auto key = load_private_key_file(path, passphrase);
    if (!key) {
        r.error = key.error();
        r.saved_errno = errno;
        return r;
    }
    r.key = std::move(*key);
    return r;
}

std::string load_error_text(const loaded_private& l)
{
    if (l.saved_errno == -1)
        return "bad permissions";
    return error_text(l.error, l.saved_errno);
}

loaded_private load_editable(const std::string& path, std::string_view passphrase)
{
    auto l = load_private(path, passphrase);
    if (l.key || l.error != errc::security_key_unsupported)
        return l;
    int e = 0;
    std::string text = read_whole_file(path, e);
    auto record = parse_openssh_security_key(text, passphrase.empty() ? std::nullopt
                                                                      : std::optional<std::string_view>(passphrase));
    cleanse(text.data(), text.size());
    if (record) {
        l.sk = std::move(*record);
        l.error = errc::ok;
    } else {
        l.error = record.error();
        l.saved_errno = e;
    }
    return l;
}

std::optional<std::string> save_editable(loaded_private& l, const std::string& path, const std::string& comment,
                                         std::string_view passphrase, const keygen_options& o)
{
    if (l.sk) {
        l.sk->comment = comment;
        return save_security_key(*l.sk, path, passphrase, o);
    }
    l.key->set_comment(comment);
    return save_private(*l.key, path, passphrase, o);
}

// load_identity: an empty passphrase first, then -P or a prompt.
private_key load_identity(const std::string& path, const keygen_options& o, const char* what)
{
    auto l = load_private(path, "");
    if (l.key)
        return std::move(*l.key);
    if (l.error != errc::wrong_passphrase && l.error != errc::passphrase_required)
        fatal(std::string(what) + " \"" + path + "\": " + load_error_text(l));
    std::string pass = o.old_passphrase ? *o.old_passphrase : read_passphrase("Enter passphrase: ");
    l = load_private(path, pass);
    std::fill(pass.begin(), pass.end(), '\0');
    if (!l.key)
        fatal(std::string(what) + " \"" + path + "\": " + load_error_text(l));
    return std::move(*l.key);
}

std::optional<openssh_security_key> load_security_key_record(const std::string& path)
{
    int e = 0;
    std::string text = read_whole_file(path, e);
    auto record = parse_openssh_security_key(text, std::nullopt);
    cleanse(text.data(), text.size());
    if (!record)
        return std::nullopt;
    return std::move(*record);
}

identity_public load_identity_public(const std::string& path, const keygen_options& o, const char* what)
{
    auto l = load_private(path, "");
    if (l.key)
        return {l.key->public_part(), l.key->comment()};
    if (l.error == errc::wrong_passphrase || l.error == errc::passphrase_required) {
        private_key key = load_identity(path, o, what);
        return {key.public_part(), key.comment()};
    }
    // (load_private has already printed a bad-permissions warning.)
    if (l.error != errc::security_key_unsupported)
        fatal(std::string(what) + " \"" + path + "\": " + load_error_text(l));
    auto record = load_security_key_identity(path, o, what);
    return {std::move(record.key), std::move(record.comment)};
}

openssh_security_key load_security_key_identity(const std::string& path, const keygen_options& o, const char* what)
{
    int e = 0;
    std::string text = read_whole_file(path, e);
    auto record = parse_openssh_security_key(text, std::nullopt);
    if (!record && record.error() == errc::passphrase_required) {
        std::string pass = o.old_passphrase ? *o.old_passphrase : read_passphrase("Enter passphrase: ");
        record = parse_openssh_security_key(text, pass);
        cleanse(pass.data(), pass.size());
    }
    cleanse(text.data(), text.size());
    if (!record)
        fatal(std::string(what) + " \"" + path + "\": " + error_text(record.error(), 0));
    return std::move(*record);
}

private_key_format format_for(const keygen_options& o, key_type t)
{
    // Ed25519 keys are always written in OpenSSH's own format, as OpenSSH does.
    if (!o.format || t == key_type::ed25519)
        return private_key_format::openssh;
    if (*o.format == "PEM")
        return private_key_format::pem;
    if (*o.format == "PKCS8")
        return private_key_format::pkcs8;
    return private_key_format::openssh;
}

namespace {

// A private key file's text to `path` (mode 0600), wiped afterwards; the
// strerror/ssh_err text on failure.
std::optional<std::string> save_key_text(result<std::string> text, const std::string& path)
{
    if (!text)
        return error_text(text.error(), 0);
    errno = 0;
    auto w = write_private_key_file(path, *text);
    std::fill(text->begin(), text->end(), '\0');
    if (!w)
        return error_text(errc::io_error, errno);
    return std::nullopt;
}

} // namespace

// sshkey_save_private: returns the strerror/ssh_err text on failure.
std::optional<std::string> save_private(const private_key& key, const std::string& path, std::string_view passphrase,
                                        const keygen_options& o)
{
    system_random rng;
    return save_key_text(write_private_key(key, format_for(o, key.type()), passphrase, rng, o.rounds, o.cipher), path);
}

std::optional<std::string> save_security_key(const openssh_security_key& key, const std::string& path,
                                             std::string_view passphrase, const keygen_options& o)
{
    system_random rng;
    return save_key_text(write_openssh_security_key(key, passphrase, o.rounds, rng, o.cipher), path);
}

std::optional<std::string> save_public(const public_key& key, const std::string& path, const std::string& comment)
{
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr)
        return std::string(std::strerror(errno));
    const std::string line = format_public_key_line(key, comment) + "\n";
    const bool ok = std::fwrite(line.data(), 1, line.size(), f) == line.size();
    const int close_result = std::fclose(f);
    if (!ok || close_result != 0)
        return std::string(std::strerror(errno));
    return std::nullopt;
}

std::string private_key_passphrase(const keygen_options& o)
{
    if (o.old_passphrase)
        return *o.old_passphrase;
    if (o.new_passphrase)
        return *o.new_passphrase;
    while (true) {
        std::string a = read_passphrase("Enter passphrase (empty for no passphrase): ");
        std::string b = read_passphrase("Enter same passphrase again: ");
        if (a == b) {
            std::fill(b.begin(), b.end(), '\0');
            return a;
        }
        std::fill(a.begin(), a.end(), '\0');
        std::fill(b.begin(), b.end(), '\0');
        std::printf("Passphrases do not match.  Try again.\n");
    }
}

bool confirm_overwrite(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return true;
    std::printf("%s already exists.\n", path.c_str());
    std::printf("Overwrite (y/n)? ");
    std::fflush(stdout);
    char yes[3] = {};
    if (std::fgets(yes, sizeof yes, stdin) == nullptr)
        return false;
    return yes[0] == 'y' || yes[0] == 'Y';
}

std::string ask_filename(const std::string& prompt, const std::string& fallback)
{
    std::printf("%s (%s): ", prompt.c_str(), fallback.c_str());
    std::fflush(stdout);
    char buf[1024];
    if (std::fgets(buf, sizeof buf, stdin) == nullptr)
        throw keygen_exit(1, "");
    buf[std::strcspn(buf, "\n")] = '\0';
    return buf[0] != '\0' ? std::string(buf) : fallback;
}


type_choice choose_type(const keygen_options& o)
{
    const std::string name = o.key_type.value_or("rsa");
    type_choice c{key_type::rsa, o.bits, name, "id_rsa"};
    if (name == "rsa" || name == "ssh-rsa") {
        if (c.bits == 0)
            c.bits = 3072;
        if (c.bits < 1024)
            fatal("Invalid RSA key length: minimum is 1024 bits");
        if (c.bits > 16384)
            fatal("Invalid RSA key length: maximum is 16384 bits");
    } else if (name == "ecdsa" || name.rfind("ecdsa-sha2-nistp", 0) == 0) {
        if (c.bits == 0)
            c.bits = name == "ecdsa-sha2-nistp384" ? 384 : name == "ecdsa-sha2-nistp521" ? 521 : 256;
        if (c.bits != 256 && c.bits != 384 && c.bits != 521)
            fatal("Invalid ECDSA key length: valid lengths are 256, 384 or 521 bits");
        c.type = c.bits == 256 ? key_type::ecdsa_p256 : c.bits == 384 ? key_type::ecdsa_p384 : key_type::ecdsa_p521;
        c.default_file = "id_ecdsa";
    } else if (name == "ed25519" || name == "ssh-ed25519") {
        c.type = key_type::ed25519;
        c.bits = 256;
        c.default_file = "id_ed25519";
    } else if (name == "ed25519-sk" || name == "ecdsa-sk" || name == key_type_name(key_type::sk_ed25519) ||
               name == key_type_name(key_type::sk_ecdsa_p256)) {
        // Enrolment goes through the provider library (keygen_sk).
        const bool ed = name == "ed25519-sk" || name == key_type_name(key_type::sk_ed25519);
        c.type = ed ? key_type::sk_ed25519 : key_type::sk_ecdsa_p256;
        c.bits = 256;
        c.default_file = ed ? "id_ed25519_sk" : "id_ecdsa_sk";
    } else {
        fatal("unknown key type " + name);
    }
    return c;
}

std::string fingerprint_text(const public_key& key, const keygen_options& o)
{
    return o.bubblebabble ? bubblebabble(key_digest(key, fingerprint_hash::sha1)) : key_fingerprint(key, o.hash);
}

void print_fingerprint_line(const public_key& key, const std::string& comment, const keygen_options& o)
{
    std::printf("%d %s %s (%s)\n", key.bits(), fingerprint_text(key, o).c_str(),
                comment.empty() ? "no comment" : comment.c_str(),
                std::string(key_type_short_name(key.type())).c_str());
    if (o.verbose)
        std::printf("%s\n", key_randomart(key, o.hash).c_str());
}

// A key in "type base64" form at the start of s; on success `s` is left
// after the key and the blanks that follow it.
std::optional<public_key> read_key(std::string_view& s)
{
    std::string_view t = s;
    auto token = [&t]() {
        while (!t.empty() && (t.front() == ' ' || t.front() == '\t'))
            t.remove_prefix(1);
        std::size_t n = 0;
        while (n < t.size() && t[n] != ' ' && t[n] != '\t')
            ++n;
        auto out = t.substr(0, n);
        t.remove_prefix(n);
        return out;
    };
    const auto type = token();
    const auto encoded = token();
    const auto named = key_type_from_name(type);
    if (!named)
        return std::nullopt;
    auto blob = base64_decode(encoded);
    if (!blob)
        return std::nullopt;
    auto key = public_key::from_blob(*blob);
    if (!key || key->type() != *named)
        return std::nullopt;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t'))
        t.remove_prefix(1);
    s = t;
    return std::move(*key);
}

// The first key of a public key file and its comment (the file name when
// the line has none), as sshkey_try_load_public.
std::optional<std::pair<public_key, std::string>> load_public_file(const std::string& path)
{
    int e = 0;
    const std::string text = read_whole_file(path, e);
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        if (line.empty() || line[0] == '#')
            continue;
        if (line.rfind("-----BEGIN", 0) == 0 || line == "SSH PRIVATE KEY FILE")
            return std::nullopt;
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        if (line.empty())
            continue;
        if (auto key = read_key(line)) {
            line = line.substr(0, line.find_first_of("\r\n"));
            return std::make_pair(std::move(*key), line.empty() ? path : std::string(line));
        }
    }
    return std::nullopt;
}

bool read_capped(const std::string& path, std::size_t max, std::string& text, int& saved_errno)
{
    const int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        saved_errno = errno;
        return false;
    }
    saved_errno = read_to_end(fd, max, text);
    if (fd != STDIN_FILENO)
        ::close(fd);
    return saved_errno == 0;
}

std::optional<std::pair<public_key, std::string>> load_public_key(const std::string& path)
{
    if (auto p = load_public_file(path))
        return p;
    if (auto pub = load_public_file(path + ".pub"))
        return pub;
    int e = 0;
    const std::string text = read_whole_file(path, e);
    if (auto from_private = private_key_file_public_key(text))
        return std::make_pair(std::move(*from_private), std::string());
    return std::nullopt;
}

void fingerprint_private(const std::string& path, const keygen_options& o)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) == -1)
        fatal(path + ": " + std::strerror(errno));
    std::optional<public_key> key;
    std::string comment;
    if (auto p = load_public_key(path)) {
        key = p->first;
        comment = p->second;
    }
    if (!key || comment.empty()) {
        auto l = load_private(path, "");
        if (l.key) {
            if (!key)
                key = l.key->public_part();
            comment = l.key->comment();
        } else if (l.error == errc::security_key_unsupported) {
            // No signing needed to read a security key's comment.
            if (auto record = load_security_key_record(path)) {
                if (!key)
                    key = record->key;
                comment = record->comment;
            }
        }
    }
    if (!key)
        fatal(path + " is not a key file.");
    print_fingerprint_line(*key, comment, o);
}

std::string identity_or_ask(const keygen_options& o, const type_choice* t)
{
    if (o.file)
        return *o.file;
    const auto u = me();
    return ask_filename("Enter file in which the key is",
                        u.home + "/.ssh/" + (t ? t->default_file : std::string("id_rsa")));
}

} // namespace longhaul::keygen
