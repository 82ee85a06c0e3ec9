#include "ssh/keygen/keygen_cert.hpp"

#include "common/auth/agent_client.hpp"
#include "common/file_read.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/keys/key_file.hpp"
#include "common/keys/key_lines.hpp"
#include "common/random.hpp"
#include "common/wire.hpp"
#include "ssh/keygen/keygen_files.hpp"
#include "ssh/keygen/keygen_pkcs11.hpp"
#include "ssh/keygen/keygen_sk.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>

namespace longhaul {

namespace keygen {

namespace {

// What a certificate file may hold: a few lines of base64; anything far
// larger is not one (OpenSSH's MAX_KEY_FILE_SIZE for key files).
constexpr std::size_t max_listing_input = 16 * max_key_file_size;

std::string cert_short_name(key_type t) { return std::string(key_type_short_name(t)) + "-CERT"; }

// tilde_expand_filename for the CA and key paths: "~" and "~user".
std::string expand_tilde(const std::string& path)
{
    if (path.empty() || path[0] != '~')
        return path;
    const auto slash = path.find('/');
    const std::string user = path.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
    const std::string rest = slash == std::string::npos ? std::string() : path.substr(slash);
    if (user.empty())
        return me().home + rest;
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
        fatal("tilde_expand_filename: No such user " + user);
    return std::string(pw.pw_dir) + rest;
}

std::string cert_error_text(errc e)
{
    switch (e) {
    case errc::unsupported: return "unknown or unsupported key type";
    case errc::signature_invalid: return "incorrect signature";
    default: return "invalid format";
    }
}

struct key_to_certify {
    public_key key;
    std::string comment;
};

// sshkey_try_load_public: the first line holding a key. A certificate
// there cannot be certified again.
std::optional<key_to_certify> first_key_in(const std::string& text, const std::string& path)
{
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        if (line.empty() || line[0] == '#')
            continue;
        if (line.rfind("-----BEGIN", 0) == 0 || line == "SSH PRIVATE KEY FILE")
            return std::nullopt;
        std::string_view after = line;
        if (auto key = read_key(after)) {
            after = after.substr(0, after.find_first_of("\r\n"));
            return key_to_certify{std::move(*key), after.empty() ? path : std::string(after)};
        }
        if (auto cert = read_certificate(line))
            fatal("do_ca_sign: key \"" + path + "\" type " + cert_short_name(cert->key().type()) +
                  " cannot be certified");
    }
    return std::nullopt;
}

// sshkey_load_public: the file, then file.pub, then the public half of a
// private key file (which has no comment: OpenSSH then writes "(null)").
key_to_certify load_key_to_certify(const std::string& path)
{
    std::string text;
    int e = 0;
    const bool have_file = read_capped(path, max_key_file_size, text, e);
    if (have_file)
        if (auto k = first_key_in(text, path))
            return std::move(*k);
    std::string pub_text;
    if (read_capped(path + ".pub", max_key_file_size, pub_text, e))
        if (auto k = first_key_in(pub_text, path + ".pub"))
            return std::move(*k);
    if (have_file)
        if (auto k = private_key_file_public_key(text))
            return key_to_certify{std::move(*k), "(null)"};
    // OpenSSH reports its last attempt's error whatever the cause.
    fatal("load pubkey \"" + path + "\": " + std::strerror(ENOENT));
}

void write_certificate(const certificate& cert, const std::string& path, const std::string& comment,
                       const keygen_options& o)
{
    const std::string line =
        std::string(cert.type_name()) + " " + base64_encode(cert.blob()) + " " + comment + "\n";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd != -1;
    int saved = errno;
    if (ok) {
        ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
        saved = errno;
        if (::close(fd) != 0 && ok) {
            ok = false;
            saved = errno;
        }
    }
    // OpenSSH names -f here (usually empty), not the certificate's path.
    if (!ok)
        fatal("Unable to save public key to " + o.file.value_or("") + ": " + std::strerror(saved));
}

// show_options: one line per option, as print_cert shows them.
std::string describe_options(const std::vector<certificate_option>& options, bool critical)
{
    static constexpr const char* known_flags[] = {"permit-X11-forwarding", "permit-agent-forwarding",
                                                  "permit-port-forwarding", "permit-pty", "permit-user-rc",
                                                  "no-touch-required"};
    std::string out;
    for (const auto& o : options) {
        out += "                " + o.name;
        bool known_flag = false;
        for (const char* f : known_flags)
            known_flag = known_flag || (!critical && o.name == f);
        if (known_flag || (critical && o.name == "verify-required")) {
            // A flag: OpenSSH would stop at data after it ("Option corrupt").
            if (!o.data.empty())
                fatal("Option corrupt: extra data at end");
            out += "\n";
        } else if (critical && (o.name == "force-command" || o.name == "source-address")) {
            wire_reader r(o.data);
            const auto value = r.text(o.data.size());
            if (!r.ok())
                fatal("show_options: parse critical: invalid format");
            if (!r.finish())
                fatal("Option corrupt: extra data at end");
            out.append(" ").append(value).append("\n");
        } else if (!o.data.empty()) {
            static constexpr char hex[] = "0123456789abcdef";
            std::string h;
            for (auto b : o.data) {
                h += hex[b >> 4];
                h += hex[b & 15];
            }
            out.append(" UNKNOWN OPTION: ").append(h).append(" (len ").append(std::to_string(o.data.size())).append(")\n");
        } else {
            out += " UNKNOWN FLAG OPTION\n";
        }
    }
    return out;
}

} // namespace

std::string certificate_path(const std::string& pub_path)
{
    const auto dot = pub_path.rfind('.');
    if (dot != std::string::npos && pub_path.compare(dot, std::string::npos, ".pub") == 0)
        return pub_path.substr(0, dot) + "-cert.pub";
    return pub_path + "-cert.pub";
}

result<certificate> read_certificate(std::string_view line, std::string* comment)
{
    auto cert = parse_certificate_line(line.substr(0, line.find('\n')), comment);
    if (!cert)
        return cert.error();
    // sshkey_read checks the CA's signature whatever its algorithm.
    if (!cert->verify_signature(certificate::any_signature_algorithm()))
        return errc::signature_invalid;
    return cert;
}

std::optional<certificate> load_certificate_file(const std::string& path, std::string& comment)
{
    for (const std::string& candidate : {path, path + ".pub"}) {
        std::string text;
        int e = 0;
        if (!read_capped(candidate, max_listing_input, text, e))
            continue;
        std::string_view rest = text;
        while (!rest.empty()) {
            const auto nl = rest.find('\n');
            const std::string_view line = rest.substr(0, nl);
            rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
            if (is_blank_or_comment(line))
                continue;
            auto cert = read_certificate(line, &comment);
            if (cert)
                return std::move(*cert);
            break; // the file's key is not a certificate
        }
    }
    return std::nullopt;
}

std::string describe_certificate(const certificate& cert, fingerprint_hash hash)
{
    const auto& f = cert.fields();
    std::string out;
    out += "        Type: " + std::string(cert.type_name()) + " " +
           (cert.kind() == cert_kind::host ? "host" : "user") + " certificate\n";
    out += "        Public key: " + cert_short_name(cert.key().type()) + " " + key_fingerprint(cert.key(), hash) + "\n";
    out += "        Signing CA: " + std::string(key_type_short_name(cert.signature_key().type())) + " " +
           key_fingerprint(cert.signature_key(), hash) + " (using " + cert.signature_algorithm() + ")\n";
    out += "        Key ID: \"" + f.key_id + "\"\n";
    out += "        Serial: " + std::to_string(f.serial) + "\n";
    out += "        Valid: " + format_cert_validity(f.valid_after, f.valid_before) + "\n";
    out += "        Principals: ";
    if (f.principals.empty())
        out += "(none)\n";
    else {
        for (const auto& p : f.principals)
            out += "\n                " + p;
        out += "\n";
    }
    out += "        Critical Options: ";
    if (f.critical_options.empty())
        out += "(none)\n";
    else
        out.append("\n").append(describe_options(f.critical_options, true));
    out += "        Extensions: ";
    if (f.extensions.empty())
        out += "(none)\n";
    else
        out.append("\n").append(describe_options(f.extensions, false));
    return out;
}

void print_certificate_fingerprint(const certificate& cert, const std::string& comment, const keygen_options& o)
{
    const public_key& key = cert.key();
    std::printf("%d %s %s (%s)\n", key.bits(), fingerprint_text(key, o).c_str(),
                comment.empty() ? "no comment" : comment.c_str(), cert_short_name(key.type()).c_str());
    if (o.verbose)
        std::printf("%s\n", randomart(key_digest(key, o.hash), cert_short_name(key.type()), key.bits(),
                                      fingerprint_hash_name(o.hash))
                                .c_str());
}

} // namespace keygen

