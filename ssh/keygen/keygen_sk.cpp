#include "ssh/keygen/keygen_sk.hpp"

#include "common/file_read.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/log.hpp"
#include "common/random.hpp"
#include "common/wire.hpp"
#include "ssh/keygen/keygen_files.hpp"
#include "ssh/prompt/prompt.hpp"
#include "ssh/prompt/user_notifier.hpp"
#include "ssh/sk/sk_tool.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <variant>

namespace longhaul::keygen {

namespace {

// A challenge is hashed into the attestation (clientDataHash); authenticator
// middleware takes a few hundred bytes at most. A bound keeps a mistaken
// -O challenge=/dev/zero from filling memory.
constexpr std::size_t max_challenge = 64 * 1024;
constexpr std::size_t random_challenge = 32;
constexpr int max_pin_attempts = 3;

// -O challenge=FILE: the whole file, or OpenSSH's message.
bytes load_challenge(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    std::string text;
    const int err = fd < 0 ? errno : read_to_end(fd, max_challenge, text);
    if (fd >= 0)
        ::close(fd);
    if (err != 0)
        fatal("Unable to load FIDO enrollment challenge \"" + path + "\": " +
              (err == EFBIG ? "longer than " + std::to_string(max_challenge) + " bytes" : std::strerror(err)));
    return bytes(text.begin(), text.end());
}

bool starts_with_nocase(const std::string& s, const char* prefix)
{
    return ::strncasecmp(s.c_str(), prefix, std::strlen(prefix)) == 0;
}

// OpenSSH's question before replacing a resident credential: only "y" or
// "Y" at the start of the answer replaces it.
bool confirm_sk_overwrite(const sk_enroll_request& r)
{
    std::printf("A resident key scoped to '%s' with user id '%s' already exists.\n", r.application.c_str(),
                r.user ? r.user->c_str() : "null");
    std::printf("Overwrite key in token (y/n)? ");
    std::fflush(stdout);
    char answer[16];
    if (std::fgets(answer, sizeof answer, stdin) == nullptr)
        return false;
    return answer[0] == 'y' || answer[0] == 'Y';
}

// Wipes a PIN however the scope ends (a failure ends the program by an
// exception).
struct pin_wiper {
    std::string& pin;
    ~pin_wiper() { cleanse(pin.data(), pin.size()); }
};

// One signature by the authenticator, the provider loaded on first use
// (its load failure's lines printed then): the signature blob, or
// OpenSSH's words for what failed.
std::variant<bytes, std::string> authenticator_sign(std::optional<sk_provider>& provider, const std::string& path,
                                                    const openssh_security_key& key, byte_span data, const char* pin)
{
    if (!provider) {
        std::string why;
        provider = load_sk_provider(path, "-w", why);
        if (!provider)
            return why;
    }
    auto r = provider->sign(key.key.type(), data, key.key.application(), key.key_handle, key.flags, pin);
    if (auto* f = std::get_if<sk_failure>(&r))
        return std::string(sk_error_text(f->code));
    auto blob = encode_sk_signature(key.key.type(), std::get<sk_sign_result>(r));
    if (!blob)
        return std::string("invalid format");
    return std::move(*blob);
}

// -w, else $SSH_SK_PROVIDER, else the built-in middleware.
std::string provider_path(const keygen_options& o)
{
    if (o.sk_provider)
        return *o.sk_provider;
    if (const char* env = std::getenv("SSH_SK_PROVIDER"))
        return env;
    return "internal";
}

} // namespace

std::string read_sk_pin(const char* prompt)
{
    const char* req = std::getenv("SSH_ASKPASS_REQUIRE");
    const char* display = std::getenv("DISPLAY");
    bool allow = display != nullptr && *display != '\0';
    bool use = false;
    if (req != nullptr && ::strcasecmp(req, "force") == 0)
        use = allow = true;
    else if (req != nullptr && ::strcasecmp(req, "prefer") == 0)
        use = allow;
    else if (req != nullptr && ::strcasecmp(req, "never") == 0)
        allow = false;
    if (!use && ::isatty(STDIN_FILENO) == 0)
        use = true;
    if (use && allow) {
        auto answer = run_askpass(prompt, askpass_program());
        return answer ? std::string(answer->span().begin(), answer->span().end()) : std::string();
    }
    return read_passphrase(prompt);
}

std::function<result<bytes>(std::string_view, byte_span)> security_key_signer(openssh_security_key key,
                                                                             const keygen_options& o,
                                                                             std::shared_ptr<std::string> failure)
{
    auto provider = std::make_shared<std::optional<sk_provider>>();
    return [key = std::move(key), path = provider_path(o), hash = o.hash, provider,
            failure](std::string_view, byte_span data) -> result<bytes> {
        const std::string type(key_type_short_name(key.key.type()));
        std::string pin;
        const pin_wiper wipe{pin};
        const bool want_pin = (key.flags & sk_api::flag_user_verification_required) != 0;
        if (want_pin)
            pin = read_sk_pin(("Enter PIN for " + type + " key: ").c_str());
        if ((key.flags & sk_api::flag_user_presence_required) != 0)
            std::fprintf(stderr, "Confirm user presence for key %s %s\n", type.c_str(),
                         key_fingerprint(key.key, hash).c_str());
        auto signed_ = authenticator_sign(*provider, path, key, data, want_pin ? pin.c_str() : nullptr);
        if (auto* why = std::get_if<std::string>(&signed_)) {
            std::fprintf(stderr, "Couldn't sign message: %s\r\n", why->c_str());
            *failure = std::move(*why);
            return errc::signature_invalid;
        }
        return std::move(std::get<bytes>(signed_));
    };
}

std::function<result<bytes>(std::string_view, byte_span)> security_key_ca_signer(openssh_security_key key,
                                                                                const keygen_options& o,
                                                                                std::shared_ptr<std::string> failure)
{
    // Asked once for every certificate; wiped when the signer goes.
    auto pin = std::shared_ptr<std::string>(new std::string, [](std::string* p) {
        cleanse(p->data(), p->size());
        delete p;
    });
    const bool want_pin = (key.flags & sk_api::flag_user_verification_required) != 0;
    if (want_pin)
        *pin = read_sk_pin("Enter PIN for CA key: ");
    auto provider = std::make_shared<std::optional<sk_provider>>();
    auto log = std::make_shared<logger>("ssh-keygen", o.verbose ? log_level::debug3 : log_level::info);
    const std::string notice = "Confirm user presence for key " + std::string(key_type_short_name(key.key.type())) +
                               " " + key_fingerprint(key.key, o.hash);
    return [key = std::move(key), path = provider_path(o), pin, want_pin, provider, log, notice,
            failure](std::string_view, byte_span data) -> result<bytes> {
        std::optional<user_notifier> touch;
        if ((key.flags & sk_api::flag_user_presence_required) != 0)
            touch.emplace(false, notice, *log);
        auto signed_ = authenticator_sign(*provider, path, key, data, want_pin ? pin->c_str() : nullptr);
        // OpenSSH ends the notice before it looks at the outcome.
        if (touch)
            touch->complete("User presence confirmed");
        if (auto* why = std::get_if<std::string>(&signed_)) {
            *failure = std::move(*why);
            return errc::signature_invalid;
        }
        return std::move(std::get<bytes>(signed_));
    };
}

sk_generation parse_sk_generation_options(key_type t, const std::vector<std::string>& options)
{
    sk_generation g;
    g.request.type = t;
    for (const auto& opt : options) {
        if (::strcasecmp(opt.c_str(), "no-touch-required") == 0) {
            g.request.flags &= static_cast<std::uint8_t>(~sk_api::flag_user_presence_required);
        } else if (::strcasecmp(opt.c_str(), "verify-required") == 0) {
            g.request.flags |= sk_api::flag_user_verification_required;
        } else if (::strcasecmp(opt.c_str(), "resident") == 0) {
            g.request.flags |= sk_api::flag_resident_key;
        } else if (starts_with_nocase(opt, "device=")) {
            g.request.device = opt.substr(7);
        } else if (starts_with_nocase(opt, "user=")) {
            g.request.user = opt.substr(5);
        } else if (starts_with_nocase(opt, "challenge=")) {
            g.request.challenge = load_challenge(opt.substr(10));
        } else if (starts_with_nocase(opt, "write-attestation=")) {
            g.attestation_path = opt.substr(18);
        } else if (starts_with_nocase(opt, "application=")) {
            g.request.application = opt.substr(12);
            if (g.request.application.rfind("ssh:", 0) != 0)
                fatal("FIDO application string must begin with \"ssh:\"");
        } else {
            fatal("Option \"" + opt + "\" is unsupported for FIDO authenticator enrollment");
        }
    }
    return g;
}

sk_enrolled enroll_security_key(const sk_generation& g, const keygen_options& o)
{
    const std::string path = provider_path(o);
    sk_enroll_request request = g.request;
    if (request.challenge.empty()) {
        request.challenge.resize(random_challenge);
        system_random().fill(request.challenge);
    }
    std::optional<sk_provider> provider;
    std::string pin;
    const pin_wiper wipe{pin}; // also when a failure ends the program
    bool have_pin = false, again = false;
    for (int attempt = 0;;) {
        if (!o.quiet)
            std::printf("You may need to touch your authenticator%s to authorize key generation.\n",
                        again ? " again" : "");
        std::fflush(stdout);
        again = true;
        if (!provider) {
            std::string why;
            provider = load_sk_provider(path, "-w", why);
            if (!provider)
                fatal("Key enrollment failed: " + why);
        }
        auto result = provider->enroll(request, have_pin ? pin.c_str() : nullptr);
        if (auto* ok = std::get_if<sk_enroll_result>(&result)) {
            auto key = sk_enrolled_public_key(request.type, *ok, request.application);
            if (!key) {
                std::fprintf(stderr, "Authenticator returned invalid %s key\r\n",
                             request.type == key_type::sk_ecdsa_p256 ? "ECDSA" : "ed25519");
                fatal("Key enrollment failed: invalid format");
            }
            sk_enrolled out;
            out.record.key = std::move(*key);
            out.record.flags = ok->flags; // what the authenticator set, as OpenSSH stores it
            out.record.key_handle = ok->key_handle;
            out.attestation = attestation_blob(*ok);
            return out;
        }
        const auto& f = std::get<sk_failure>(result);
        // A resident credential of this application and user exists: ask,
        // then try once more with the "force" flag.
        if (f.code == sk_api::err_credential_exists && (request.flags & sk_api::flag_resident_key) != 0 &&
            (request.flags & sk_api::flag_force_operation) == 0 && confirm_sk_overwrite(request)) {
            request.flags |= sk_api::flag_force_operation;
            continue;
        }
        if (f.code != sk_api::err_pin_required) {
            if (!f.from_library)
                std::fprintf(stderr, "%s\r\n", f.message.c_str());
            fatal(std::string("Key enrollment failed: ") + sk_error_text(f.code));
        }
        if (have_pin) {
            std::fprintf(stderr, "PIN incorrect\r\n");
            cleanse(pin.data(), pin.size());
            pin.clear();
            have_pin = false;
        }
        if (++attempt >= max_pin_attempts)
            fatal("Too many incorrect PINs");
        pin = read_sk_pin("Enter PIN for authenticator: ");
        have_pin = true;
    }
}

bytes attestation_blob(const sk_enroll_result& r)
{
    bytes out;
    wire_writer(out)
        .string("ssh-sk-attest-v01")
        .string(byte_span(r.attestation_cert))
        .string(byte_span(r.signature))
        .string(byte_span(r.authdata))
        .u32(0)
        .string("");
    return out;
}

void save_attestation(const bytes& blob, const std::string& path, bool quiet)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = fd >= 0;
    int saved = errno;
    for (std::size_t done = 0; ok && done < blob.size();) {
        const ssize_t n = ::write(fd, blob.data() + done, blob.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            saved = errno;
            ok = false;
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    if (fd >= 0 && ::close(fd) != 0 && ok) {
        saved = errno;
        ok = false;
    }
    if (!ok)
        fatal("Unable to write attestation data \"" + path + "\": " + std::strerror(saved));
    if (!quiet)
        std::printf("Your FIDO attestation certificate has been saved in %s\n", path.c_str());
}

std::string resident_suffix(const std::string& application, byte_span user_id)
{
    std::string ret = application;
    if (ret.rfind("ssh://", 0) == 0)
        ret.erase(0, 6);
    else if (ret.rfind("ssh:", 0) == 0)
        ret.erase(0, 4);
    std::size_t len = user_id.size();
    while (len > 0 && user_id[len - 1] == 0)
        --len;
    if (len == 0)
        return ret; // the default all-zero user id
    const byte_span user = user_id.first(len);
    // Printed as text up to a NUL, as "%.*s" prints it; text that could
    // name another directory, or that OpenSSH would escape, goes in hex.
    std::string text;
    for (std::uint8_t c : user) {
        if (c == 0)
            break;
        text.push_back(static_cast<char>(c));
    }
    bool hex = text.find('/') != std::string::npos || text.find("..") != std::string::npos ||
               text.find('\\') != std::string::npos;
    for (unsigned char c : text)
        hex = hex || c < 0x20 || c == 0x7f;
    if (hex) {
        static constexpr char digits[] = "0123456789abcdef";
        text.clear();
        for (std::uint8_t c : user) {
            text.push_back(digits[c >> 4]);
            text.push_back(digits[c & 0x0f]);
        }
    }
    return ret.empty() ? text : ret + "_" + text;
}

int keygen_download_resident(const keygen_options& o)
{
    std::optional<std::string> device;
    for (const auto& opt : o.generate_options) {
        if (starts_with_nocase(opt, "device="))
            device = opt.substr(7);
        else
            fatal("Option \"" + opt + "\" is unsupported for FIDO authenticator download");
    }
    const std::string path = provider_path(o);
    std::string pin = read_sk_pin("Enter PIN for authenticator: ");
    const pin_wiper wipe{pin};
    if (!o.quiet)
        std::printf("You may need to touch your authenticator to authorize key download.\n");
    const auto unable = [](const std::string& why) {
        std::fprintf(stderr, "Unable to load resident keys: %s\r\n", why.c_str());
        return 255;
    };
    std::string why;
    auto provider = load_sk_provider(path, "-w", why);
    if (!provider)
        return unable(why);
    auto listed = provider->load_resident_keys(pin.c_str(), device);
    if (auto* f = std::get_if<sk_failure>(&listed))
        return unable(report_sk_failure(path, *f));
    auto kept = resident_records(std::move(std::get<std::vector<sk_resident_result>>(listed)));
    if (!kept)
        return unable("invalid format");
    std::vector<std::pair<openssh_security_key, std::string>> keys; // record, suffix
    for (auto& rk : *kept) {
        std::string suffix = resident_suffix(rk.record.comment, rk.user_id);
        keys.emplace_back(std::move(rk.record), std::move(suffix));
    }
    if (keys.empty())
        std::fprintf(stderr, "No keys to download\r\n");
    std::optional<std::string> pass;
    int status = 0;
    for (const auto& [record, ext] : keys) {
        const std::string file = std::string(record.key.type() == key_type::sk_ecdsa_p256 ? "id_ecdsa_sk_rk"
                                                                                          : "id_ed25519_sk_rk") +
                                 (ext.empty() ? "" : "_" + ext);
        if (!confirm_overwrite(file)) {
            status = 255;
            break;
        }
        if (!pass)
            pass = private_key_passphrase(o);
        if (auto e = save_security_key(record, file, *pass, o)) {
            std::fprintf(stderr, "Saving key \"%s\" failed: %s\r\n", file.c_str(), e->c_str());
            status = 255;
            break;
        }
        if (!o.quiet)
            std::printf("Saved %s key%s%s to %s\n", std::string(key_type_short_name(record.key.type())).c_str(),
                        ext.empty() ? "" : " ", ext.empty() ? "" : record.comment.c_str(), file.c_str());
        if (auto e = save_public(record.key, file + ".pub", record.comment)) {
            std::fprintf(stderr, "Saving public key \"%s.pub\" failed: %s\r\n", file.c_str(), e->c_str());
            status = 255;
            break;
        }
    }
    if (pass)
        cleanse(pass->data(), pass->size());
    return status;
}

} // namespace longhaul::keygen
