// Fuzzes the sshd_config parser: any text either loads or fails with a
// config_error (never a crash, hang or other exception), and what loads can
// be printed (-T) and evaluated for a connection. Include and name
// resolution are off so that the input alone decides. Seed with sshd_config
// files (Debian's /etc/ssh/sshd_config, tests/sshd configurations).
#include "sshd/sshd_config.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace longhaul;
    if (size > 64 * 1024)
        return 0;
    const std::string text(reinterpret_cast<const char*>(data), size);
    config_load_options o;
    o.allow_include = false;
    o.resolve_addresses = false;
    try {
        const sshd_config c = sshd_config::parse(text, "fuzz.cfg", o);
        const std::string global = dump(c.global());
        if (global.empty())
            std::abort();
        (void)unsupported_settings(c.global());
        connection_info ci;
        ci.user = "alice";
        ci.groups = {"alice", "wheel"};
        ci.host = "client.example.org";
        ci.address = "192.0.2.10";
        ci.local_address = "198.51.100.1";
        ci.local_port = 22;
        ci.rdomain = "0";
        const server_config per = c.for_connection(ci);
        (void)dump(per);
        // The global configuration is never changed by a connection's.
        if (dump(c.global()) != global)
            std::abort();
    } catch (const config_error& e) {
        if (std::string(e.what()).empty())
            std::abort();
    }
    // The -C parser on the first line.
    std::string err;
    (void)parse_connection_spec(text.substr(0, text.find('\n')), err);
    return 0;
}
