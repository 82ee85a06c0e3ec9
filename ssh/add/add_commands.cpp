#include "ssh/add/add_commands.hpp"

#include "common/file_read.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "common/random.hpp"
#include "ssh/add/add_destinations.hpp"
#include "ssh/add/add_fatal.hpp"
#include "ssh/add/add_passphrase.hpp"
#include "ssh/keygen/keygen_cert.hpp"
#include "ssh/keygen/keygen_files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace longhaul::add {

namespace {

std::string_view as_text(byte_span b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

bool needs_passphrase(errc e) { return e == errc::wrong_passphrase || e == errc::passphrase_required; }

// The first key line of text (sshkey_try_load_public): a plain key or a
// certificate whose CA signature holds. The first line that is not blank
// or a comment decides.
std::optional<loaded_public> first_public_key(std::string_view rest)
{
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        if (is_blank_or_comment(line))
            continue;
        while (!line.empty() && is_blank(line.front()))
            line.remove_prefix(1);
        if (auto k = parse_public_key_line(line))
            return loaded_public{{k->key, std::nullopt}, k->comment};
        std::string comment;
        if (auto c = keygen::read_certificate(line, &comment)) {
            public_key plain = c->key();
            return loaded_public{{std::move(plain), std::move(*c)}, comment};
        }
        return std::nullopt;
    }
    return std::nullopt;
}

// first_public_key() of a file. The file may well be a private key (the
// name given to -d or -T): what was read is wiped.
std::optional<loaded_public> read_public_file(const std::string& path)
{
    std::string text;
    text.reserve(max_key_file_size + 1); // no reallocation: no stray copies
    int saved_errno = 0;
    std::optional<loaded_public> found;
    if (keygen::read_capped(path, max_key_file_size, text, saved_errno))
        found = first_public_key(text);
    cleanse(text.data(), text.size());
    return found;
}

// What follows the key on a line (sshkey_read leaves it there): the blanks
// after the base64 text skipped, the rest kept as it is.
std::string text_after_key(std::string_view line)
{
    auto skip_token = [&line] {
        while (!line.empty() && !is_blank(line.front()))
            line.remove_prefix(1);
        while (!line.empty() && is_blank(line.front()))
            line.remove_prefix(1);
    };
    skip_token(); // the type
    skip_token(); // the base64 text
    return std::string(line);
}

// A key file's comment as sshkey_load_public gives it: none when the line
// has none.
std::optional<std::string> file_comment(const loaded_public& p)
{
    if (p.comment.empty())
        return std::nullopt;
    return p.comment;
}

void print_error_line(const std::string& message) { std::fprintf(stderr, "%s\r\n", message.c_str()); }

// The user's home directory from the password database (as OpenSSH takes
// it, not from $HOME); nullopt, said, when the user has no entry.
std::optional<std::string> home_directory()
{
    try {
        return keygen::me().home;
    } catch (const std::exception&) {
        std::fprintf(stderr, "No user found with uid %u\n", static_cast<unsigned>(::getuid()));
        return std::nullopt;
    }
}

} // namespace

agent::key_constraints add_constraints(const add_options& options,
                                       const std::vector<agent::destination_constraint>& destinations,
                                       bool security_key, const char* env_provider)
{
    agent::key_constraints c;
    if (options.lifetime && *options.lifetime != 0)
        c.lifetime_seconds = options.lifetime;
    c.confirm = options.confirm;
    if (security_key)
        c.sk_provider = security_key_provider(options, env_provider);
    c.destinations = destinations;
    return c;
}

std::vector<std::string> default_identity_files(const std::string& home)
{
    // OpenSSH 9.2's default_files[] (id_xmss is tried too; this build, like
    // Debian's, cannot load XMSS keys and says so).
    static constexpr const char* names[] = {"id_rsa",        "id_ecdsa", "id_ecdsa_sk", "id_ed25519",
                                            "id_ed25519_sk", "id_xmss",  "id_dsa"};
    std::vector<std::string> out;
    for (const char* n : names)
        out.push_back(home + "/.ssh/" + n);
    return out;
}

