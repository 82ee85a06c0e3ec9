// scp: OpenSSH's scp over Longhaul's SFTP client engine (pipelined
// transfers that follow the bandwidth-delay product), with the legacy
// protocol for -O and the remote -t/-f side.
#include "ssh/scp/scp_args.hpp"
#include "ssh/scp/scp_program.hpp"

#include <csignal>
#include <iostream>

int main(int argc, char** argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    using namespace longhaul::scp;
    try {
        scp_options o = parse_command_line(argc, argv);
        scp_program p(std::move(o));
        return p.run();
    } catch (const usage_error& e) {
        if (*e.what())
            std::cerr << e.what() << "\n";
        std::cerr << usage_text();
        return 1;
    } catch (const option_error& e) {
        std::cerr << argv[0] << ": " << e.what() << "\r\n";
        return 255;
    }
}
