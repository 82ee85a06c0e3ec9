#include "channel/forward/socks_server.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <netinet/in.h>

namespace longhaul::forward {

namespace {

constexpr std::uint8_t socks_connect = 0x01;
constexpr std::uint8_t atyp_ipv4 = 0x01;
constexpr std::uint8_t atyp_domain = 0x03;
constexpr std::uint8_t atyp_ipv6 = 0x04;

std::string dotted_quad(const std::uint8_t* p)
{
    return std::to_string(p[0]) + "." + std::to_string(p[1]) + "." + std::to_string(p[2]) + "." +
           std::to_string(p[3]);
}

// inet_ntop's text, as OpenSSH puts an IPv6 target into direct-tcpip.
std::string ipv6_text(const std::uint8_t* p)
{
    char buf[INET6_ADDRSTRLEN];
    in6_addr a;
    std::memcpy(&a, p, sizeof a);
    if (inet_ntop(AF_INET6, &a, buf, sizeof buf) == nullptr)
        return {};
    return buf;
}

std::uint16_t port_at(const std::uint8_t* p)
{
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

} // namespace

std::size_t socks_server::feed(byte_span in)
{
    std::size_t taken = 0;
    // Every step takes a byte or leaves the handshake state, so this ends.
    while (state_ == socks_state::handshake && taken < in.size())
        step(in, taken);
    return taken;
}

void socks_server::consume_output(std::size_t n)
{
    n = std::min(n, output_.size());
    output_.erase(output_.begin(), output_.begin() + static_cast<std::ptrdiff_t>(n));
}

bool socks_server::fill(byte_span in, std::size_t& taken, std::size_t total)
{
    if (pending_.size() < total) {
        const std::size_t n = std::min(total - pending_.size(), in.size() - taken);
        pending_.insert(pending_.end(), in.begin() + static_cast<std::ptrdiff_t>(taken),
                        in.begin() + static_cast<std::ptrdiff_t>(taken + n));
        taken += n;
    }
    return pending_.size() == total;
}

bool socks_server::fill_to_nul(byte_span in, std::size_t& taken)
{
    const std::size_t room = max_socks4_request - std::min(pending_.size(), max_socks4_request);
    const auto first = in.begin() + static_cast<std::ptrdiff_t>(taken);
    const auto last = first + static_cast<std::ptrdiff_t>(std::min(room, in.size() - taken));
    const auto nul = std::find(first, last, std::uint8_t{0});
    const auto end = nul == last ? last : nul + 1;
    pending_.insert(pending_.end(), first, end);
    taken += static_cast<std::size_t>(end - first);
    if (nul != last)
        return true;
    if (pending_.size() >= max_socks4_request)
        refuse_with(errc::too_large, "socks4: request too long", encode_socks4_reply(false));
    return false;
}

void socks_server::step(byte_span in, std::size_t& taken)
{
    switch (phase_) {
    case phase::version:
        if (!fill(in, taken, 1))
            return;
        if (pending_[0] == 4)
            phase_ = phase::s4_header;
        else if (pending_[0] == 5)
            phase_ = phase::s5_greeting_head;
        else
            refuse(errc::malformed, "socks: unknown version " + std::to_string(pending_[0]));
        return;
    case phase::s4_header:
        // VN, CD, DSTPORT, DSTIP; then the NUL-terminated user id.
        if (fill(in, taken, 8))
            phase_ = phase::s4_user;
        return;
    case phase::s4_user:
        if (!fill_to_nul(in, taken))
            return;
        mark_ = pending_.size();
        // SOCKS4a: DSTIP 0.0.0.x (x != 0), a host name follows the user id.
        if (pending_[4] == 0 && pending_[5] == 0 && pending_[6] == 0 && pending_[7] != 0) {
            if (pending_.size() >= max_socks4_request)
                refuse_with(errc::too_large, "socks4a: request too long", encode_socks4_reply(false));
            else
                phase_ = phase::s4_host;
        } else {
            s4_done();
        }
        return;
    case phase::s4_host:
        if (fill_to_nul(in, taken))
            s4_done();
        return;
    case phase::s5_greeting_head:
        // VER, NMETHODS, METHODS.
        if (!fill(in, taken, 2))
            return;
        if (pending_[1] == 0) {
            refuse_with(errc::unsupported, "socks5: no authentication methods offered",
                        encode_socks5_method(socks5_no_acceptable_methods));
            return;
        }
        phase_ = phase::s5_methods;
        return;
    case phase::s5_methods:
        if (fill(in, taken, 2 + std::size_t(pending_[1])))
            s5_greeting_done();
        return;
    case phase::s5_request_head:
        // VER, CMD, RSV, ATYP.
        if (fill(in, taken, 4))
            s5_head_done();
        return;
    case phase::s5_domain_length:
        if (!fill(in, taken, 5))
            return;
        if (pending_[4] == 0) {
            refuse_with(errc::malformed, "socks5: empty host name", encode_socks5_reply(socks5_reply::general_failure));
            return;
        }
        s5_need_ = 5 + std::size_t(pending_[4]) + 2;
        phase_ = phase::s5_address;
        return;
    case phase::s5_address:
        if (fill(in, taken, s5_need_))
            s5_done();
        return;
    }
}

void socks_server::s4_done()
{
    const std::uint8_t* p = pending_.data();
    request_.version = socks_version::v4;
    request_.port = port_at(p + 2);
    request_.user.assign(reinterpret_cast<const char*>(p + 8), mark_ - 8 - 1);
    const bool socks4a = p[4] == 0 && p[5] == 0 && p[6] == 0 && p[7] != 0;
    if (socks4a) {
        request_.address_type = socks_address_type::domain;
        request_.host.assign(reinterpret_cast<const char*>(p + mark_), pending_.size() - mark_ - 1);
        if (request_.host.empty()) {
            refuse_with(errc::malformed, "socks4a: empty host name", encode_socks4_reply(false));
            return;
        }
    } else {
        request_.address_type = socks_address_type::ipv4;
        request_.host = dotted_quad(p + 4);
    }
    if (p[1] != socks_connect) {
        refuse_with(errc::unsupported,
                    std::string(socks4a ? "socks4a" : "socks4") + ": cannot handle command " + std::to_string(p[1]),
                    encode_socks4_reply(false));
        return;
    }
    bytes().swap(pending_);
    state_ = socks_state::request;
}

void socks_server::s5_greeting_done()
{
    const auto methods = byte_span(pending_).subspan(2);
    if (std::find(methods.begin(), methods.end(), socks5_no_auth) == methods.end()) {
        refuse_with(errc::unsupported, "socks5: no acceptable authentication method offered",
                    encode_socks5_method(socks5_no_acceptable_methods));
        return;
    }
    append_output(encode_socks5_method(socks5_no_auth));
    pending_.clear();
    phase_ = phase::s5_request_head;
}

void socks_server::s5_head_done()
{
    const std::uint8_t* p = pending_.data();
    request_.version = socks_version::v5;
    if (p[0] != 0x05 || p[2] != 0x00) {
        refuse_with(errc::malformed, "socks5: malformed request", encode_socks5_reply(socks5_reply::general_failure));
        return;
    }
    if (p[1] != socks_connect) {
        // BIND (2) and UDP ASSOCIATE (3) have no SSH channel to ride on.
        refuse_with(errc::unsupported, "socks5: command " + std::to_string(p[1]) + " not supported",
                    encode_socks5_reply(socks5_reply::command_not_supported));
        return;
    }
    switch (p[3]) {
    case atyp_ipv4:
        request_.address_type = socks_address_type::ipv4;
        s5_need_ = 4 + 4 + 2;
        phase_ = phase::s5_address;
        return;
    case atyp_ipv6:
        request_.address_type = socks_address_type::ipv6;
        s5_need_ = 4 + 16 + 2;
        phase_ = phase::s5_address;
        return;
    case atyp_domain:
        request_.address_type = socks_address_type::domain;
        phase_ = phase::s5_domain_length;
        return;
    default:
        refuse_with(errc::unsupported, "socks5: address type " + std::to_string(p[3]) + " not supported",
                    encode_socks5_reply(socks5_reply::address_type_not_supported));
        return;
    }
}

void socks_server::s5_done()
{
    const std::uint8_t* p = pending_.data();
    switch (request_.address_type) {
    case socks_address_type::ipv4: request_.host = dotted_quad(p + 4); break;
    case socks_address_type::ipv6: request_.host = ipv6_text(p + 4); break;
    case socks_address_type::domain: {
        const std::string_view name(reinterpret_cast<const char*>(p + 5), p[4]);
        // OpenSSH would cut the name at a NUL; a name with one is refused
        // rather than forwarded as something else.
        if (name.find('\0') != std::string_view::npos) {
            refuse_with(errc::malformed, "socks5: NUL in host name",
                        encode_socks5_reply(socks5_reply::general_failure));
            return;
        }
        request_.host = std::string(name);
        break;
    }
    }
    request_.port = port_at(p + pending_.size() - 2);
    bytes().swap(pending_);
    state_ = socks_state::request;
}

void socks_server::refuse(errc e, std::string message)
{
    state_ = socks_state::refused;
    error_ = e;
    error_message_ = std::move(message);
    bytes().swap(pending_);
}

void socks_server::refuse_with(errc e, std::string message, bytes reply)
{
    append_output(reply);
    refuse(e, std::move(message));
}

bool socks_server::reply_success()
{
    if (state_ != socks_state::request || replied_)
        return false;
    replied_ = true;
    append_output(encode_socks_reply(request_.version, socks5_reply::succeeded));
    return true;
}

bool socks_server::reply_failure(socks5_reply code)
{
    if (state_ != socks_state::request || replied_)
        return false;
    replied_ = true;
    if (code == socks5_reply::succeeded)
        code = socks5_reply::general_failure;
    append_output(encode_socks_reply(request_.version, code));
    return true;
}

} // namespace longhaul::forward
