#include "ssh/keygen/keygen_krl.hpp"

#include "common/crypto/hash.hpp"
#include "common/file_read.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/keys/revocation.hpp"
#include "common/keys/revocation_file.hpp"
#include "common/wire.hpp"
#include "ssh/keygen/keygen_cert.hpp"
#include "ssh/keygen/keygen_files.hpp"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace longhaul {
namespace keygen {

namespace {

// A spec file or the KRL being updated: far larger than any real one is a
// mistake, not something to hold in memory (readers cap KRLs the same).
constexpr std::size_t max_krl_input = max_revocation_file_size;

bool blank(char c) noexcept { return c == ' ' || c == '\t'; }

std::string_view skip_blanks(std::string_view s) noexcept
{
    while (!s.empty() && blank(s.front()))
        s.remove_prefix(1);
    return s;
}

// A case-insensitive "word:" prefix, removed with the blanks after it.
bool take_prefix(std::string_view& s, std::string_view prefix)
{
    if (s.size() < prefix.size() || ::strncasecmp(s.data(), prefix.data(), prefix.size()) != 0)
        return false;
    s = skip_blanks(s.substr(prefix.size()));
    return true;
}

std::string line_prefix(const std::string& path, unsigned long line)
{
    return path + ":" + std::to_string(line) + ": ";
}

// strtoull(text, base 0) as OpenSSH reads serials: leading blanks and a
// sign accepted (so "-5" is 2^64 - 5), "0x" hex and leading-0 octal.
struct parsed_serial {
    std::uint64_t value;
    std::string_view rest; // what strtoull did not consume
    bool out_of_range;
};

parsed_serial parse_serial(std::string_view text)
{
    const std::string s(text);
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 0);
    return {v, text.substr(static_cast<std::size_t>(end - s.c_str())), errno == ERANGE && v == ULLONG_MAX};
}

void revoke_serials(krl_writer& b, std::string_view cp, const std::string& path, unsigned long lnum,
                    const krl_ca& ca)
{
    if (!ca.given)
        fatal("revoking certificates by serial number requires specification of a CA key");
    const auto lo = parse_serial(cp);
    if (cp.empty() || (!lo.rest.empty() && lo.rest.front() != '-'))
        fatal(line_prefix(path, lnum) + "invalid serial \"" + std::string(cp) + "\"");
    if (lo.out_of_range)
        fatal(line_prefix(path, lnum) + "serial out of range");
    std::uint64_t hi = lo.value;
    if (!lo.rest.empty()) { // "N-M"
        const std::string_view cp2 = lo.rest.substr(1);
        const auto second = parse_serial(cp2);
        if (cp2.empty() || !second.rest.empty())
            fatal(line_prefix(path, lnum) + "invalid serial \"" + std::string(cp2) + "\"");
        if (second.out_of_range)
            fatal(line_prefix(path, lnum) + "serial out of range");
        if (second.value <= lo.value)
            fatal(line_prefix(path, lnum) + "invalid serial range " + std::to_string(lo.value) + ":" +
                  std::to_string(second.value));
        hi = second.value;
    }
    // Serial 0 passes the checks above and fails here, as in OpenSSH.
    if (!b.add_serials(ca.key, lo.value, hi))
        fatal("update_krl_from_file: revoke serial failed");
}

// "hash: SHA256:<base64 without padding>".
void revoke_hash(krl_writer& b, std::string_view cp, const std::string& path, unsigned long lnum)
{
    constexpr std::string_view sha256_prefix = "SHA256:";
    if (cp.substr(0, sha256_prefix.size()) != sha256_prefix)
        fatal(line_prefix(path, lnum) + "unsupported hash algorithm");
    std::string text(cp.substr(sha256_prefix.size()));
    while (text.size() % 4 != 0)
        text.push_back('=');
    const auto decoded = base64_decode(text);
    if (!decoded)
        fatal(line_prefix(path, lnum) + "decode hash failed: invalid format");
    if (decoded->size() != sha256_digest{}.size())
        fatal("update_krl_from_file: revoke key failed: invalid format");
    sha256_digest d{};
    std::copy(decoded->begin(), decoded->end(), d.begin());
    b.add_sha256(d);
}

// A key as sshkey_read reads one ("type base64 [comment]"): a plain key,
// or a certificate (its signature checked).
struct spec_key {
    bytes plain_blob; // the key, or the certificate's key
    std::optional<certificate> cert;
};

spec_key read_spec_key(std::string_view cp, const std::string& path, unsigned long lnum)
{
    const auto invalid = [&](std::string_view why) {
        fatal(line_prefix(path, lnum) + "invalid key: " + std::string(why));
    };
    std::size_t n = 0;
    while (n < cp.size() && !blank(cp[n]))
        ++n;
    const std::string_view type = cp.substr(0, n);
    std::string_view rest = skip_blanks(cp.substr(n));
    n = 0;
    while (n < rest.size() && !blank(rest[n]))
        ++n;
    const std::string_view encoded = rest.substr(0, n);
    const bool cert_type = certificate_key_type(type).has_value();
    const bool ours = cert_type || key_type_from_name(type).has_value();
    if (!ours && !openssh_only_key_type(type))
        invalid("invalid format");
    if (encoded.empty() || base64_decoded_size(encoded) > max_certificate_blob)
        invalid("invalid format");
    auto blob = base64_decode(encoded);
    if (!blob)
        invalid("invalid format");
    wire_reader r(*blob);
    const std::string_view blob_type = r.text(64);
    if (!r.ok())
        invalid("invalid format");
    if (blob_type != type)
        invalid("key type does not match");
    if (!ours) {
        // DSA and FIDO keys: no key Longhaul accepts can be one, but a list
        // may name them; their blobs are revoked as given. Their
        // certificates would need parsing this program does not do.
        if (type.ends_with("-cert-v01@openssh.com"))
            invalid("unknown or unsupported key type");
        return {std::move(*blob), std::nullopt};
    }
    if (cert_type) {
        auto cert = read_certificate(cp);
        if (!cert)
            invalid(cert.error() == errc::signature_invalid ? "incorrect signature" : "invalid format");
        bytes plain = cert->key().blob();
        return {std::move(plain), std::move(*cert)};
    }
    auto key = public_key::from_blob(*blob);
    if (!key)
        invalid(error_text(key.error(), 0));
    return {key->blob(), std::nullopt};
}

template <std::size_t N>
std::array<std::uint8_t, N> digest_of(hash_alg alg, byte_span blob)
{
    const bytes d = digest(alg, blob);
    std::array<std::uint8_t, N> out{};
    std::copy(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(std::min(d.size(), N)), out.begin());
    return out;
}

void revoke_line(krl_writer& b, std::string_view cp, const std::string& path, unsigned long lnum, const krl_ca& ca)
{
    if (take_prefix(cp, "serial:"))
        return revoke_serials(b, cp, path, lnum, ca);
    if (take_prefix(cp, "id:")) {
        if (!ca.given)
            fatal("revoking certificates by key ID requires specification of a CA key");
        b.add_key_id(ca.key, std::string(cp));
        return;
    }
    if (take_prefix(cp, "hash:"))
        return revoke_hash(b, cp, path, lnum);
    enum class how { as_listed, explicit_key, sha1, sha256 } mode = how::as_listed;
    if (take_prefix(cp, "key:"))
        mode = how::explicit_key;
    else if (take_prefix(cp, "sha1:"))
        mode = how::sha1;
    else if (take_prefix(cp, "sha256:"))
        mode = how::sha256;
    const spec_key key = read_spec_key(cp, path, lnum);
    switch (mode) {
    case how::explicit_key: b.add_explicit_key(key.plain_blob); break;
    case how::sha1: b.add_sha1(digest_of<20>(hash_alg::sha1, key.plain_blob)); break;
    case how::sha256: b.add_sha256(digest_of<32>(hash_alg::sha256, key.plain_blob)); break;
    case how::as_listed:
        // A certificate is revoked under its own CA: by serial, or by key
        // ID when it has no serial (0). A plain key explicitly.
        if (!key.cert) {
            b.add_explicit_key(key.plain_blob);
        } else if (key.cert->serial() == 0) {
            b.add_key_id(key.cert->signature_key().blob(), key.cert->key_id());
        } else {
            const std::uint64_t s = key.cert->serial();
            (void)b.add_serials(key.cert->signature_key().blob(), s, s);
        }
        break;
    }
}

// sshbuf_write_file: created 0644 (less the umask), truncated, removed
// again when writing fails.
void write_krl(const std::string& path, const bytes& blob)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1)
        fatal("write " + path + ": " + std::strerror(errno));
    std::size_t done = 0;
    while (done < blob.size()) {
        const ssize_t n = ::write(fd, blob.data() + done, blob.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int e = n < 0 ? errno : EIO;
            ::close(fd);
            ::unlink(path.c_str());
            fatal("write " + path + ": " + std::strerror(e));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) {
        const int e = errno;
        ::unlink(path.c_str());
        fatal("write " + path + ": " + std::strerror(e));
    }
}

} // namespace

