// auth_prober: a scripted SSH client for the sshd hardening tests (issue 12),
// doing what no ordinary client does. It runs Longhaul's transport core over
// a blocking socket and writes the userauth messages itself.
//
//   auth_prober flood-preauth PORT SECONDS
//       completes the key exchange, then sends packets the server answers
//       with UNIMPLEMENTED (an unknown message before authentication) as
//       fast as it can for SECONDS, never reading, or until the server has
//       taken nothing for 3 s (it stopped reading, as a bounded server
//       must); prints "sent N bytes (...)" and holds the connection open
//       3 s more.
//   auth_prober flood-postauth PORT USER PASSWORD SECONDS
//       logs in with the password, then sends global requests that want a
//       reply, never reading; same output and hold.
//   auth_prober kbdint-abandon PORT USER KEYFILE
//       starts keyboard-interactive, and when the server sends its prompts
//       answers with a signed publickey request instead (a conversation
//       left unfinished); prints "result: authenticated", "result: failure
//       METHODS", "result: closed: TEXT" or "result: timed out" (30 s), and
//       the milliseconds the publickey request took: "elapsed_ms N".
//
// The host key is accepted whatever it is (the tests do not check it).
#include "channel/messages.hpp"
#include "common/auth/messages.hpp"
#include "common/keys/key_file.hpp"
#include "common/random.hpp"
#include "common/transport/transport.hpp"
#include "common/wire.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

using namespace longhaul;
using steady = std::chrono::steady_clock;

namespace {

class prober {
public:
    explicit prober(int port) : core_(config(), rng_, steady::now())
    {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(static_cast<std::uint16_t>(port));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
            std::perror("auth_prober: connect");
            std::exit(1);
        }
    }

    transport& core() { return core_; }

    // Runs the connection until `want` returns true for a payload (which is
    // then returned), the connection ends, or `limit` passes.
    std::optional<bytes> wait_for(const std::function<bool(byte_span)>& want, std::chrono::milliseconds limit)
    {
        const auto deadline = steady::now() + limit;
        for (;;) {
            for (;;) {
                transport_event ev = core_.poll();
                if (ev.type == transport_event_type::none)
                    break;
                if (ev.type == transport_event_type::host_key)
                    core_.accept_host_key();
                else if (ev.type == transport_event_type::kex_complete)
                    kex_done_ = true;
                else if (ev.type == transport_event_type::disconnected)
                    closed_text_ = std::string(ev.text);
                else if (ev.type == transport_event_type::payload && want(ev.payload))
                    return bytes(ev.payload.begin(), ev.payload.end());
            }
            if (!write_out())
                return std::nullopt;
            if (core_.closed())
                return std::nullopt;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
            if (left.count() <= 0) {
                timed_out_ = true;
                return std::nullopt;
            }
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR)
                return std::nullopt;
            if (p.revents != 0) {
                auto space = core_.input_space();
                ssize_t n = ::read(fd_, space.data(), space.size());
                if (n > 0)
                    core_.commit_input(static_cast<std::size_t>(n));
                else if (n == 0 || errno != EINTR)
                    core_.input_eof();
            }
        }
    }

    bool kex()
    {
        wait_for([](byte_span) { return false; }, std::chrono::milliseconds(1));
        const auto deadline = steady::now() + std::chrono::seconds(20);
        while (!kex_done_ && !core_.closed() && steady::now() < deadline)
            wait_for([](byte_span) { return false; }, std::chrono::milliseconds(50));
        return kex_done_;
    }

    bool userauth_service()
    {
        (void)core_.send(service_request{"ssh-userauth"}.encode());
        return wait_for([](byte_span p) { return p[0] == msg::service_accept; }, std::chrono::seconds(20)).has_value();
    }

    // Blocking write of everything queued; false when the socket is gone.
    bool write_out()
    {
        while (core_.output_size() > 0) {
            auto out = core_.output();
            ssize_t n = ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return false;
            core_.consume_output(static_cast<std::size_t>(n));
        }
        return true;
    }

    // Sends `make()` payloads without ever reading, for `seconds`, until
    // 512 MiB went out, until the socket is gone, or until the server took
    // nothing for `stall_limit` (it stopped reading: what the test wants to
    // see, and waiting longer shows nothing more; a server that never stops
    // reading gets the whole flood). Returns the bytes written.
    static constexpr std::uint64_t max_flood_bytes = 512ull << 20;
    static constexpr auto stall_limit = std::chrono::seconds(3);
    struct flood_result {
        std::uint64_t sent = 0;
        bool stalled = false;
    };
    flood_result flood(const std::function<bytes()>& make, int seconds)
    {
        ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
        const auto deadline = steady::now() + std::chrono::seconds(seconds);
        auto last_progress = steady::now();
        flood_result r;
        std::uint64_t& sent = r.sent;
        while (steady::now() < deadline && sent < max_flood_bytes) {
            if (steady::now() - last_progress >= stall_limit) {
                r.stalled = true;
                break;
            }
            // A batch of packets, then as much of it as the kernel takes.
            while (core_.output_size() < 256 * 1024)
                if (!core_.send(make()))
                    return r;
            auto out = core_.output();
            ssize_t n = ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL);
            if (n > 0) {
                core_.consume_output(static_cast<std::size_t>(n));
                sent += static_cast<std::uint64_t>(n);
                last_progress = steady::now();
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                // The server is not reading (or is slow): wait a little.
                pollfd p{fd_, POLLOUT, 0};
                ::poll(&p, 1, 100);
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            break; // the server closed the connection
        }
        return r;
    }

    const std::string& closed_text() const { return closed_text_; }
    bool timed_out() const { return timed_out_; }

