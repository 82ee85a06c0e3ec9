// Fuzzes the sshd_config parser: any text either loads or fails with a
// config_error (never a crash, hang or other exception), and what loads can
// be printed (-T) and evaluated for a connection. Include and name
// resolution are off so that the input alone decides. Seed with sshd_config
// files (Debian's /etc/ssh/sshd_config, tests/sshd configurations). A
// ChrootDirectory that applies to the connection is expanded as the session
// would (tokens, ~) and its path checked against a made-up tree.
#include "sshd/chroot_directory.hpp"
#include "sshd/sshd_config.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace {

// The jail as the session would enter it: expanded for a user, then checked
// against a tree in which every path is a root-owned directory except those
// whose names say otherwise ("w": world-writable, "u": owned by a user,
// "f": a file, "m": missing).
void check_chroot_directory(const std::string& value)
{
    using namespace longhaul;
    if (!chroot_requested(value))
        return;
    user_account user;
    user.name = "alice";
    user.uid = 1000;
    user.home = "/home/alice";
    const home_lookup home_of = [](std::string_view name) -> std::optional<std::string> {
        if (name == "bob")
            return std::string("/home/bob");
        return std::nullopt;
    };
    std::string error;
    const auto path = expand_chroot_directory(value, user, home_of, error);
    if (!path) {
        if (error.empty())
            std::abort(); // a refusal always says why
        return;
    }
    // Each token adds at most the longest replacement (a home directory).
    if (path->size() > value.size() * 16 + 64)
        std::abort();
    const stat_function fake_stat = [](const std::string& p, struct stat& st) -> int {
        const std::string_view last = std::string_view(p).substr(p.find_last_of('/') + 1);
        if (last == "m")
            return ENOENT;
        st = {};
        st.st_mode = last == "f" ? (S_IFREG | 0644) : (S_IFDIR | (last == "w" ? 0777 : 0755));
        st.st_uid = last == "u" ? 1000 : 0;
        return 0;
    };
    const auto problem = chroot_path_problem(*path, fake_stat);
    if (problem && problem->empty())
        std::abort();
    // A relative path is never safe.
    if (!problem && (path->empty() || (*path)[0] != '/'))
        std::abort();
}

} // namespace

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
        check_chroot_directory(per.chroot_directory);
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
