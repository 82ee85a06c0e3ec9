#include "ssh/keygen/keygen_sshsig.hpp"

#include "common/auth/agent_client.hpp"
#include "common/crypto/hash.hpp"
#include "common/file_read.hpp"
#include "common/keys/allowed_signers.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/keys/key_lines.hpp"
#include "common/keys/revocation_file.hpp"
#include "common/keys/sshsig.hpp"
#include "common/text_parse.hpp"
#include "common/wire.hpp"
#include "ssh/keygen/keygen_cert.hpp"
#include "ssh/keygen/keygen_files.hpp"
#include "ssh/keygen/keygen_sk.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

namespace longhaul {

namespace {

using namespace keygen;

// What OpenSSH's sshbuf_load_file allows, and a bound for allowed_signers.
constexpr std::size_t max_signature_file = 1024 * 1024;
constexpr std::size_t max_signers_file = 16 * 1024 * 1024;
constexpr std::string_view begin_signature = "-----BEGIN SSH SIGNATURE-----\n";

// OpenSSH's error(): the line on stderr, CR LF ended (log.c on a tty-less stderr).
void error_line(const std::string& text) { std::fprintf(stderr, "%s\r\n", text.c_str()); }

// The exit status of `return r` from OpenSSH's main for an SSH_ERR_* code.
constexpr int status_of_ssh_err(int err) { return err & 0xff; }
constexpr int ssh_err_system_error = -24;
constexpr int ssh_err_key_not_found = -46;
constexpr int ssh_err_invalid_argument = -10;
constexpr int ssh_err_invalid_format = -4;

struct sig_options {
    std::string hashalg = "sha512";
    std::uint64_t verify_time = 0;
    bool print_pubkey = false;
};

// sig_process_opts: which -O options an operation takes.
struct accepted_options {
    bool hashalg = false;
    bool verify_time = false;
    bool print_pubkey = false;
};

std::optional<sig_options> process_options(const std::vector<std::string>& opts, accepted_options accept)
{
    sig_options out;
    for (const auto& o : opts) {
        auto starts = [&](std::string_view prefix) {
            return o.size() >= prefix.size() && iequals(std::string_view(o).substr(0, prefix.size()), prefix);
        };
        if (accept.hashalg && starts("hashalg=")) {
            out.hashalg = o.substr(8);
        } else if (accept.verify_time && starts("verify-time=")) {
            const auto t = parse_absolute_time(std::string_view(o).substr(12));
            if (!t || *t == 0) {
                error_line("Invalid \"verify-time\" option");
                return std::nullopt;
            }
            out.verify_time = *t;
        } else if (accept.print_pubkey && iequals(o, "print-pubkey")) {
            out.print_pubkey = true;
        } else {
            error_line("Invalid option \"" + o + "\"");
            return std::nullopt;
        }
    }
    if (accept.verify_time && out.verify_time == 0)
        out.verify_time = static_cast<std::uint64_t>(std::time(nullptr));
    return out;
}

// sshsig_dearmor, then the blob's parse, with OpenSSH's messages; `func`
// names the caller as OpenSSH's error_fr does.
std::optional<sshsig> read_signature(const std::string& path, const char* func)
{
    std::string text;
    int e = 0;
    if (!read_capped(path, max_signature_file, text, e)) {
        error_line(std::string("Couldn't read signature file: ") + (e == EFBIG ? "string too large" : std::strerror(e)));
        return std::nullopt;
    }
    if (text.compare(0, begin_signature.size(), begin_signature) != 0) {
        error_line("Couldn't parse signature: missing header");
        error_line(std::string(func) + ": sshsig_armor: " +
                   (text.size() < begin_signature.size() ? "incomplete message" : "invalid format"));
        return std::nullopt;
    }
    if (text.find("-----END SSH SIGNATURE-----") == std::string::npos) {
        error_line("Couldn't parse signature: missing footer");
        error_line(std::string(func) + ": sshsig_armor: invalid format");
        return std::nullopt;
    }
    auto sig = parse_sshsig(text);
    if (!sig) {
        error_line(std::string("Couldn't verify signature: ") +
                   (sig.error() == errc::signature_invalid ? "incorrect signature" : "invalid format"));
        return std::nullopt;
    }
    return std::move(*sig);
}

// The digest of a file or of standard input, read in pieces.
std::optional<bytes> digest_fd(int fd, hash_alg alg)
{
    hasher h(alg);
    std::vector<std::uint8_t> buf(64 * 1024);
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return std::nullopt;
        if (n == 0)
            break;
        h.update(byte_span(buf.data(), static_cast<std::size_t>(n)));
    }
    return h.finish();
}

// sshkey_type: "ED25519", "ED25519-CERT".
std::string signer_type(const signature_signer& s)
{
    return std::string(key_type_short_name(s.key.type())) + (s.cert ? "-CERT" : "");
}

// sshkey_load_public for -Y sign: a key or a certificate.
std::optional<signature_signer> load_signer(const std::string& path)
{
    std::string comment;
    if (auto cert = load_certificate_file(path, comment))
        return signature_signer{cert->key(), std::move(*cert)};
    if (auto loaded = load_public_key(path))
        return signature_signer{loaded->first, std::nullopt};
    return std::nullopt;
}

// load_sign_key: the private key of a public key or certificate path, or
// a security key's record (the authenticator signs).
using sign_key = std::variant<private_key, openssh_security_key>;
std::optional<sign_key> load_sign_key(const std::string& keypath, const signature_signer& pub,
                                      const keygen_options& o)
{
    std::string privpath = keypath;
    bool waspub = false;
    for (std::string_view suffix : {"-cert.pub", ".pub"}) {
        if (privpath.size() > suffix.size() && privpath.ends_with(suffix)) {
            privpath.resize(privpath.size() - suffix.size());
            waspub = true;
        }
    }
    struct stat st {};
    if (waspub && ::stat(privpath.c_str(), &st) != 0 && errno == ENOENT)
        fatal("No private key found for public key \"" + keypath + "\"");
    auto l = load_editable(privpath, "");
    if (!l.loaded() && l.error != errc::wrong_passphrase && l.error != errc::passphrase_required)
        fatal("No private key found for \"" + privpath + "\"");
    if (!l.loaded()) {
        std::string pass = o.old_passphrase ? *o.old_passphrase : read_passphrase("Enter passphrase: ");
        l = load_editable(privpath, pass);
        cleanse(pass.data(), pass.size());
        if (!l.loaded())
            fatal("Load key \"" + privpath + "\": " + load_error_text(l));
    }
    if (!(l.public_part() == pub.key)) {
        error_line("Public key " + keypath + " doesn't match private " + privpath);
        return std::nullopt;
    }
    if (l.sk)
        return sign_key(std::move(*l.sk));
    return sign_key(std::move(*l.key));
}

int sign_files(const keygen_options& o, const sshsig_request& r)
{
    for (std::size_t i = 0; i < r.files.size(); ++i)
        if (r.files[i] == "-" && r.files.size() > 1)
            fatal("Cannot sign mix of paths and standard input");
    const auto opts = process_options(r.options, {.hashalg = true});
    if (!opts)
        return 255;
    const std::string& keypath = *o.file;
    auto signer = load_signer(keypath);
    if (!signer) {
        error_line("Couldn't load public key " + keypath + ": " + std::strerror(ENOENT));
        return 255;
    }
    // The agent signs when it holds the key (-U: only the agent).
    sshsig_signer sign;
    std::shared_ptr<agent_client> agent;
    const bytes signer_blob = signer->cert ? signer->cert->blob() : signer->key.blob();
    const char* socket = std::getenv("SSH_AUTH_SOCK");
    auto connected = socket && *socket ? agent_client::connect(socket) : result<agent_client>(errc::io_error);
    if (!connected) {
        if (r.use_agent)
            fatal("Couldn't get agent socket");
    } else {
        agent = std::make_shared<agent_client>(std::move(*connected));
        auto ids = agent->request_identities();
        const bool held = ids && std::any_of(ids->begin(), ids->end(),
                                             [&](const agent::identity& id) { return id.key_blob == signer_blob; });
        if (held)
            sign = [agent, signer_blob](std::string_view alg, byte_span data) {
                return agent->sign(signer_blob, data, agent::sign_flags_for(alg));
            };
        else if (r.use_agent)
            fatal("Couldn't find key in agent");
    }
    // A security key's failure, in OpenSSH's words, for "Signing ... failed".
    auto sk_failure = std::make_shared<std::string>();
    if (!sign) {
        auto loaded = load_sign_key(keypath, *signer, o);
        if (!loaded)
            return 255;
        if (auto* sk = std::get_if<openssh_security_key>(&*loaded)) {
            sign = security_key_signer(std::move(*sk), o, sk_failure);
        } else {
            auto key = std::make_shared<private_key>(std::move(std::get<private_key>(*loaded)));
            sign = [key](std::string_view alg, byte_span data) { return key->sign(alg, data); };
        }
    }

    const auto alg = sshsig_hash_alg(opts->hashalg);
    const std::vector<std::string> files = r.files.empty() ? std::vector<std::string>{"-"} : r.files;
    for (const auto& file : files) {
        const bool in = file == "-";
        const std::string name = in && r.files.empty() ? "(stdin)" : file;
        const int fd = in ? STDIN_FILENO : ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd == -1) {
            error_line("Cannot open " + file + " for signing: " + std::strerror(errno));
            return 255;
        }
        struct closer {
            int fd;
            ~closer()
            {
                if (fd != STDIN_FILENO)
                    ::close(fd);
            }
        } close_it{fd};
        if (!o.quiet)
            std::fprintf(stderr, in ? "Signing data on standard input\n" : "Signing file %s\n", name.c_str());
        if (!alg) {
            error_line("sshsig_check_hashalg: unsupported hash algorithm \"" + opts->hashalg + "\"");
            error_line("sshsig_sign_fd: hash_file: signature algorithm not supported");
            error_line("Signing " + name + " failed: signature algorithm not supported");
            return 255;
        }
        auto digest = digest_fd(fd, *alg);
        if (!digest) {
            error_line("Signing " + name + " failed: " + std::strerror(errno));
            return 255;
        }
        auto armored = sign_sshsig_digest(signer->key, signer->cert, sign, r.ns.value_or(""), opts->hashalg, *digest);
        if (!armored) {
            error_line("Signing " + name + " failed: " +
                       (!sk_failure->empty()                  ? *sk_failure
                        : armored.error() == errc::unsupported ? "agent refused operation"
                                                               : "error in libcrypto"));
            return 255;
        }
        if (in) {
            std::fputs(armored->c_str(), stdout);
            std::fflush(stdout);
            continue;
        }
        const std::string out = file + ".sig";
        if (!confirm_overwrite(out))
            continue;
        const int wfd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (wfd == -1) {
            error_line("Cannot open " + out + ": " + std::strerror(errno));
            return 255;
        }
        std::string_view rest = *armored;
        while (!rest.empty()) {
            const ssize_t n = ::write(wfd, rest.data(), rest.size());
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
        const int saved = errno;
        ::close(wfd);
        if (!rest.empty()) {
            error_line("Cannot write to " + out + ": " + std::strerror(saved));
            return 255;
        }
        if (!o.quiet)
            std::fprintf(stderr, "Write signature to %s\n", out.c_str());
    }
    return 0;
}

// sshsig_verify_fd's checks of a parsed signature over standard input,
// with its messages.
bool check_signature_on_stdin(const sshsig& sig, const std::string& ns)
{
    const auto alg = sshsig_hash_alg(sig.hash_alg);
    auto digest = alg ? digest_fd(STDIN_FILENO, *alg) : std::nullopt;
    if (!digest) {
        error_line("Couldn't verify signature: invalid format");
        return false;
    }
    if (sig.ns != ns) {
        error_line("Couldn't verify signature: namespace does not match");
        return false;
    }
    wire_reader reader(sig.signature);
    const std::string_view sig_alg = reader.text(64);
    if (sig.key.type() == key_type::rsa && sig_alg != "rsa-sha2-256" && sig_alg != "rsa-sha2-512") {
        error_line("Couldn't verify signature: unsupported RSA signature algorithm " + std::string(sig_alg));
        return false;
    }
    if (!verify_sshsig_digest(sig, ns, *digest)) {
        error_line("Signature verification failed: incorrect signature");
        return false;
    }
    return true;
}

std::optional<std::string> read_signers_file(const std::string& path)
{
    std::string text;
    int e = 0;
    if (!read_capped(path, max_signers_file, text, e)) {
        error_line("Unable to open allowed keys file \"" + path + "\": " +
                   (e == EFBIG ? std::string("file too large") : std::strerror(e)));
        return std::nullopt;
    }
    return text;
}

void print_errors(const std::vector<signers_message>& log, const keygen_options& o)
{
    for (const auto& m : log)
        if (m.level == log_level::error || (o.verbose && m.level == log_level::debug1))
            error_line(m.level == log_level::error ? m.text : "debug1: " + m.text);
}

// sig_verify; check-novalidate has neither principal nor allowed signers.
int verify(const keygen_options& o, const sshsig_request& r, bool validate)
{
    const std::string& ns = *r.ns;
    std::optional<signature_signer> signer;
    const auto opts = process_options(r.options, {.verify_time = true, .print_pubkey = true});
    bool ok = false;
    if (opts) {
        if (auto sig = read_signature(*r.signature, "sig_verify"); sig && check_signature_on_stdin(*sig, ns)) {
            signer = signature_signer{sig->key, sig->cert};
            ok = true;
            if (validate && r.revoked) {
                const auto check = sig->cert ? check_revocation_file(*r.revoked, *sig->cert)
                                             : check_revocation_file(*r.revoked, sig->key);
                ok = check.result == revocation_check::status::not_revoked;
            }
            if (ok && validate) {
                const auto contents = read_signers_file(*o.file);
                ok = false;
                if (contents) {
                    allowed_signers_query q;
                    q.path = *o.file;
                    q.signer = *signer;
                    q.principal = r.identity;
                    q.ns = ns;
                    q.verify_time = opts->verify_time;
                    auto found = check_allowed_signers(*contents, q);
                    print_errors(found.log, o);
                    ok = found.found;
                }
            }
        }
    }
    std::fflush(stderr);
    if (!o.quiet) {
        if (ok) {
            const std::string fp = key_fingerprint(signer->key, o.hash);
            if (validate)
                std::printf("Good \"%s\" signature for %s with %s key %s\n", ns.c_str(), r.identity->c_str(),
                            signer_type(*signer).c_str(), fp.c_str());
            else
                std::printf("Good \"%s\" signature with %s key %s\n", ns.c_str(), signer_type(*signer).c_str(),
                            fp.c_str());
        } else {
            std::printf("Could not verify signature.\n");
        }
    }
    if (ok && opts->print_pubkey)
        std::printf("%s\n", signer->cert ? (std::string(signer->cert->type_name()) + " " +
                                             base64_encode(signer->cert->blob()))
                                                .c_str()
                                           : format_public_key(signer->key).c_str());
    return ok ? 0 : 255;
}

int find_principals(const keygen_options& o, const sshsig_request& r)
{
    bool ok = false;
    allowed_signers_result found;
    if (const auto opts = process_options(r.options, {.verify_time = true})) {
        if (auto sig = read_signature(*r.signature, "sig_find_principals")) {
            if (const auto contents = read_signers_file(*o.file)) {
                allowed_signers_query q;
                q.path = *o.file;
                q.signer = signature_signer{sig->key, sig->cert};
                q.verify_time = opts->verify_time;
                found = check_allowed_signers(*contents, q);
                print_errors(found.log, o);
                ok = found.found;
            } else {
                error_line(std::string("sig_find_principals: sshsig_find_principal: ") + std::strerror(ENOENT));
            }
        }
    }
    if (!ok) {
        std::fflush(stdout);
        std::fprintf(stderr, "No principal matched.\n");
        return 255;
    }
    // One per line, up to an empty field (strsep).
    std::string_view list = found.principals;
    while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string_view p = list.substr(0, comma);
        if (p.empty())
            break;
        std::printf("%.*s\n", static_cast<int>(p.size()), p.data());
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    return 0;
}

int match_principals(const keygen_options& o, const sshsig_request& r)
{
    if (!process_options(r.options, {}))
        return status_of_ssh_err(ssh_err_invalid_argument);
    const auto contents = read_signers_file(*o.file);
    if (!contents) {
        std::fprintf(stderr, "No principal matched.\n");
        return status_of_ssh_err(ssh_err_system_error);
    }
    auto matched = match_allowed_principals(*contents, *o.file, *r.identity);
    print_errors(matched.log, o);
    if (matched.error || matched.principals.empty()) {
        std::fprintf(stderr, "No principal matched.\n");
        return status_of_ssh_err(matched.error ? ssh_err_invalid_format : ssh_err_key_not_found);
    }
    for (const auto& p : matched.principals)
        std::printf("%s\n", p.c_str());
    return 0;
}

// "Too few arguments for OP: missing WHAT", status 1 (OpenSSH's spacing kept).
int too_few(const std::string& text)
{
    error_line("Too few arguments for " + text);
    return 1;
}

} // namespace