private:
    static transport_config config()
    {
        transport_config c;
        c.role = transport_role::client;
        c.software_version = "AuthProber_1.0";
        return c;
    }

    system_random rng_;
    transport core_;
    int fd_ = -1;
    bool kex_done_ = false;
    bool timed_out_ = false;
    std::string closed_text_;
};

// The connection stays open a little after a flood, so that the test can
// look at the server while its output is still queued.
void hold()
{
    ::sleep(3);
}

void print_flood(const prober::flood_result& r)
{
    std::cout << "sent " << r.sent << " bytes"
              << (r.stalled ? " (then the server stopped reading)" : " (the server kept reading)") << std::endl;
}

int flood_preauth(int port, int seconds)
{
    prober p(port);
    if (!p.kex()) {
        std::cout << "result: key exchange failed: " << p.closed_text() << std::endl;
        return 1;
    }
    // Message 200 before authentication: the server answers UNIMPLEMENTED.
    print_flood(p.flood([] { return bytes{200}; }, seconds));
    hold();
    return 0;
}

int flood_postauth(int port, const std::string& user, const std::string& password, int seconds)
{
    prober p(port);
    if (!p.kex() || !p.userauth_service()) {
        std::cout << "result: key exchange failed: " << p.closed_text() << std::endl;
        return 1;
    }
    userauth_request req;
    req.user = user;
    req.service = "ssh-connection";
    req.method = "password";
    userauth_password_data pd;
    pd.password = secret_bytes(as_bytes(password));
    req.data = std::move(pd);
    {
        secret_bytes payload = req.encode_secret();
        (void)p.core().send(payload.span());
    }
    auto reply = p.wait_for([](byte_span b) { return b[0] == msg::userauth_success || b[0] == msg::userauth_failure; },
                            std::chrono::seconds(20));
    if (!reply || (*reply)[0] != msg::userauth_success) {
        std::cout << "result: password login failed" << std::endl;
        return 1;
    }
    // A global request that wants a reply: the server answers each with
    // REQUEST_FAILURE.
    bytes request;
    wire_writer(request).u8(msg::global_request).string("flood@longhaul.test").boolean(true);
    print_flood(p.flood([&] { return request; }, seconds));
    hold();
    return 0;
}

int kbdint_abandon(int port, const std::string& user, const std::string& keyfile)
{
    auto key = load_private_key_file(keyfile, std::nullopt);
    if (!key) {
        std::cerr << "auth_prober: cannot load " << keyfile << "\n";
        return 2;
    }
    prober p(port);
    if (!p.kex() || !p.userauth_service()) {
        std::cout << "result: key exchange failed: " << p.closed_text() << std::endl;
        return 1;
    }
    userauth_request kbd;
    kbd.user = user;
    kbd.service = "ssh-connection";
    kbd.method = "keyboard-interactive";
    kbd.data = userauth_kbdint_data{};
    (void)p.core().send(kbd.encode());
    auto prompts = p.wait_for([](byte_span b) { return b[0] == msg::userauth_info_request || b[0] == msg::userauth_failure; },
                              std::chrono::seconds(20));
    if (!prompts || (*prompts)[0] != msg::userauth_info_request) {
        std::cout << "result: no keyboard-interactive prompts" << std::endl;
        return 1;
    }
    std::cerr << "auth_prober: got the keyboard-interactive prompts; answering with publickey instead\n";
    // The conversation stays open in the server; now a publickey login.
    userauth_request pk;
    pk.user = user;
    pk.service = "ssh-connection";
    pk.method = "publickey";
    userauth_publickey_data d;
    d.has_signature = true;
    d.algorithm = std::string(key->public_part().type_name());
    d.key_blob = key->public_part().blob();
    pk.data = d;
    auto sig = key->sign(d.algorithm, publickey_signed_data(p.core().session_id(), pk));
    if (!sig) {
        std::cerr << "auth_prober: signing failed\n";
        return 2;
    }
    std::get<userauth_publickey_data>(pk.data).signature = *sig;
    const auto start = steady::now();
    (void)p.core().send(pk.encode());
    auto answer = p.wait_for([](byte_span b) { return b[0] == msg::userauth_success || b[0] == msg::userauth_failure; },
                             std::chrono::seconds(30));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start).count();
    if (answer && (*answer)[0] == msg::userauth_success) {
        std::cout << "result: authenticated" << std::endl;
    } else if (answer) {
        auto f = userauth_failure::decode(*answer);
        std::cout << "result: failure " << (f ? f->methods : std::string("?")) << std::endl;
    } else if (p.timed_out()) {
        std::cout << "result: timed out" << std::endl;
    } else {
        std::cout << "result: closed: " << p.closed_text() << std::endl;
    }
    std::cout << "elapsed_ms " << ms << std::endl;
    return 0;
}

int usage()
{
    std::cerr << "usage: auth_prober flood-preauth PORT SECONDS\n"
                 "       auth_prober flood-postauth PORT USER PASSWORD SECONDS\n"
                 "       auth_prober kbdint-abandon PORT USER KEYFILE\n";
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3)
        return usage();
    const std::string mode = argv[1];
    const int port = std::atoi(argv[2]);
    if (mode == "flood-preauth" && argc == 4)
        return flood_preauth(port, std::atoi(argv[3]));
    if (mode == "flood-postauth" && argc == 6)
        return flood_postauth(port, argv[3], argv[4], std::atoi(argv[5]));
    if (mode == "kbdint-abandon" && argc == 5)
        return kbdint_abandon(port, argv[3], argv[4]);
    return usage();
}