void revoke_from_text(krl_writer& builder, std::string_view text, const std::string& path, const krl_ca& ca)
{
    unsigned long lnum = 0;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++lnum;
        // A C string ends at a NUL; a comment at the first '#'.
        line = line.substr(0, line.find('\0'));
        line = skip_blanks(line);
        line = line.substr(0, line.find('#'));
        while (!line.empty() && blank(line.back()))
            line.remove_suffix(1);
        if (!line.empty())
            revoke_line(builder, line, path, lnum, ca);
    }
}

krl load_krl(const std::string& path)
{
    std::string text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd == -1)
        fatal("Unable to load KRL " + path + ": " + std::strerror(errno));
    const int err = read_to_end(fd, max_krl_input, text);
    ::close(fd);
    if (err != 0)
        fatal("Unable to load KRL " + path + ": " + (err == EFBIG ? "invalid format" : std::strerror(err)));
    // Only a KRL: a key list is not one (OpenSSH's load_krl).
    if (!starts_with_krl_magic(as_bytes(text)))
        fatal("Invalid KRL file " + path + ": KRL file has invalid magic number");
    auto k = parse_krl(as_bytes(text));
    if (!k)
        fatal("Invalid KRL file " + path + ": " + std::string(revocation_error_reason(k.error())));
    return std::move(*k);
}

} // namespace keygen