std::optional<loaded_public> load_public(const std::string& path, int& saved_errno)
{
    // Whatever fails, OpenSSH reports ENOENT ("pretend we couldn't find
    // the key").
    saved_errno = ENOENT;
    if (auto p = read_public_file(path))
        return p;
    if (auto p = read_public_file(path + ".pub"))
        return p;
    auto contents = read_key_file(path);
    if (!contents)
        return std::nullopt;
    if (auto pub = private_key_file_public_key(as_text(*contents)))
        return loaded_public{{std::move(*pub), std::nullopt}, {}};
    return std::nullopt;
}

int add_session::run()
{
    switch (options_.what) {
    case action::lock: return lock_or_unlock(true) ? 0 : 1;
    case action::unlock: return lock_or_unlock(false) ? 0 : 1;
    case action::list_fingerprints:
    case action::list_public: return list() ? 0 : 1;
    case action::remove_all: return remove_all() ? 0 : 1;
    default: break;
    }
    // As OpenSSH, -h is resolved (and may end the program) before -T, and
    // before keys are removed, whatever it is then used for.
    if (!options_.destinations.empty()) {
        const auto home = home_directory();
        if (!home)
            return 1;
        destinations_ = resolve_destinations(
            options_.destinations,
            options_.hostkey_files.empty() ? default_hostkey_files(*home) : options_.hostkey_files, *home);
    }
    switch (options_.what) {
    case action::test: {
        bool ok = true;
        for (const auto& f : options_.files)
            ok = test_key(f) && ok;
        return ok ? 0 : 1;
    }
    case action::add_pkcs11:
    case action::remove_pkcs11: return update_card(options_.what == action::add_pkcs11) ? 0 : 1;
    case action::load_resident: return load_resident() ? 0 : 1;
    default: break;
    }
    int status = 0;
    if (!options_.files.empty()) {
        for (const auto& f : options_.files)
            if (!do_file(f))
                status = 1;
        return status;
    }
    const auto home = home_directory();
    if (!home)
        return 1;
    int count = 0;
    for (const auto& f : default_identity_files(*home)) {
        struct stat st {};
        if (::stat(f.c_str(), &st) == -1)
            continue;
        if (do_file(f))
            ++count;
        else
            status = 1;
    }
    return count == 0 ? 1 : status;
}

bool add_session::do_file(const std::string& path)
{
    return options_.what == action::remove ? delete_file(path) : add_file(path);
}

bool add_session::list()
{
    auto ids = agent_.request_identities();
    if (!ids) {
        std::fprintf(stderr, "error fetching identities: %s\n", agent_error_text(ids.error()).c_str());
        return false;
    }
    if (ids->empty()) {
        std::printf("The agent has no identities.\n");
        return false;
    }
    const bool fingerprints = options_.what == action::list_fingerprints;
    for (const auto& id : *ids) {
        std::optional<std::string> line;
        if (auto k = identity_key(id))
            line = fingerprints ? fingerprint_line(*k, id.comment, options_.hash) : public_line(*k, id.comment);
        else
            line = fingerprints ? foreign_fingerprint_line(id, options_.hash) : foreign_public_line(id);
        // Anything else is a type OpenSSH 9.2 does not know either: skipped.
        if (line)
            std::printf("%s\n", line->c_str());
    }
    return true;
}

std::optional<secret_bytes> add_session::ask(const std::string& prompt)
{
    secret_bytes answer = read_passphrase_allow_stdin(prompt);
    if (answer.empty())
        return std::nullopt;
    return answer;
}

