// Fuzzes known_hosts reading and host key checks: the input is a
// known_hosts file, looked up for several names (plain, with a port,
// wildcard-prone and hashed-prone) and checked against fixed keys of each
// type, as ssh does on every connection; the first line's host field is
// also matched directly, and host key algorithms ordered by what was found;
// and ssh-keygen's -F (with -l), -R and -H editing of the same text, whose
// new file must itself be a file that edits again without invalid lines.
// Seeds: known_hosts files written by the ssh client tests.
#include "ssh/known_hosts.hpp"
#include "ssh/keygen/keygen_known_hosts.hpp"

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

// Deterministic "randomness" for hashing host names: runs must repeat.
class counting_fuzz_random final : public random_source {
public:
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = static_cast<std::uint8_t>(next_++);
    }

private:
    std::uint8_t next_ = 0;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const std::vector<public_key> keys = fixed_keys();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (std::string_view name : {"host.example", "[host.example]:2222", "10.0.0.1", "a", "*"}) {
        known_host_keys known;
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

    counting_fuzz_random rng;
    known_hosts_request rq;
    rq.host = "host.example";
    rq.path = "fuzz";
    for (auto action : {known_hosts_action::find, known_hosts_action::remove, known_hosts_action::hash}) {
        rq.action = action;
        rq.print_fingerprint = action == known_hosts_action::find;
        const auto r = edit_known_hosts(text, rq, rng);
        // What -R and -H write keeps every valid line valid.
        if (action != known_hosts_action::find && !r.invalid) {
            rq.print_fingerprint = false;
            if (edit_known_hosts(r.file, rq, rng).invalid)
                abort();
        }
    }
    return 0;
}
