// ssh-keyscan: gathers SSH host keys (OpenSSH 9.2's command line and
// output). The command line and the output are in keyscan_options and
// keyscan_format, the connections in keyscan_scanner.
#include "ssh/keyscan/keyscan_options.hpp"
#include "ssh/keyscan/keyscan_scanner.hpp"

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    auto parsed = longhaul::parse_keyscan_args(args);
    if (!parsed.options) {
        std::fputs(parsed.error.message.c_str(), stderr);
        return parsed.error.status;
    }
    return longhaul::run_keyscan(*parsed.options) ? 0 : 1;
}