bool add_session::lock_or_unlock(bool lock)
{
    // OpenSSH asks "Enter lock password: " for both.
    secret_bytes password = ask("Enter lock password: ").value_or(secret_bytes{});
    if (lock) {
        secret_bytes again = ask("Again: ").value_or(secret_bytes{});
        if (password.size() != again.size() || !equal_constant_time(password, again)) {
            std::fprintf(stderr, "Passwords do not match.\n");
            return false;
        }
    }
    auto r = agent_.lock(as_text(password), lock);
    if (!r) {
        std::fprintf(stderr, "Failed to %slock agent: %s\n", lock ? "" : "un", agent_error_text(r.error()).c_str());
        return false;
    }
    std::fprintf(stderr, "Agent %slocked.\n", lock ? "" : "un");
    return true;
}

bool add_session::remove_all()
{
    if (!agent_.remove_all_identities()) {
        std::fprintf(stderr, "Failed to remove all identities.\n");
        return false;
    }
    if (!options_.quiet)
        std::fprintf(stderr, "All identities removed.\n");
    return true;
}

bool add_session::test_key(const std::string& path)
{
    int saved_errno = 0;
    auto pub = load_public(path, saved_errno);
    if (!pub) {
        print_error_line("Couldn't read public key " + path + ": " + std::strerror(saved_errno));
        return false;
    }
    // As OpenSSH: RSA keys sign with rsa-sha2-256, others with their own
    // algorithm.
    const std::string alg =
        pub->key.key.type() == key_type::rsa ? "rsa-sha2-256" : std::string(pub->key.key.type_name());
    bytes challenge(1024);
    system_random rng;
    rng.fill(challenge);
    auto sig = agent_.sign(pub->key.blob(), challenge, agent::sign_flags_for(alg));
    if (!sig) {
        print_error_line("Agent signature failed for " + path + ": " + agent_error_text(sig.error()));
        return false;
    }
    if (!pub->key.key.verify(alg, challenge, *sig)) {
        print_error_line("Signature verification failed for " + path + ": incorrect signature");
        return false;
    }
    return true;
}

// OpenSSH's update_card: -s asks for the token's PIN ("" when none is
// given) and sends it with -t, -c and -h's constraints; -e sends none.
bool add_session::update_card(bool add)
{
    const std::string& provider = *options_.pkcs11_provider;
    secret_bytes pin;
    if (add)
        pin = read_passphrase_allow_stdin("Enter passphrase for PKCS#11: ");
    if (auto r = agent_.update_card(add, provider, pin, add ? key_constraints() : agent::key_constraints{}); !r) {
        std::fprintf(stderr, "Could not %s card \"%s\": %s\n", add ? "add" : "remove", provider.c_str(),
                     agent_error_text(r.error()).c_str());
        return false;
    }
    if (!options_.quiet)
        std::fprintf(stderr, "Card %s: %s\n", add ? "added" : "removed", provider.c_str());
    return true;
}

void add_session::print_added(const char* what, const std::string& path, const std::string& name) const
{
    if (options_.quiet)
        return;
    std::fprintf(stderr, "%s added: %s (%s)\n", what, path.c_str(), name.c_str());
    print_constraints();
}

void add_session::print_constraints() const
{
    if (options_.lifetime && *options_.lifetime != 0)
        std::fprintf(stderr, "Lifetime set to %u seconds\n", static_cast<unsigned>(*options_.lifetime));
    if (options_.confirm)
        std::fprintf(stderr, "The user must confirm each use of the key\n");
}

agent::key_constraints add_session::key_constraints(bool security_key) const
{
    return add_constraints(options_, destinations_, security_key, std::getenv("SSH_SK_PROVIDER"));
}

