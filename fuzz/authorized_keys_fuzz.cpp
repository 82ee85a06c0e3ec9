// Fuzzes authorized_keys evaluation: whole files checked for a fixed key
// (seed with lines holding it, options in front) and for a fixed user
// certificate (cert-authority lines), the same text read as an
// AuthorizedPrincipalsFile and a TrustedUserCAKeys file, the options parser
// and expiry-time on their own. Nothing may crash, and a match must come
// from a line that really holds the key (for the certificate: a
// cert-authority line).
#include "sshd/authorized_keys.hpp"
#include "sshd/certificate_auth.hpp"

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

// tests/data/certs/user_ed25519-cert.pub: principals alice and bob, both
// critical options, the default extensions, signed by ca_ed25519.
const longhaul::certificate& fixed_certificate()
{
    static const longhaul::certificate c = [] {
        auto blob = longhaul::base64_decode(
            "AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIDZQ4og0o/kdksATVBJjiwS0GYHsLDVI9F5SP9gt6KMlAAAAIP7UUIc5BbE3/YU7Ii5Yxp4sp/SPLoP3AH5M8QAHjBRbAAAAAAAAACoAAAABAAAADmFsaWNlQGxvbmdoYXVsAAAAEAAAAAVhbGljZQAAAANib2IAAAAAXgvhAAAAAACDqn6AAAAATAAAAA1mb3JjZS1jb21tYW5kAAAADQAAAAkvYmluL3RydWUAAAAOc291cmNlLWFkZHJlc3MAAAAUAAAAEDEyNy4wLjAuMS8zMiw6OjEAAACCAAAAFXBlcm1pdC1YMTEtZm9yd2FyZGluZwAAAAAAAAAXcGVybWl0LWFnZW50LWZvcndhcmRpbmcAAAAAAAAAFnBlcm1pdC1wb3J0LWZvcndhcmRpbmcAAAAAAAAACnBlcm1pdC1wdHkAAAAAAAAADnBlcm1pdC11c2VyLXJjAAAAAAAAAAAAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIDDj6l9lKLwNyWpYax5hxQs+hb59pe/4deIOvBivwR9QAAAAUwAAAAtzc2gtZWQyNTUxOQAAAECK0dwnuqfdF+tNVQLGyIrGNZy1sSPojfyg0FMEMBv/11ZOtgotBOA7aAAHL9gQSuL8TXn0XeX9HG9PF5kAhtcA");
        return *longhaul::certificate::from_blob(*blob);
    }();
    return c;
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

    const auto cr = check_authorized_keys(text, "fuzz", fixed_certificate(), ctx);
    if (cr.match && (!cr.match->options.cert_authority || cr.match->location.rfind("fuzz:", 0) != 0))
        std::abort();
    std::vector<log_message> log;
    if (auto p = check_authorized_principals(text, "fuzz", fixed_certificate(), log))
        if (p->location.rfind("fuzz:", 0) != 0)
            std::abort();
    (void)ca_key_listed(text, fixed_certificate().signature_key());

    const std::string_view first = text.substr(0, text.find('\n'));
    std::string reason;
    auto o = parse_authorized_key_options(first, reason);
    if (!o && reason.empty())
        std::abort();
    (void)parse_expiry_time(first);
    return 0;
}
