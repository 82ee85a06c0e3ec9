#include "ssh/keygen/keygen_pkcs11.hpp"

#include "common/keys/key_lines.hpp"
#include "common/log.hpp"
#include "ssh/keygen/keygen_files.hpp"
#include "ssh/pkcs11/pkcs11_provider.hpp"
#include "ssh/prompt/prompt.hpp"

#include <cstdio>

namespace longhaul::keygen {

int keygen_download_pkcs11(const keygen_options& o, const std::string& provider, bool fingerprints)
{
    // OpenSSH's ssh-keygen logs at INFO, DEBUG with -v (its -v also shows
    // randomart, as here).
    logger log("ssh-keygen", o.verbose ? log_level::debug1 : log_level::info);
    pkcs11_provider::options opt;
    opt.interactive = true;
    opt.read_pin = [](const std::string& prompt) { return read_passphrase(prompt, prompt_echo::off); };
    auto p = pkcs11_provider::load(provider, std::move(opt), log);
    if (!p || p->keys().empty())
        throw keygen_exit(255, "cannot read public key from pkcs11");
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