bool add_session::add_file(const std::string& path)
{
    const bool from_stdin = path == "-";
    const std::string name = from_stdin ? "(stdin)" : path;
    const int fd = from_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), std::strerror(errno));
        return false;
    }
    // Checked once, before the file is parsed several times (OpenSSH's
    // sshkey_perm_ok).
    if (!from_stdin) {
        if (auto warning = private_key_permission_warning(path); !warning.empty()) {
            for (const auto& line : warning)
                print_error_line(line);
            ::close(fd);
            return false;
        }
    }
    std::string text;
    // Sized once so that no reallocation leaves copies of the key behind.
    text.reserve(max_key_file_size + 1);
    const int read_errno = read_to_end(fd, max_key_file_size, text);
    if (!from_stdin)
        ::close(fd);
    const secret_bytes contents(as_bytes(std::string_view(text)));
    cleanse(text.data(), text.size());
    if (read_errno != 0) {
        std::fprintf(stderr, "Error loading key \"%s\": %s\n", name.c_str(), std::strerror(read_errno));
        return false;
    }
    const std::string_view file = as_text(contents);
    // A FIDO security-key file names its type in the clear: it is read as
    // such (with the same passphrase handling) and always sent with its
    // provider.
    auto first = parse_private_key(file, std::nullopt);
    if (!first && first.error() == errc::security_key_unsupported) {
        auto sk = load_with_passphrase<openssh_security_key>(
            name, file, [](std::string_view f, std::optional<std::string_view> pass) {
                return parse_openssh_security_key(f, pass);
            });
        if (!sk)
            return false;
        return add_security_key_file(name, *sk);
    }
    // (The first try, without a passphrase, is the one just made.)
    auto key = load_with_passphrase<private_key>(
        name, file, [&first](std::string_view f, std::optional<std::string_view> pass) {
            if (!pass && first)
                return std::move(first);
            return parse_private_key(f, pass);
        });
    if (!key)
        return false;
    const std::string comment = key->comment().empty() ? name : key->comment();

    const agent::key_constraints constraints = key_constraints();
    bool ok = false;
    if (auto r = agent_.add_identity(*key, nullptr, comment, constraints); r) {
        ok = true;
        print_added("Identity", name, comment);
    } else {
        std::fprintf(stderr, "Could not add identity \"%s\": %s\n", name.c_str(), agent_error_text(r.error()).c_str());
    }
    if (!options_.key_only)
        add_certificate(name, *key, comment);
    return ok;
}

template <typename T, typename Parse>
std::optional<T> add_session::load_with_passphrase(const std::string& name, std::string_view file, Parse parse)
{
    auto load_failed = [&](errc e) {
        std::fprintf(stderr, "Error loading key \"%s\": %s\n", name.c_str(), keygen::error_text(e, 0).c_str());
        last_passphrase_.reset();
        return std::nullopt;
    };
    // An empty passphrase first, then the one that worked last, then ask.
    // No passphrase rather than an empty one: OpenSSL refuses to decrypt a
    // PEM file with "", which would read as a broken file.
    auto key = parse(file, std::nullopt);
    if (!key && !needs_passphrase(key.error()))
        return load_failed(key.error());
    if (!key && last_passphrase_) {
        key = parse(file, as_text(*last_passphrase_));
        if (!key && !needs_passphrase(key.error()))
            return load_failed(key.error());
    }
    if (!key) {
        last_passphrase_.reset();
        const std::string confirming = options_.confirm ? " (will confirm each use)" : "";
        std::string prompt = "Enter passphrase for " + name + confirming + ": ";
        for (;;) {
            auto pass = ask(prompt);
            if (!pass)
                return std::nullopt;
            key = parse(file, as_text(*pass));
            if (key) {
                last_passphrase_ = std::move(pass);
                break;
            }
            if (!needs_passphrase(key.error()))
                return load_failed(key.error());
            prompt = "Bad passphrase, try again for " + name + confirming + ": ";
        }
    }
    return std::move(*key);
}

bool add_session::add_security_key_file(const std::string& name, const openssh_security_key& key)
{
    const std::string comment = key.comment.empty() ? name : key.comment;
    const agent::key_constraints constraints = key_constraints(true);
    bool ok = false;
    if (auto r = agent_.add_security_key(key, nullptr, comment, constraints); r) {
        ok = true;
        print_added("Identity", name, comment);
    } else {
        std::fprintf(stderr, "Could not add identity \"%s\": %s\n", name.c_str(), agent_error_text(r.error()).c_str());
    }
    if (options_.key_only)
        return ok;
    const std::string cert_path = name + "-cert.pub";
    int saved_errno = 0;
    auto loaded = load_public(cert_path, saved_errno);
    if (!loaded)
        return ok;
    if (!loaded->key.cert || !(loaded->key.key == key.key)) {
        print_error_line("Certificate " + cert_path + " does not match private key " + name);
        return ok;
    }
    const certificate& cert = *loaded->key.cert;
    if (auto r = agent_.add_security_key(key, &cert, comment, constraints); !r) {
        print_error_line("Certificate " + cert_path + " (" + cert.key_id() + ") add failed: " +
                         agent_error_text(r.error()));
        return ok;
    }
    print_added("Certificate", cert_path, cert.key_id());
    return ok;
}

