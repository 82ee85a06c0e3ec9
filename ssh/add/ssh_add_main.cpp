// ssh-add: adds keys to ssh-agent, lists, removes, locks and tests them
// (OpenSSH 9.2's command line and messages). The command line is in
// add_options, what is printed in add_format, the actions in add_commands.
#include "ssh/add/add_commands.hpp"
#include "ssh/add/add_fatal.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    using namespace longhaul;
    std::signal(SIGPIPE, SIG_IGN);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);

    // As OpenSSH: the agent first, before the command line is even read.
    const char* socket_path = std::getenv("SSH_AUTH_SOCK");
    if (socket_path == nullptr || *socket_path == '\0') {
        std::fputs("Could not open a connection to your authentication agent.\n", stderr);
        return 2;
    }
    auto agent = agent_client::connect(socket_path);
    if (!agent) {
        const int saved_errno = errno;
        const std::string why = agent.error() == errc::io_error && saved_errno != 0
                                    ? std::strerror(saved_errno)
                                    : add::agent_error_text(agent.error());
        std::fprintf(stderr, "Error connecting to agent: %s\n", why.c_str());
        return 2;
    }
    // A key added with -c, or -T's signature, may wait for the user to
    // confirm at the agent's side: OpenSSH waits without a limit.
    agent->set_timeout(std::chrono::hours(24));

    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    auto parsed = add::parse_add_args(args);
    if (!parsed.options) {
        std::fputs(parsed.error.message.c_str(), stderr);
        return parsed.error.status;
    }
    if (auto why = add::unsupported_option(*parsed.options)) {
        std::fprintf(stderr, "%s\n", why->c_str());
        return 1;
    }
    try {
        add::add_session session(*agent, *parsed.options);
        return session.run();
    } catch (const add::add_fatal& f) {
        std::fprintf(stderr, "%s\r\n", f.what());
        return f.status();
    }
}
