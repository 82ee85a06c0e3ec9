// Fuzzes allowed_signers files (ssh-keygen -Y verify / find-principals /
// match-principals): every line through the principals, options and key
// parsers, matched against a plain key and against a certificate (by
// cert-authority lines), with and without a principal, and the
// match-principals listing. Nothing may crash, hang or read out of bounds;
// a line reported as allowing the signer must name it.
//
// The first input byte picks the principal asked for (none, "alice",
// "bob", "*"), the rest is the file.
// Seeds: allowed_signers files written by make_corpora.sh with the
// fixtures' keys and CA (tests/data/certs).
#include "common/keys/allowed_signers.hpp"
#include "common/keys/key_lines.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace longhaul;

namespace {

// tests/data/certs/user_ed25519-cert.pub (principals alice and bob, valid
// 2020-2040, signed by tests/data/certs/ca_ed25519).
constexpr std::string_view fixture_certificate =
    "ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIDZQ4og0o/kdksATVBJjiwS0GYHsLDVI9F5SP9gt6KMlAAAAIP7UUIc5BbE3/YU7Ii5Yxp4sp/SPLoP3AH5M8QAHjBRbAAAAAAAAACoAAAABAAAADmFsaWNlQGxvbmdoYXVsAAAAEAAAAAVhbGljZQAAAANib2IAAAAAXgvhAAAAAACDqn6AAAAATAAAAA1mb3JjZS1jb21tYW5kAAAADQAAAAkvYmluL3RydWUAAAAOc291cmNlLWFkZHJlc3MAAAAUAAAAEDEyNy4wLjAuMS8zMiw6OjEAAACCAAAAFXBlcm1pdC1YMTEtZm9yd2FyZGluZwAAAAAAAAAXcGVybWl0LWFnZW50LWZvcndhcmRpbmcAAAAAAAAAFnBlcm1pdC1wb3J0LWZvcndhcmRpbmcAAAAAAAAACnBlcm1pdC1wdHkAAAAAAAAADnBlcm1pdC11c2VyLXJjAAAAAAAAAAAAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIDDj6l9lKLwNyWpYax5hxQs+hb59pe/4deIOvBivwR9QAAAAUwAAAAtzc2gtZWQyNTUxOQAAAECK0dwnuqfdF+tNVQLGyIrGNZy1sSPojfyg0FMEMBv/11ZOtgotBOA7aAAHL9gQSuL8TXn0XeX9HG9PF5kAhtcA";

const certificate& the_certificate()
{
    static const certificate c = *parse_certificate_line(fixture_certificate);
    return c;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0)
        return 0;
    static const char* const principals[] = {nullptr, "alice", "bob", "*"};
    const char* principal = principals[data[0] % 4];
    const std::string_view file(reinterpret_cast<const char*>(data + 1), size - 1);
    const certificate& cert = the_certificate();
    for (const signature_signer& signer : {signature_signer{cert.key(), std::nullopt}, signature_signer{cert.key(), cert}}) {
        allowed_signers_query q;
        q.path = "fuzz";
        q.signer = signer;
        if (principal)
            q.principal = principal;
        q.ns = "git";
        q.verify_time = 1893456000; // 2030
        const auto r = check_allowed_signers(file, q);
        if (r.found && !principal && r.principals.empty())
            std::abort();
    }
    if (principal)
        (void)match_allowed_principals(file, "fuzz", principal);
    return 0;
}