int keygen_generate_krl(const keygen_options& o, const krl_generate_request& request)
{
    using namespace keygen;
    if (!o.file || o.file->empty())
        fatal("KRL generation requires an output file");
    const std::string& out_path = *o.file;
    struct stat st{};
    if (::stat(out_path.c_str(), &st) == -1) {
        if (errno != ENOENT)
            fatal("Cannot access KRL \"" + out_path + "\": " + std::strerror(errno));
        if (request.update)
            fatal("KRL \"" + out_path + "\" does not exist");
    }
    krl_ca ca;
    if (request.ca_path) {
        ca.given = true;
        if (::strcasecmp(request.ca_path->c_str(), "none") != 0) {
            auto loaded = load_public_key(*request.ca_path);
            if (!loaded)
                fatal("Cannot load CA public key " + *request.ca_path + ": " + std::strerror(ENOENT));
            ca.key = loaded->first.blob();
        }
    }

    krl_writer builder;
    if (request.update) {
        builder = krl_writer(load_krl(out_path));
    } else {
        builder.set_generated_date(static_cast<std::uint64_t>(std::time(nullptr)));
    }
    if (request.version != 0)
        builder.set_version(request.version);
    if (o.comment)
        builder.set_comment(*o.comment);

    // OpenSSH's "Revoking from" lines go through stdio, which a fatal()
    // (_exit) discards unless stdout is a terminal: held back likewise, so
    // that a failing run prints what OpenSSH's does.
    const bool immediate = ::isatty(STDOUT_FILENO) == 1;
    std::string held;
    for (const auto& file : request.files) {
        std::string text;
        std::string path = file;
        if (file == "-") {
            path = "(standard input)";
            if (read_to_end(STDIN_FILENO, max_krl_input, text) == EFBIG)
                fatal(path + ": " + std::strerror(EFBIG));
        } else {
            const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd == -1)
                fatal("fopen " + file + ": " + std::strerror(errno));
            // A read error (a directory) ends the file, as getline's does.
            const int err = read_to_end(fd, max_krl_input, text);
            ::close(fd);
            if (err == EFBIG)
                fatal(path + ": " + std::strerror(EFBIG));
        }
        if (!o.quiet) {
            const std::string line = "Revoking from " + path + "\n";
            if (immediate) {
                std::fputs(line.c_str(), stdout);
                std::fflush(stdout);
            } else {
                held += line;
            }
        }
        revoke_from_text(builder, text, path, ca);
    }
    write_krl(out_path, builder.to_blob());
    std::fputs(held.c_str(), stdout);
    return 0;
}

} // namespace longhaul
