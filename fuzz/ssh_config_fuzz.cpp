// Fuzzes the ssh client's configuration: ssh_config text through the whole
// load (both passes, defaults, token expansion, -G output) and the command
// line with its destination and forwarding parsers.
//
// The first input byte picks a mode, the rest is the input:
//   0  the text as the -F file for host "web1.example.com", loaded as ssh
//      loads it, then printed as -G prints it
//   1  NUL-separated command-line arguments (without argv[0]), parsed, then
//      loaded with no configuration file (-F none added)
//   2  the text as one -o option line, and as a forwarding spec, a ~C
//      command line, URI, [user@]host[:port] and ProxyJump value
// Match exec never runs commands and Include is not followed here (the
// environment says so), so the target touches no files but its own memfd.
// Seeds: the ssh_config files of tests/data/ssh/dump prefixed with 0x00.
#include "ssh/destination.hpp"
#include "ssh/escape_command.hpp"
#include "ssh/forward_spec.hpp"
#include "ssh/options.hpp"
#include "ssh/ssh_config.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace longhaul;

namespace {

config_environment fuzz_environment()
{
    config_environment env = config_environment::for_home("/home/fuzz", "fuzz", "/nonexistent/ssh_config");
    env.allow_exec = false;
    env.allow_include = false;
    env.check_permissions = false;
    env.getenv = [](const std::string& name) -> std::optional<std::string> {
        if (name == "HOME")
            return std::string("/home/fuzz");
        return std::nullopt;
    };
    env.homes = [](const std::string& user) -> std::optional<std::string> {
        if (user == "fuzz")
            return std::string("/home/fuzz");
        return std::nullopt;
    };
    return env;
}

// The configuration text lives in a memfd so it is read through the same
// path as a real -F file.
const std::string& config_path()
{
    static const std::string path = [] {
        const int fd = memfd_create("ssh_config_fuzz", 0);
        if (fd == -1)
            abort();
        return "/proc/self/fd/" + std::to_string(fd);
    }();
    return path;
}

void load_and_dump(client_config cfg, const config_request& request, const config_environment& env)
{
    try {
        load_client_config(cfg, request, env, {});
        const auto text = dump_config(cfg);
        if (text.empty())
            abort();
    } catch (const ssh_config_error&) {
    } catch (const expansion_error&) {
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    static const config_environment env = fuzz_environment();
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0]) {
    case 0: {
        const int fd = std::stoi(config_path().substr(std::string("/proc/self/fd/").size()));
        if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
            abort();
        load_and_dump(client_config{}, {"web1.example.com", config_path(), false}, env);
        break;
    }
    case 1: {
        std::vector<std::string> args = {"-F", "none"};
        std::size_t start = 0;
        while (start <= text.size() && args.size() < 64) {
            const auto nul = text.find('\0', start);
            args.emplace_back(text.substr(start, nul == std::string_view::npos ? std::string_view::npos : nul - start));
            if (nul == std::string_view::npos)
                break;
            start = nul + 1;
        }
        try {
            auto opts = parse_command_line(args, env);
            if (opts.action == command_line_action::connect)
                load_and_dump(opts.config, opts.request(), env);
        } catch (const usage_error&) {
        } catch (const command_line_error&) {
        }
        break;
    }
    default: {
        client_config cfg;
        try {
            (void)apply_option_line(cfg, text, env, {});
        } catch (const ssh_config_error&) {
        }
        forward_spec fwd;
        (void)parse_forward(text, false, false, fwd, env.getenv);
        (void)parse_forward(text, true, true, fwd, env.getenv);
        (void)parse_escape_command(text, true, env.getenv);
        user_host_port uhp;
        (void)parse_ssh_uri(text, uhp);
        (void)parse_user_host_port(text, uhp);
        client_config jump;
        (void)parse_proxy_jump(text, jump, true);
        int remote = 0;
        (void)parse_tunnel_device(text, remote);
        (void)valid_hostname(text);
        (void)valid_remote_user(text);
        break;
    }
    }
    return 0;
}
