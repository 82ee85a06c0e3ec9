// kex_injector: a malicious SSH peer for the strict key exchange (Terrapin)
// tests. It runs Longhaul's transport core for a real key exchange and
// rewrites its own unencrypted output before NEWKEYS, as a man in the middle
// would: extra packets are inserted at a chosen point, and (mode terrapin)
// the first encrypted packet after NEWKEYS is deleted, which resynchronises
// the sequence numbers exactly as the Terrapin attack (CVE-2023-48795) does.
//
//   kex_injector server MODE PORTFILE HOSTKEY [--no-strict]
//       listens on 127.0.0.1 (ephemeral port, written to PORTFILE) and serves
//       one connection at a time until killed
//   kex_injector client MODE PORT [--no-strict]
//       connects to 127.0.0.1:PORT once
// MODE:
//   none                   no injection (control: the exchange completes)
//   ignore-before-kexinit  an IGNORE ahead of our KEXINIT, so that KEXINIT
//                          arrives with sequence number 1
//   ignore-after-kexinit   an IGNORE right after our KEXINIT
//   ignore-before-newkeys  an IGNORE right before our NEWKEYS
//   debug-before-newkeys   a DEBUG right before our NEWKEYS
//   terrapin               an IGNORE after KEXINIT and the first packet
//                          after our NEWKEYS (the server's EXT_INFO) deleted
// With --no-strict the core does not offer kex-strict-*-v00@openssh.com.
// Each connection ends with one line on stdout:
//   result: disconnected by peer: REASON: TEXT   (the peer sent DISCONNECT)
//   result: kex completed                        (the peer accepted the
//           exchange; a client then gets SERVICE_ACCEPT first, a server
//           disconnects the client with "kex_injector: done")
//   result: closed: TEXT                         (anything else)
// and notes on stderr (what was injected, the negotiated algorithms).
#include "common/keys/key_file.hpp"
#include "common/random.hpp"
#include "common/transport/transport.hpp"
#include "common/wire.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

using namespace longhaul;

namespace {

enum class mode { none, ignore_before_kexinit, ignore_after_kexinit, ignore_before_newkeys, debug_before_newkeys, terrapin };

bool parse_mode(std::string_view s, mode& m)
{
    static const std::pair<std::string_view, mode> names[] = {
        {"none", mode::none},
        {"ignore-before-kexinit", mode::ignore_before_kexinit},
        {"ignore-after-kexinit", mode::ignore_after_kexinit},
        {"ignore-before-newkeys", mode::ignore_before_newkeys},
        {"debug-before-newkeys", mode::debug_before_newkeys},
        {"terrapin", mode::terrapin},
    };
    for (const auto& [name, value] : names)
        if (name == s) {
            m = value;
            return true;
        }
    return false;
}

bytes plain_packet(byte_span payload)
{
    system_random rng;
    packet_sender s(rng);
    s.send(payload);
    auto d = s.output().data();
    return bytes(d.begin(), d.end());
}

bytes injected_packet(mode m)
{
    bytes p;
    if (m == mode::debug_before_newkeys)
        wire_writer(p).u8(msg::debug).boolean(false).string("injected").string("");
    else
        wire_writer(p).u8(msg::ignore).string("injected");
    return plain_packet(p);
}

// Rewrites the core's output stream: the version line and the unencrypted
// packets pass one by one (with insertions), everything after our NEWKEYS
// passes unchanged except the packet that mode terrapin deletes.
class rewriter {
public:
    explicit rewriter(mode m) : mode_(m) {}

    bytes process(byte_span out)
    {
        pending_.insert(pending_.end(), out.begin(), out.end());
        bytes result;
        if (!version_done_) {
            auto eol = std::find(pending_.begin(), pending_.end(), '\n');
            if (eol == pending_.end())
                return result;
            result.insert(result.end(), pending_.begin(), eol + 1);
            pending_.erase(pending_.begin(), eol + 1);
            version_done_ = true;
        }
        while (!after_newkeys_ && pending_.size() >= 5) {
            const std::uint32_t len = load_u32(pending_.data());
            if (pending_.size() < 4 + std::size_t(len))
                return result;
            const std::uint8_t type = pending_[5];
            if (type == msg::kexinit && mode_ == mode::ignore_before_kexinit)
                inject(result, "before KEXINIT");
            if (type == msg::newkeys &&
                (mode_ == mode::ignore_before_newkeys || mode_ == mode::debug_before_newkeys))
                inject(result, "before NEWKEYS");
            result.insert(result.end(), pending_.begin(), pending_.begin() + 4 + len);
            pending_.erase(pending_.begin(), pending_.begin() + 4 + len);
            if (type == msg::kexinit && (mode_ == mode::ignore_after_kexinit || mode_ == mode::terrapin))
                inject(result, "after KEXINIT");
            if (type == msg::newkeys) {
                after_newkeys_ = true;
                if (mode_ == mode::terrapin && !pending_.empty()) {
                    // The rest of this output is the first encrypted packet
                    // (the server's EXT_INFO, sent with its NEWKEYS): drop it.
                    std::cerr << "kex_injector: deleted the " << pending_.size()
                              << " bytes sent right after NEWKEYS\n";
                    pending_.clear();
                }
            }
        }
        if (after_newkeys_) {
            result.insert(result.end(), pending_.begin(), pending_.end());
            pending_.clear();
        }
        return result;
    }

private:
    void inject(bytes& result, const char* where)
    {
        bytes p = injected_packet(mode_);
        result.insert(result.end(), p.begin(), p.end());
        std::cerr << "kex_injector: injected " << (mode_ == mode::debug_before_newkeys ? "DEBUG" : "IGNORE") << " "
                  << where << "\n";
    }

