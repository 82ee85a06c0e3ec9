// fake_server: a misbehaving SSH server for the client's bad-input tests.
//
//   fake_server MODE PORTFILE
//     silent:   accept and never say anything (banner-exchange timeout)
//     close:    send a version line, read the client's KEXINIT, then close
//     garbage:  send a version line and then random bytes
//     badversion: send "SSH-1.5-old" and wait
// Binds 127.0.0.1 on an ephemeral port, writes the port to PORTFILE, serves
// connections until killed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: fake_server silent|close|garbage|badversion PORTFILE\n");
        return 2;
    }
    const std::string mode = argv[1];
    int ls = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(ls, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(ls, 16) != 0 ||
        ::getsockname(ls, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
        std::perror("fake_server: bind");
        return 1;
    }
    std::ofstream(argv[2]) << ntohs(sa.sin_port) << "\n";
    std::vector<std::thread> held;
    for (;;) {
        int c = ::accept(ls, nullptr, nullptr);
        if (c < 0)
            continue;
        held.emplace_back([c, mode] {
            char buf[65536];
            if (mode == "silent") {
                while (::read(c, buf, sizeof buf) > 0) {
                }
            } else if (mode == "close") {
                const char* v = "SSH-2.0-Fake_1.0\r\n";
                (void)!::write(c, v, std::strlen(v));
                (void)!::read(c, buf, sizeof buf);
            } else if (mode == "garbage") {
                const char* v = "SSH-2.0-Fake_1.0\r\n";
                (void)!::write(c, v, std::strlen(v));
                std::mt19937 gen(7);
                for (auto& b : buf)
                    b = static_cast<char>(gen());
                (void)!::write(c, buf, 4096);
                while (::read(c, buf, sizeof buf) > 0) {
                }
            } else {
                const char* v = "SSH-1.5-Old\r\n";
                (void)!::write(c, v, std::strlen(v));
                while (::read(c, buf, sizeof buf) > 0) {
                }
            }
            ::close(c);
        });
        held.back().detach();
    }
}
