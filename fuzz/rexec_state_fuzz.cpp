// Fuzzes the state sshd's listener hands to each connection process it
// executes (sshd/rexec_state): configuration and Include files, host key
// files, the moduli file. The listener is trusted, but the decoder is a
// parser like any other: it must bound every count and length, and what it
// accepts must re-encode to the very same bytes.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "fuzz/fuzz_seeds.hpp"
#include "sshd/rexec_state.hpp"

#include <cstdlib>
#include <string>

using namespace longhaul;
using longhaul::fuzz::write_seed;

namespace {

void write_seeds(const std::string& dir)
{
    rexec_state s;
    write_seed(dir, "empty", encode_rexec_state(s)->span());
    s.config.files = {{"/etc/ssh/sshd_config", "Port 22\nInclude /etc/ssh/sshd_config.d/*.conf\n"},
                      {"/etc/ssh/sshd_config.d/x.conf", "PasswordAuthentication no\n"}};
    s.config.globs = {{"/etc/ssh/sshd_config.d/*.conf", {"/etc/ssh/sshd_config.d/x.conf"}}, {"/nothing/*", {}}};
    const std::string key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n";
    s.host_keys.emplace_back(as_bytes(key));
    s.host_keys.emplace_back(as_bytes(key));
    write_seed(dir, "config-keys", encode_rexec_state(s)->span());
    s.moduli = "20230101000000 2 6 100 2047 2 C7\n";
    write_seed(dir, "config-keys-moduli", encode_rexec_state(s)->span());
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    longhaul::fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const byte_span in(data, size);
    auto state = decode_rexec_state(in);
    if (!state)
        return 0;
    auto again = encode_rexec_state(*state);
    if (!again || again->size() != in.size() || !std::equal(in.begin(), in.end(), again->data()))
        std::abort();
    return 0;
}
