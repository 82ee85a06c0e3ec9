// ssh-add -K: the resident keys of a FIDO authenticator into the agent, as
// OpenSSH 9.2's load_resident_keys: the PIN asked first (standard input
// allowed), the credentials listed through the SecurityKeyProvider, and
// each one OpenSSH keeps added with an empty comment and the provider
// constraint (so that the agent signs with it), plus -t, -c and -h.
#include "ssh/add/add_commands.hpp"

#include "common/keys/fingerprint.hpp"
#include "common/keys/key_lines.hpp"
#include "ssh/add/add_format.hpp"
#include "ssh/sk/sk_tool.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace longhaul::add {

bool add_session::load_resident()
{
    const std::string provider_path = security_key_provider(options_, std::getenv("SSH_SK_PROVIDER"));
    const secret_bytes pin = ask("Enter PIN for authenticator: ").value_or(secret_bytes{});
    const auto unable = [](const std::string& why) {
        std::fprintf(stderr, "Unable to load resident keys: %s\r\n", why.c_str());
        return false;
    };
    std::string why;
    auto provider = load_sk_provider(provider_path, "-S", why);
    if (!provider)
        return unable(why);
    // The middleware takes a C string: a copy for the call, wiped after it.
    std::string pin_text(reinterpret_cast<const char*>(pin.data()), pin.size());
    auto listed = provider->load_resident_keys(pin_text.c_str(), std::nullopt);
    cleanse(pin_text.data(), pin_text.size());
    if (auto* f = std::get_if<sk_failure>(&listed))
        return unable(report_sk_failure(provider_path, *f));
    auto kept = resident_records(std::move(std::get<std::vector<sk_resident_result>>(listed)));
    if (!kept)
        return unable("invalid format");
    const agent::key_constraints constraints = key_constraints(true);
    bool added = false;
    bool failed = false;
    for (const auto& rk : *kept) {
        const std::string type(key_type_short_name(rk.record.key.type()));
        const std::string fp = key_fingerprint(rk.record.key, options_.hash);
        if (!agent_.add_security_key(rk.record, nullptr, "", constraints)) {
            std::fprintf(stderr, "Unable to add key %s %s\r\n", type.c_str(), fp.c_str());
            failed = true;
            continue;
        }
        added = true;
        if (!options_.quiet) {
            std::fprintf(stderr, "Resident identity added: %s %s\n", type.c_str(), fp.c_str());
            print_constraints();
        }
    }
    // OpenSSH: none listed, or any one refused, is a failure.
    return added && !failed;
}

} // namespace longhaul::add