namespace {

using namespace keygen;

// The CA of -s as OpenSSH's do_ca_sign finds it: a private key file (a
// security key's: its authenticator signs), or (-U) a public key whose
// private half ssh-agent holds.
ca_signer file_ca(const std::string& path, const keygen_options& o)
{
    auto l = load_private(path, "");
    if (!l.key && l.error == errc::security_key_unsupported) {
        auto record = load_security_key_identity(path, o, "Load key");
        ca_signer ca{record.key, {}};
        ca.sign = security_key_ca_signer(std::move(record), o, ca.failure);
        return ca;
    }
    // Read once: a second read would warn about the file's mode again.
    if (!l.key && l.error != errc::wrong_passphrase && l.error != errc::passphrase_required)
        fatal("Load key \"" + path + "\": " + load_error_text(l));
    auto ca = std::make_shared<const private_key>(l.key ? std::move(*l.key) : load_identity(path, o, "Load key"));
    return {ca->public_part(), [ca](std::string_view alg, byte_span data) { return ca->sign(alg, data); }};
}

ca_signer agent_ca(const std::string& path)
{
    const char* socket = std::getenv("SSH_AUTH_SOCK");
    if (!socket || !*socket)
        fatal("Cannot use public key for CA signature: agent not present");
    errno = 0;
    auto connected = agent_client::connect(socket);
    if (!connected)
        fatal(std::string("Cannot use public key for CA signature: ") +
              (errno != 0 ? std::strerror(errno) : "communication with agent failed"));
    auto agent = std::make_shared<agent_client>(std::move(*connected));
    auto loaded = load_public_key(path);
    if (!loaded)
        fatal("Cannot load CA public key " + path + ": " + std::strerror(ENOENT));
    auto ids = agent->request_identities();
    if (!ids)
        fatal("Retrieve agent key list: communication with agent failed");
    if (ids->empty())
        fatal("Retrieve agent key list: agent contains no identities");
    const bytes ca_blob = loaded->first.blob();
    if (std::none_of(ids->begin(), ids->end(), [&](const agent::identity& id) { return id.key_blob == ca_blob; }))
        fatal("CA key " + path + " not found in agent");
    return {loaded->first, [agent, ca_blob](std::string_view alg, byte_span data) {
                return agent->sign(ca_blob, data, agent::sign_flags_for(alg));
            }};
}

std::string sign_error_text(errc e)
{
    switch (e) {
    case errc::invalid_argument: return "invalid argument";
    case errc::unsupported: return "agent refused operation";
    case errc::signature_invalid: return "incorrect signature";
    case errc::crypto_error: return "error in libcrypto"; // a token's failed C_Sign, as OpenSSH says it
    default: return "invalid format";
    }
}

} // namespace

