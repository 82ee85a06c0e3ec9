// kex_probe: drives Longhaul's transport core and Asio driver against a real
// SSH server (OpenSSH's sshd in regress/) through key exchange, host key
// verification, an ssh-userauth SERVICE_REQUEST, and rekeying.
//
//   kex_probe --free-port
//   kex_probe --port P --host-key-dir D --kex K --hostkey H --cipher C [--mac M] [options]
//   kex_probe --port P --host-key-dir D (--matrix | --pairwise) --server-kex L
//             --server-hostkeys L --server-ciphers L --server-macs L [options]
//   options: --rekeys N --jobs N --user U --identity KEYFILE --server-rekey-bytes B
//
// The host key the server proves must equal D/ssh_host_<type>_key.pub.
// OpenSSH refuses KEXINIT during user authentication, so with --user and
// --identity the probe first logs in (publickey, the minimum RFC 4252 needs;
// the real client's authentication lives in ssh/), then asks for N rekeys,
// then pushes B bytes of IGNORE so that the server's RekeyLimit makes *it*
// start one more. Without --identity no rekey is attempted.
//
// --matrix tries every kex x host key x cipher suite (a cipher with each MAC,
// or an AEAD cipher alone); --pairwise a covering subset of it in which every
// pair of kex, host key and suite still meets at least once: the parts
// interact pairwise (the kex hash sizes every derived key, the host key
// signs the kex hash), not three at a time, and a seventh of the logins is
// what lets CI afford it (docs/TESTING.md).
#include "common/crypto/packet_cipher.hpp"
#include "common/io/transport_driver.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/key_file.hpp"
#include "common/name_list.hpp"
#include "common/random.hpp"
#include "common/transport/transport.hpp"
#include "common/wire.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

using namespace longhaul;
namespace asio = boost::asio;

