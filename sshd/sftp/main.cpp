// sftp-server(8): SFTP on stdin/stdout for the user running it (sshd's
// "Subsystem sftp /path/to/sftp-server").
#include "sshd/sftp/sftp_server_main.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv)
{
    using namespace longhaul::sftp;
    server_invocation inv;
    inv.argv.assign(argv, argv + argc);
    const struct passwd* pw = ::getpwuid(::getuid());
    if (pw == nullptr) {
        std::fprintf(stderr, "No user found for uid %lu\n", static_cast<unsigned long>(::getuid()));
        return 1;
    }
    inv.user = {pw->pw_name, pw->pw_uid, pw->pw_dir};
    if (const char* c = std::getenv("SSH_CONNECTION"))
        inv.ssh_connection = c;
    return sftp_server_main(inv);
}