void add_session::add_certificate(const std::string& path, const private_key& key, const std::string& comment)
{
    const std::string cert_path = path + "-cert.pub";
    int saved_errno = 0;
    auto loaded = load_public(cert_path, saved_errno);
    if (!loaded)
        return; // OpenSSH reports every failure here as ENOENT: silence
    if (!loaded->key.cert || !(loaded->key.key == key.public_part())) {
        print_error_line("Certificate " + cert_path + " does not match private key " + path);
        return;
    }
    const agent::key_constraints constraints = key_constraints();
    const certificate& cert = *loaded->key.cert;
    if (auto r = agent_.add_identity(key, &cert, comment, constraints); !r) {
        print_error_line("Certificate " + cert_path + " (" + cert.key_id() + ") add failed: " +
                         agent_error_text(r.error()));
        return;
    }
    print_added("Certificate", cert_path, cert.key_id());
}

bool add_session::delete_one(const shown_key& key, const std::optional<std::string>& comment,
                             const std::string& path)
{
    if (auto r = agent_.remove_identity(key.blob()); !r) {
        std::fprintf(stderr, "Could not remove identity \"%s\": %s\n", path.c_str(),
                     agent_error_text(r.error()).c_str());
        return false;
    }
    if (!options_.quiet)
        std::fprintf(stderr, "Identity removed: %s %s (%s)\n", path.c_str(), key_type_label(key).c_str(),
                     comment ? comment->c_str() : "no comment");
    return true;
}

bool add_session::delete_file(const std::string& path)
{
    if (path == "-")
        return delete_stdin();
    int saved_errno = 0;
    auto pub = load_public(path, saved_errno);
    if (!pub) {
        std::printf("Bad key file %s: %s\n", path.c_str(), std::strerror(saved_errno));
        return false;
    }
    bool ok = delete_one(pub->key, file_comment(*pub), path);
    if (options_.key_only)
        return ok;
    const std::string cert_path = path + "-cert.pub";
    auto cert = load_public(cert_path, saved_errno);
    if (!cert)
        return ok;
    if (!(cert->key.key == pub->key.key))
        throw add_fatal(255, "Certificate " + cert_path + " does not match private key " + path);
    if (delete_one(cert->key, file_comment(*cert), cert_path))
        ok = true;
    return ok;
}

bool add_session::delete_stdin()
{
    std::string text;
    if (int e = read_to_end(STDIN_FILENO, max_key_file_size, text); e != 0)
        return false;
    bool ok = false;
    int line_number = 0;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        ++line_number;
        if (is_blank_or_comment(line))
            continue;
        while (!line.empty() && is_blank(line.front()))
            line.remove_prefix(1);
        std::optional<loaded_public> key;
        if (auto k = parse_public_key_line(line)) {
            key = loaded_public{{k->key, std::nullopt}, {}};
        } else if (auto c = keygen::read_certificate(line)) {
            public_key plain = c->key();
            key = loaded_public{{std::move(plain), std::move(*c)}, {}};
        }
        if (!key) {
            print_error_line("(stdin):" + std::to_string(line_number) + ": invalid key: invalid format");
            continue;
        }
        // OpenSSH prints the rest of the line here, even when empty: "()".
        if (delete_one(key->key, text_after_key(line), "(stdin)"))
            ok = true;
    }
    return ok;
}

} // namespace longhaul::add