namespace {

struct combo {
    std::string kex, host_key, cipher, mac;
    std::string label() const { return kex + " " + host_key + " " + cipher + " " + (mac.empty() ? "-" : mac); }
};

struct options {
    std::string host = "127.0.0.1";
    int port = 0;
    std::string key_dir;
    int rekeys = 2;
    int jobs = 4;
    bool matrix = false;
    bool pairwise = false;
    combo single;
    std::string server_kex, server_hostkeys, server_ciphers, server_macs;
    std::string user, identity;
    std::optional<private_key> user_key;
    long server_rekey_bytes = 0;
};

std::string host_key_file(std::string_view host_key_alg)
{
    if (host_key_alg == "ssh-ed25519")
        return "ssh_host_ed25519_key.pub";
    if (host_key_alg.starts_with("ecdsa-sha2-nistp"))
        return "ssh_host_ecdsa" + std::string(host_key_alg.substr(16)) + "_key.pub";
    return "ssh_host_rsa_key.pub";
}

std::optional<bytes> read_pub_blob(const std::string& path)
{
    std::ifstream f(path);
    std::string type, b64;
    if (!(f >> type >> b64))
        return std::nullopt;
    auto blob = base64_decode(b64);
    if (!blob)
        return std::nullopt;
    return *blob;
}

int connect_tcp(const std::string& host, int port)
{
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        ::close(fd);
        return -1;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// One connection through its whole script; reports once through `done`.
class probe : public std::enable_shared_from_this<probe> {
public:
    probe(asio::io_context& io, const options& opt, combo c, std::function<void(const combo&, bool, std::string)> done)
        : io_(io), opt_(opt), combo_(std::move(c)), done_(std::move(done)), timer_(io)
    {
    }

    void start()
    {
        transport_config cfg;
        cfg.kex_algorithms = combo_.kex;
        cfg.host_key_algorithms = combo_.host_key;
        cfg.ciphers = combo_.cipher;
        if (!combo_.mac.empty())
            cfg.macs = combo_.mac;
        core_ = std::make_unique<transport>(cfg, rng_, std::chrono::steady_clock::now());
        int fd = connect_tcp(opt_.host, opt_.port);
        if (fd < 0)
            return finish(false, std::string("connect: ") + std::strerror(errno));
        driver_ = std::make_unique<transport_driver>(io_, fd, *core_);
        auto self = shared_from_this();
        timer_.expires_after(std::chrono::seconds(20));
        timer_.async_wait([self](const boost::system::error_code& ec) {
            if (!ec)
                self->finish(false, "timed out after " + std::to_string(self->kex_done_) + " key exchanges");
        });
        driver_->start([self](const transport_event& ev) { self->on_event(ev); },
                       [self](std::error_code ec) {
                           if (!self->reported_)
                               self->finish(false, "connection closed: " + (ec ? ec.message() : self->last_error_));
                       });
    }

private:
    void on_event(const transport_event& ev)
    {
        switch (ev.type) {
        case transport_event_type::host_key: {
            auto want = read_pub_blob(opt_.key_dir + "/" + host_key_file(combo_.host_key));
            if (!want || *want != ev.host_key->blob()) {
                core_->reject_host_key("host key does not match " + host_key_file(combo_.host_key));
                last_error_ = "host key mismatch (" + ev.host_key->fingerprint_sha256() + ")";
                return;
            }
            fingerprint_ = ev.host_key->fingerprint_sha256();
            core_->accept_host_key();
            break;
        }
        case transport_event_type::kex_complete:
            ++kex_done_;
            if (kex_done_ == 1) {
                send_service_request();
            } else if (rekey_requested_) {
                rekey_requested_ = false;
                ++client_rekeys_;
                next_step();
            } else {
                ++server_rekeys_;
                next_step();
            }
            break;
        case transport_event_type::payload: on_payload(ev.payload); break;
        case transport_event_type::disconnected:
            last_error_ = std::string(ev.local ? "local: " : "server: ") + std::string(ev.text);
            if (!reported_)
                finish(false, last_error_);
            break;
        default: break;
        }
    }

    void send_service_request()
    {
        bytes m;
        wire_writer(m).u8(msg::service_request).string("ssh-userauth");
        (void)core_->send(m);
    }

    // RFC 4252 §7: publickey with a signature over the session identifier and the request.
    void send_publickey_request()
    {
        const private_key& key = *opt_.user_key;
        const std::string alg(key.type() == key_type::rsa ? "rsa-sha2-512" : key_type_name(key.type()));
        bytes req;
        wire_writer(req).u8(msg::userauth_request).string(opt_.user).string("ssh-connection").string("publickey")
            .boolean(true).string(alg).string(key.public_part().blob());
        bytes signed_data;
        wire_writer(signed_data).string(core_->session_id()).raw(req);
        auto sig = key.sign(alg, signed_data);
        if (!sig)
            return finish(false, "cannot sign the authentication request");
        wire_writer(req).string(*sig);
        (void)core_->send(req);
    }

    void on_payload(byte_span payload)
    {
        wire_reader r(payload);
        const auto type = r.u8();
        if (type == msg::service_accept) {
            if (r.text() != "ssh-userauth" || !r.finish())
                return finish(false, "bad SERVICE_ACCEPT");
            service_accepted_ = true;
            if (!opt_.user_key)
                return next_step();
            return send_publickey_request();
        }
        if (type == msg::userauth_success) {
            authenticated_ = true;
            core_->user_authenticated();
            return next_step();
        }
        if (type == msg::userauth_failure)
            return finish(false, "publickey authentication refused");
        // Banners, global requests (hostkeys-00@openssh.com) and replies: not this probe's business.
    }

    // After login: the requested client rekeys, then one the server starts itself.
    void next_step()
    {
        if (opt_.user_key && !authenticated_)
            return;
        if (opt_.user_key && client_rekeys_ < opt_.rekeys) {
            rekey_requested_ = true;
            core_->request_rekey();
            return;
        }
        if (opt_.user_key && opt_.server_rekey_bytes > 0 && server_rekeys_ == 0) {
            if (pushed_)
                return;
            pushed_ = true;
            for (long sent = 0; sent <= opt_.server_rekey_bytes; sent += 32 * 1024)
                core_->send_ignore(32 * 1024);
            // A request the server must answer: sshd also checks its limits when sending.
            bytes m;
            wire_writer(m).u8(80).string("keepalive@openssh.com").boolean(true);
            (void)core_->send(m);
            return;
        }
        const auto& a = core_->algorithms();
        bool match = a.kex == combo_.kex && a.host_key == combo_.host_key && a.cipher_c2s == combo_.cipher &&
                     a.cipher_s2c == combo_.cipher && a.mac_c2s == combo_.mac && a.mac_s2c == combo_.mac;
        if (!match)
            return finish(false, "negotiated something else: " + a.kex + " " + a.cipher_c2s);
        std::ostringstream detail;
        detail << "kex x" << kex_done_ << " (client-initiated rekeys " << client_rekeys_ << ", server-initiated "
               << server_rekeys_ << ") strict=" << core_->strict_kex() << " " << fingerprint_;
        core_->disconnect(disconnect_reason::by_application, "probe done");
        finish(true, detail.str());
    }

    void finish(bool ok, std::string detail)
    {
        if (reported_)
            return;
        reported_ = true;
        timer_.cancel();
        if (driver_)
            driver_->close();
        done_(combo_, ok, std::move(detail));
    }

    asio::io_context& io_;
    const options& opt_;
    combo combo_;
    std::function<void(const combo&, bool, std::string)> done_;
    asio::steady_timer timer_;
    system_random rng_;
    std::unique_ptr<transport> core_;
    std::unique_ptr<transport_driver> driver_;
    int kex_done_ = 0;
    int client_rekeys_ = 0, server_rekeys_ = 0;
    bool rekey_requested_ = false, service_accepted_ = false, authenticated_ = false, pushed_ = false;
    bool reported_ = false;
    std::string fingerprint_, last_error_;
};

std::vector<std::string> intersect(const std::vector<std::string_view>& ours, const std::string& theirs)
{
    std::vector<std::string> out;
    for (auto a : ours)
        if (name_list_contains(theirs, a))
            out.emplace_back(a);
    return out;
}

std::vector<combo> build_matrix(const options& opt)
{
    const std::string hk = supported_host_key_algorithms();
    auto kexes = intersect(supported_kex_methods(), opt.server_kex);
    auto hostkeys = intersect(split_name_list(hk), opt.server_hostkeys);
    auto ciphers = intersect(supported_ciphers(), opt.server_ciphers);
    auto macs = intersect(supported_macs(), opt.server_macs);
    // A suite is what the transport negotiates as one: a cipher and its MAC.
    std::vector<std::pair<std::string, std::string>> suites;
    for (const auto& c : ciphers) {
        if (find_cipher(c)->aead) {
            suites.emplace_back(c, "");
            continue;
        }
        for (const auto& m : macs)
            suites.emplace_back(c, m);
    }
    std::vector<combo> out;
    if (hostkeys.empty())
        return out;
    if (!opt.pairwise) {
        for (const auto& k : kexes)
            for (const auto& h : hostkeys)
                for (const auto& [c, m] : suites)
                    out.push_back({k, h, c, m});
        return out;
    }
    // Every kex x suite once, the host key rotating along both so that it
    // meets every kex and every suite; pairs the rotation misses (fewer kexes
    // or suites than host keys) get a row of their own.
    const std::size_t nh = hostkeys.size();
    std::set<std::pair<std::size_t, std::size_t>> kex_host, host_suite;
    for (std::size_t k = 0; k < kexes.size(); ++k)
        for (std::size_t s = 0; s < suites.size(); ++s) {
            const std::size_t h = (k + s) % nh;
            out.push_back({kexes[k], hostkeys[h], suites[s].first, suites[s].second});
            kex_host.emplace(k, h);
            host_suite.emplace(h, s);
        }
    for (std::size_t h = 0; h < nh; ++h) {
        for (std::size_t k = 0; k < kexes.size() && !suites.empty(); ++k)
            if (!kex_host.contains({k, h}))
                out.push_back({kexes[k], hostkeys[h], suites[0].first, suites[0].second});
        for (std::size_t s = 0; s < suites.size() && !kexes.empty(); ++s)
            if (!host_suite.contains({h, s}))
                out.push_back({kexes[0], hostkeys[h], suites[s].first, suites[s].second});
    }
    return out;
}

int free_port()
{
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
        return -1;
    ::close(fd);
    return ntohs(sa.sin_port);
}

int usage()
{
    std::cerr << "usage: kex_probe --free-port\n"
                 "       kex_probe --port P --host-key-dir D ((--matrix | --pairwise) --server-kex L --server-hostkeys L "
                 "--server-ciphers L --server-macs L | --kex K --hostkey H --cipher C [--mac M]) [--rekeys N] [--jobs N]\n";
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    options opt;
    std::map<std::string, std::string*> text_flags = {
        {"--host", &opt.host},           {"--host-key-dir", &opt.key_dir},
        {"--kex", &opt.single.kex},      {"--hostkey", &opt.single.host_key},
        {"--cipher", &opt.single.cipher}, {"--mac", &opt.single.mac},
        {"--server-kex", &opt.server_kex}, {"--server-hostkeys", &opt.server_hostkeys},
        {"--server-ciphers", &opt.server_ciphers}, {"--server-macs", &opt.server_macs},
        {"--user", &opt.user}, {"--identity", &opt.identity},
    };
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--free-port") {
            int p = free_port();
            if (p < 0)
                return 1;
            std::cout << p << "\n";
            return 0;
        }
        if (a == "--matrix" || a == "--pairwise") {
            opt.matrix = true;
            opt.pairwise = a == "--pairwise";
            continue;
        }
        if (i + 1 >= argc)
            return usage();
        std::string v = argv[++i];
        if (auto it = text_flags.find(a); it != text_flags.end())
            *it->second = v;
        else if (a == "--port")
            opt.port = std::atoi(v.c_str());
        else if (a == "--rekeys")
            opt.rekeys = std::atoi(v.c_str());
        else if (a == "--server-rekey-bytes")
            opt.server_rekey_bytes = std::atol(v.c_str());
        else if (a == "--jobs")
            opt.jobs = std::max(1, std::atoi(v.c_str()));
        else
            return usage();
    }
    if (opt.port <= 0 || opt.key_dir.empty())
        return usage();
    if (!opt.identity.empty()) {
        auto k = load_private_key_file(opt.identity, std::nullopt);
        if (!k) {
            std::cerr << "kex_probe: cannot load " << opt.identity << ": " << to_string(k.error()) << "\n";
            return 2;
        }
        opt.user_key = std::move(*k);
        if (opt.user.empty())
            return usage();
    }