int keygen_sshsig(const keygen_options& o, const sshsig_request& r, void (*usage)())
{
    // OpenSSH compares prefixes (strncmp): "verify-foo" is "verify".
    const std::string& op = r.operation;
    const bool have_ns = r.ns && !r.ns->empty();
    if (op.starts_with("find-principals")) {
        if (!r.signature)
            return too_few("find-principals:missing signature file");
        if (!o.file)
            return too_few("find-principals:missing allowed keys file");
        return find_principals(o, r);
    }
    if (op.starts_with("match-principals")) {
        if (!o.file)
            return too_few("match-principals:missing allowed keys file");
        if (!r.identity)
            return too_few("match-principals: missing principal ID");
        return match_principals(o, r);
    }
    if (op.starts_with("sign")) {
        if (!have_ns)
            return too_few("sign: missing namespace");
        if (!o.file)
            return too_few("sign: missing key");
        return sign_files(o, r);
    }
    if (op.starts_with("check-novalidate")) {
        if (!have_ns)
            return too_few("check-novalidate: missing namespace");
        if (!r.signature)
            return too_few("check-novalidate: missing signature file");
        return verify(o, r, false);
    }
    if (op.starts_with("verify")) {
        if (!have_ns)
            return too_few("verify: missing namespace");
        if (!r.signature)
            return too_few("verify: missing signature file");
        if (!o.file)
            return too_few("sign: missing allowed keys file");
        if (!r.identity)
            return too_few("verify: missing principal identity");
        return verify(o, r, true);
    }
    error_line("Unsupported operation for -Y: \"" + op + "\"");
    usage();
    return 1;
}

} // namespace longhaul