    mode mode_;
    bytes pending_;
    bool version_done_ = false;
    bool after_newkeys_ = false;
};

bool write_all(int fd, byte_span b)
{
    while (!b.empty()) {
        ssize_t n = ::write(fd, b.data(), b.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        b = b.subspan(static_cast<std::size_t>(n));
    }
    return true;
}

// One connection: returns when it is over, after printing the result line.
void serve(int fd, transport_config cfg, mode m)
{
    system_random rng;
    transport core(cfg, rng, std::chrono::steady_clock::now());
    rewriter rw(m);
    const bool client = cfg.role == transport_role::client;
    std::string result;
    bool kex_done = false;
    bool service_sent = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
        // Events first: they may produce output.
        for (;;) {
            transport_event ev = core.poll();
            if (ev.type == transport_event_type::none)
                break;
            if (ev.type == transport_event_type::host_key) {
                core.accept_host_key();
            } else if (ev.type == transport_event_type::kex_complete && !kex_done) {
                kex_done = true;
                const auto& a = core.algorithms();
                std::cerr << "kex_injector: kex complete: " << a.kex << " " << a.host_key << " " << a.cipher_c2s
                          << " strict=" << core.strict_kex() << "\n";
                if (client) {
                    bytes sr;
                    wire_writer(sr).u8(msg::service_request).string("ssh-userauth");
                    (void)core.send(sr);
                    service_sent = true;
                }
            } else if (ev.type == transport_event_type::payload) {
                if (client && service_sent && !ev.payload.empty() && ev.payload[0] == msg::service_accept) {
                    result = "kex completed";
                    core.disconnect(disconnect_reason::by_application, "kex_injector: done");
                } else if (!client && !ev.payload.empty() && ev.payload[0] == msg::service_request) {
                    result = "kex completed";
                    core.disconnect(disconnect_reason::by_application, "kex_injector: done");
                }
            } else if (ev.type == transport_event_type::disconnected) {
                if (result.empty()) {
                    if (!ev.local && ev.error == errc::peer_disconnected)
                        result = "disconnected by peer: " + std::to_string(static_cast<std::uint32_t>(ev.reason)) +
                                 ": " + std::string(ev.text);
                    else
                        result = "closed: " + std::string(ev.text);
                }
            }
        }
        auto out = core.output();
        if (!out.empty()) {
            bytes b = rw.process(out);
            core.consume_output(out.size());
            if (!write_all(fd, b) && result.empty())
                result = "closed: write failed";
        }
        if (core.closed())
            break;
        pollfd p{fd, POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result = "closed: timed out";
            break;
        }
        if (::poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR)
            break;
        if (p.revents != 0) {
            auto space = core.input_space();
            ssize_t n = ::read(fd, space.data(), space.size());
            if (n > 0)
                core.commit_input(static_cast<std::size_t>(n));
            else if (n == 0 || errno != EINTR)
                core.input_eof();
        }
    }
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
    std::cout << "result: " << (result.empty() ? "closed" : result) << std::endl;
}

int usage()
{
    std::cerr << "usage: kex_injector server MODE PORTFILE HOSTKEY [--no-strict]\n"
                 "       kex_injector client MODE PORT [--no-strict]\n";
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 4)
        return usage();
    const std::string role = argv[1];
    mode m;
    if (!parse_mode(argv[2], m))
        return usage();
    bool strict = true;
    for (int i = 3; i < argc; ++i)
        if (std::string_view(argv[i]) == "--no-strict")
            strict = false;
    transport_config cfg;
    cfg.strict_kex = strict;
    cfg.software_version = "KexInjector_1.0";
    if (role == "client") {
        cfg.role = transport_role::client;
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(static_cast<std::uint16_t>(std::atoi(argv[3])));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
            std::perror("kex_injector: connect");
            return 1;
        }
        serve(fd, cfg, m);
        return 0;
    }
    if (role != "server" || argc < 5)
        return usage();
    auto key = load_private_key_file(argv[4], std::nullopt);
    if (!key) {
        std::cerr << "kex_injector: cannot load " << argv[4] << ": " << to_string(key.error()) << "\n";
        return 1;
    }
    cfg.role = transport_role::server;
    cfg.host_keys = {std::make_shared<const private_key>(std::move(*key))};
    cfg.server_sig_algs = "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256";
    int ls = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(ls, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(ls, 16) != 0 ||
        ::getsockname(ls, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
        std::perror("kex_injector: bind");
        return 1;
    }
    {
        // Written whole, then renamed: a reader never sees half a number.
        const std::string tmp = std::string(argv[3]) + ".tmp";
        std::ofstream(tmp) << ntohs(sa.sin_port) << "\n";
        std::rename(tmp.c_str(), argv[3]);
    }
    for (;;) {
        int c = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        int one = 1;
        ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        serve(c, cfg, m);
    }
}
