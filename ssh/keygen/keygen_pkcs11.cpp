#include "ssh/keygen/keygen_pkcs11.hpp"

#include "common/keys/key_lines.hpp"
#include "common/log.hpp"
#include "ssh/keygen/keygen_files.hpp"
#include "ssh/pkcs11/pkcs11_provider.hpp"
#include "ssh/prompt/prompt.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace longhaul::keygen {

namespace {

// The module as ssh-keygen loads it (pkcs11_init(1): a PIN may be asked),
// with `pin` (-P) given up front when there is one; exits when it lists no
// key. The logger outlives the module, which logs through it.
struct loaded_module {
    explicit loaded_module(log_level level) : log("ssh-keygen", level) {}
    logger log;
    std::unique_ptr<pkcs11_provider> provider;
};

std::shared_ptr<loaded_module> load_module(const keygen_options& o, const std::string& path,
                                           const std::optional<std::string>& pin)
{
    // OpenSSH's ssh-keygen logs at INFO, DEBUG with -v (its -v also shows
    // randomart, as here).
    auto m = std::make_shared<loaded_module>(o.verbose ? log_level::debug1 : log_level::info);
    pkcs11_provider::options opt;
    opt.interactive = true;
    opt.read_pin = [](const std::string& prompt) { return read_passphrase(prompt, prompt_echo::off); };
    const secret_bytes given(pin ? secret_bytes(as_bytes(*pin)) : secret_bytes{});
    m->provider = pkcs11_provider::load(path, std::move(opt), m->log, pin ? &given : nullptr);
    if (!m->provider || m->provider->keys().empty())
        throw keygen_exit(255, "cannot read public key from pkcs11");
    return m;
}

} // namespace

ca_signer pkcs11_ca(const keygen_options& o, const std::string& provider, const std::string& ca_path)
{
    auto ca = load_public_key(ca_path);
    if (!ca) {
        struct stat st {};
        const bool exists = ::stat(ca_path.c_str(), &st) == 0 || ::stat((ca_path + ".pub").c_str(), &st) == 0;
        fatal("Couldn't load CA public key \"" + ca_path + "\": " +
              (exists ? std::string("invalid format") : std::string(std::strerror(ENOENT))));
    }
    auto m = load_module(o, provider, o.old_passphrase);
    for (const auto& k : m->provider->keys()) {
        if (k.key.blob() != ca->first.blob())
            continue;
        const pkcs11_key* key = &k; // the module's list does not change once loaded
        return {k.key, [m, key](std::string_view alg, byte_span data) -> result<bytes> {
                    if (auto sig = m->provider->sign(*key, alg, data))
                        return std::move(*sig);
                    return errc::crypto_error; // after the module's lines said why
                }};
    }
    fatal("No PKCS#11 key matching " + ca_path + " found");
}

int keygen_download_pkcs11(const keygen_options& o, const std::string& provider, bool fingerprints)
{
    const auto m = load_module(o, provider, std::nullopt);
    const auto& p = m->provider;
    for (const auto& k : p->keys()) {
        if (fingerprints) {
            std::printf("%d %s %s (PKCS11 key)\n", k.key.bits(), fingerprint_text(k.key, o).c_str(),
                        std::string(key_type_short_name(k.key.type())).c_str());
            if (o.verbose)
                std::printf("%s\n", key_randomart(k.key, o.hash).c_str());
        } else {
            // (No blank before an empty label, unlike a .pub file's line.)
            std::printf("%s%s%s\n", format_public_key(k.key).c_str(), k.label.empty() ? "" : " ", k.label.c_str());
        }
    }
    return 0;
}

} // namespace longhaul::keygen