    std::deque<combo> todo;
    if (opt.matrix) {
        auto m = build_matrix(opt);
        todo.assign(m.begin(), m.end());
    } else {
        if (opt.single.kex.empty() || opt.single.host_key.empty() || opt.single.cipher.empty())
            return usage();
        todo.push_back(opt.single);
    }
    if (todo.empty()) {
        std::cerr << "kex_probe: no algorithm combination in common with the server\n";
        return 1;
    }

    asio::io_context io;
    std::size_t total = todo.size(), passed = 0, failed = 0, running = 0;
    std::function<void()> launch;
    auto done = [&](const combo& c, bool ok, std::string detail) {
        (ok ? passed : failed)++;
        std::printf("%s %s: %s\n", ok ? "ok  " : "FAIL", c.label().c_str(), detail.c_str());
        std::fflush(stdout);
        --running;
        asio::post(io, [&] { launch(); });
    };
    launch = [&] {
        while (running < static_cast<std::size_t>(opt.jobs) && !todo.empty()) {
            ++running;
            auto p = std::make_shared<probe>(io, opt, todo.front(), done);
            todo.pop_front();
            p->start();
        }
    };
    launch();
    io.run();
    std::printf("%zu combinations: %zu passed, %zu failed\n", total, passed, failed);
    return failed == 0 && passed == total ? 0 : 1;
}
