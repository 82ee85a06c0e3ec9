// Fuzzes known_hosts reading and host key checks: the input is a
// known_hosts file, looked up for several names (plain, with a port,
// wildcard-prone and hashed-prone) and checked against fixed keys of each
// type, as ssh does on every connection; the first line's host field is
// also matched directly, and host key algorithms ordered by what was found.
// Seeds: known_hosts files written by the ssh client tests.
#include "ssh/known_hosts.hpp"

#include "common/keys/key_lines.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using namespace longhaul;

namespace {

// The public halves of tests/data/keys fixtures, so seeds written by the
// tests reach the "ok", "changed" and "revoked" paths.
constexpr const char* key_lines[] = {
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKtM+d6xiGj/YKizLpmvHK1LTz+cQJIxfhbkwP1nWoko",
    "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBBjzbkhLYnc73hOBmeahW2AOLZjWwaKp5NPYKPVAasfKtTUW0p9gPhZQIO+YQcB57BMzdgMvhhWkvQfkNe1OhkM=",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDeCuHq+wIAfqgymFREOmPqeckz5Nck73Upw28cXKzf1vydWLnhBvcnZ2dIH2sxdqT4945uzO8MX8JxZNG8yKMDO6rhpF4jmdH8YMnsy3DDA6ou5KfYS87UM4lcApffoFlu+LAWmC4l/l/4wG05Z2xXvoX6RDRN678hXMc3SZnC6QbhatUudXuooGhWhBc+mM7oMbHsTkPdqW34wY7vGvBxYpMGG9WwpBam3APl5ZwvGMfQHy1WZCKAlVfgOAOHvBN7IRjBpo22OQd8308I+64Jyjei4L1LAqbCOn8cravY5og42gPur9PkOhD+hSDYVRHpoM9NbMd85Ol+FdAE/Snx",
};

std::vector<public_key> fixed_keys()
{
    std::vector<public_key> keys;
    for (const char* line : key_lines) {
        auto k = parse_public_key_line(line);
        if (!k)
            abort();
        keys.push_back(k->key);
    }
    return keys;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const std::vector<public_key> keys = fixed_keys();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (std::string_view name : {"host.example", "[host.example]:2222", "10.0.0.1", "a", "*"}) {
        host_keys known;
        known.load_text(name, text, "fuzz");
        for (const auto& key : keys) {
            const known_host_entry* found = nullptr;
            const auto status = known.check(key, &found);
            if ((status == host_key_status::ok || status == host_key_status::changed) && found == nullptr)
                abort();
        }
        (void)known.find_type(key_type::ed25519);
        (void)known.has_cert_authority();
        (void)order_host_key_algorithms("ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256", known);
    }
    const auto first = text.substr(0, text.find_first_of(" \t\n"));
    (void)known_hosts_field_matches(first, "host.example");
    return 0;
}