using namespace keygen;

int keygen_sign(const keygen_options& o, const cert_sign_request& r)
{
    if (!r.key_id)
        fatal("Must specify key id (-I) when certifying");
    cert_option_set options(r.host);
    for (const auto& opt : r.options)
        options.add(opt);

    // A token's key first, as OpenSSH's do_ca_sign (-D wins over -U).
    const std::string ca_path = expand_tilde(r.ca_path);
    const ca_signer ca = r.pkcs11        ? pkcs11_ca(o, *r.pkcs11, ca_path)
                         : r.ca_in_agent ? agent_ca(ca_path)
                                         : file_ca(ca_path, o);
    const auto signature = choose_cert_signature(ca.key.type(), o.key_type);

    certificate_fields fields;
    fields.kind = r.host ? cert_kind::host : cert_kind::user;
    fields.key_id = *r.key_id;
    fields.valid_after = r.validity.from;
    fields.valid_before = r.validity.to;
    fields.critical_options = options.critical_options();
    fields.extensions = options.extensions();
    fields.serial = r.serial.first;
    system_random rng;
    for (const auto& file : r.files) {
        fields.principals = split_principals(r.principals);
        const std::string path = expand_tilde(file);
        const auto loaded = load_key_to_certify(path);
        if (signature.failure)
            fatal("Couldn't certify key " + path + ": " + *signature.failure);
        auto cert = certificate::sign(fields, loaded.key, ca.key, ca.sign, rng, signature.algorithm);
        if (!cert)
            fatal("Couldn't certify key " + path + (r.ca_in_agent && !r.pkcs11 ? " via agent: " : ": ") +
                  (ca.failure->empty() ? sign_error_text(cert.error()) : *ca.failure));
        const std::string out = certificate_path(path);
        write_certificate(*cert, out, loaded.comment, o);
        if (!o.quiet)
            std::fprintf(stderr, "Signed %s key %s: id \"%s\" serial %llu%s%s valid %s\r\n",
                         r.host ? "host" : "user", out.c_str(), fields.key_id.c_str(),
                         static_cast<unsigned long long>(fields.serial), r.principals ? " for " : "",
                         r.principals ? r.principals->c_str() : "",
                         format_cert_validity(fields.valid_after, fields.valid_before).c_str());
        if (r.serial.auto_increment)
            ++fields.serial;
    }
    return 0;
}

