// Fuzzes authorized_keys evaluation: whole files checked for a fixed key
// (seed with lines holding it, options in front), the options parser and
// expiry-time on their own. Nothing may crash, and a match must come from a
// line that really holds the key.
#include "sshd/authorized_keys.hpp"

#include "common/keys/base64.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

// ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPYXIu29X3djeHwEHdk15bEfGrGGi4DEHWJWK7lkXfKh
const longhaul::public_key& fixed_key()
{
    static const longhaul::public_key k = [] {
        auto blob = longhaul::base64_decode("AAAAC3NzaC1lZDI1NTE5AAAAIPYXIu29X3djeHwEHdk15bEfGrGGi4DEHWJWK7lkXfKh");
        return *longhaul::public_key::from_blob(*blob);
    }();
    return k;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace longhaul;
    if (size > 256 * 1024)
        return 0;
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    authorized_keys_context ctx;
    ctx.user = "alice";
    ctx.remote_address = "192.0.2.10";
    ctx.remote_host = "client.example.org";
    ctx.now = 1700000000;
    ctx.permit_user_environment = true;
    ctx.permit_user_environment_patterns = "LANG,LC_*";
    const auto r = check_authorized_keys(text, "fuzz", fixed_key(), ctx);
    if (r.match) {
        if (r.match->location.rfind("fuzz:", 0) != 0)
            std::abort();
        if (r.match->environment.size() > r.match->options.environment.size())
            std::abort();
        if (r.match->options.cert_authority)
            std::abort();
    }

    const std::string_view first = text.substr(0, text.find('\n'));
    std::string reason;
    auto o = parse_authorized_key_options(first, reason);
    if (!o && reason.empty())
        std::abort();
    (void)parse_expiry_time(first);
    return 0;
}