int keygen_show_certificates(const keygen_options& o)
{
    const std::string file = identity_or_ask(o, nullptr);
    const bool is_stdin = file == "-";
    const std::string path = is_stdin ? "(stdin)" : file;
    struct stat st {};
    if (!is_stdin && ::stat(file.c_str(), &st) == -1)
        fatal(std::string(progname) + ": " + file + ": " + std::strerror(errno));
    std::string text;
    int e = 0;
    if (!read_capped(file, max_listing_input, text, e))
        fatal(e == EFBIG ? path + ": file too large" : "fopen " + file + ": " + std::strerror(e));
    bool ok = false;
    std::string_view rest = text;
    unsigned long line_number = 0;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        ++line_number;
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        // Only '#' lines are skipped: OpenSSH reads a blank one as a key,
        // and says it is invalid.
        if (!line.empty() && line[0] == '#')
            continue;
        const std::string where = path + ":" + std::to_string(line_number);
        std::string_view probe = line;
        if (read_key(probe)) {
            std::fprintf(stderr, "%s is not a certificate\r\n", where.c_str());
            continue;
        }
        auto cert = read_certificate(line);
        if (!cert && cert.error() == errc::unsupported &&
            !certificate_key_type(line.substr(0, line.find_first_of(" \t"))))
            cert = errc::invalid_format; // not a key line at all
        if (!cert) {
            std::fprintf(stderr, "%s: invalid key: %s\r\n", where.c_str(), cert_error_text(cert.error()).c_str());
            continue;
        }
        ok = true;
        if (!is_stdin && line_number == 1)
            std::printf("%s:\n", path.c_str());
        else
            std::printf("%s:\n", where.c_str());
        std::fputs(describe_certificate(*cert, o.hash).c_str(), stdout);
    }
    std::fflush(stdout);
    return ok ? 0 : 1;
}

} // namespace longhaul
