// Fuzzes the forwarding codecs and permission rules (channel/forward):
// the channel-open data of direct-tcpip, forwarded-tcpip and the
// streamlocal types, the tcpip-forward / streamlocal-forward requests and
// their cancels, the allocated-port reply; and PermitOpen / PermitListen
// lists with the matching and GatewayPorts decisions.
//
// Input: byte 0 = mode; modes 0-3 a channel type, 4-7 a global request
// name, 8 the tcpip-forward reply: the rest is the message data. Mode 9:
// the rest is text, its first line "host port" to check and the other
// lines the list entries (byte 1 picks open or listen, and GatewayPorts).
// Modes 10-13, X11 forwarding (channel/forward/x11_messages, x11_setup):
// 10 x11-req data, 11 x11 open data, 12 an X11 connection setup checked
// against a fixed protocol and fake cookie, 13 a $DISPLAY value. Mode 14,
// tunnels (channel/forward/tun_messages): the tun@openssh.com open data,
// and the rest as a packet for the address-family header both ways.
// Invariants: a message that decodes encodes back to the same bytes (the
// encodings are canonical) and decodes again to the same values; decoding
// by name gives what decoding by type gives; a failure is one of
// malformed, trailing_data, too_large. Permission lists: "none" permits
// nothing, "any" everything, a list permits only what one of its entries
// would alone; a bind address is never both wildcard and an address.
// X11: decoded requests re-encode and decode to the same values; a setup
// check touches nothing unless it accepts, and then only the cookie bytes,
// which become the real cookie; an incomplete setup is shorter than
// x11_setup_max; a parsed display has a port within 6000-65535.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "channel/forward/forward_messages.hpp"
#include "channel/forward/forward_permissions.hpp"
#include "channel/forward/forward_policy.hpp"
#include "channel/forward/tun_messages.hpp"
#include "channel/forward/x11_messages.hpp"
#include "channel/forward/x11_setup.hpp"
#include "common/wire.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace longhaul;
using namespace longhaul::forward;
using longhaul::fuzz::with_prefix;
using longhaul::fuzz::write_seed;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

void check_failure(errc e)
{
    check(e == errc::malformed || e == errc::trailing_data || e == errc::too_large);
}

template <class T>
void round_trip(byte_span data)
{
    auto d = T::decode(data);
    if (!d) {
        check_failure(d.error());
        return;
    }
    const bytes e = d->encode();
    check(e == bytes(data.begin(), data.end()));
    auto again = T::decode(e);
    check(again && again->encode() == e);
}

constexpr std::string_view open_types[] = {direct_tcpip_type, forwarded_tcpip_type, direct_streamlocal_type,
                                           forwarded_streamlocal_type};
constexpr std::string_view request_names[] = {tcpip_forward_name, cancel_tcpip_forward_name,
                                              streamlocal_forward_name, cancel_streamlocal_forward_name};

void messages(std::uint8_t mode, byte_span data)
{
    switch (mode) {
    case 0: round_trip<direct_tcpip_open>(data); break;
    case 1: round_trip<forwarded_tcpip_open>(data); break;
    case 2: round_trip<direct_streamlocal_open>(data); break;
    case 3: round_trip<forwarded_streamlocal_open>(data); break;
    case 4:
    case 5: round_trip<tcpip_forward_request>(data); break;
    case 6:
    case 7: round_trip<streamlocal_forward_request>(data); break;
    case 8: round_trip<tcpip_forward_reply>(data); break;
    }
    if (mode < 4) {
        auto o = decode_forward_open(open_types[mode], data);
        check(o.has_value() == (mode == 0   ? direct_tcpip_open::decode(data).has_value()
                                : mode == 1 ? forwarded_tcpip_open::decode(data).has_value()
                                : mode == 2 ? direct_streamlocal_open::decode(data).has_value()
                                            : forwarded_streamlocal_open::decode(data).has_value()));
        if (o)
            check(o->index() == mode);
    } else if (mode < 8) {
        auto r = decode_forward_request(request_names[mode - 4], data);
        if (r)
            check(static_cast<int>(r->kind) == mode - 4);
        else
            check_failure(r.error());
    }
}

std::vector<std::string> lines(std::string_view s)
{
    std::vector<std::string> out;
    while (!s.empty() && out.size() < 64) {
        const auto nl = s.find('\n');
        out.emplace_back(s.substr(0, nl));
        if (nl == std::string_view::npos)
            break;
        s.remove_prefix(nl + 1);
    }
    return out;
}

void permissions(std::uint8_t flags, std::string_view text)
{
    auto ls = lines(text);
    if (ls.empty())
        return;
    const std::string query = ls.front();
    ls.erase(ls.begin());
    const auto sp = query.rfind(' ');
    const std::string host = query.substr(0, sp == std::string::npos ? query.size() : sp);
    const int port = sp == std::string::npos ? 0 : std::atoi(query.c_str() + sp + 1);
    const auto kind = (flags & 1) ? permission_kind::listen : permission_kind::open;
    std::string why;
    const auto list = parse_permission_list(ls, kind, "PermitOpen", why);
    if (!list) {
        check(!why.empty());
    } else {
        const bool open = open_list_permits(*list, host, port);
        const bool listen = listen_list_permits(*list, host, port);
        if (list->kind == permission_list::mode::none)
            check(!open && !listen);
        if (list->kind == permission_list::mode::any)
            check(open && listen);
        if (list->kind == permission_list::mode::list) {
            bool any_open = false, any_listen = false;
            for (const auto& e : list->entries) {
                permission_list one{permission_list::mode::list, {e}};
                any_open = any_open || open_list_permits(one, host, port);
                any_listen = any_listen || listen_list_permits(one, host, port);
            }
            check(open == any_open && listen == any_listen);
        }
        check(open_permitted(*list, permission_list{}, host, port) == open);
        check(listen_permitted(permission_list{}, *list, host, port) == listen);
    }
    const auto gp = static_cast<gateway_ports>((flags >> 1) % 3);
    const auto b = forward_bind_address(host, (flags & 8) != 0, gp, (flags & 16) != 0);
    check(!(b.wildcard && b.address));
    (void)remote_forward_matches(host, port, remote_forward_bind_host(host), port);
    check(remote_forward_matches(host, port, remote_forward_bind_host(host), port));
}

const std::string fuzz_x11_proto = "MIT-MAGIC-COOKIE-1";
const bytes fuzz_x11_fake(16, 0xa5);
const bytes fuzz_x11_real(16, 0x3c);

void x11_messages(std::uint8_t mode, byte_span data)
{
    if (mode == 10) {
        auto d = x11_request::decode(data);
        if (!d)
            return check_failure(d.error());
        auto again = x11_request::decode(d->encode());
        check(again && again->single_connection == d->single_connection &&
              again->auth_protocol == d->auth_protocol && again->auth_cookie == d->auth_cookie &&
              again->screen == d->screen);
        (void)xauth_valid_string(d->auth_protocol);
        (void)xauth_valid_string(d->auth_cookie);
    } else if (mode == 11) {
        round_trip<x11_open>(data);
    } else if (mode == 12) {
        bytes buf(data.begin(), data.end());
        auto r = x11_check_setup(buf, fuzz_x11_proto, fuzz_x11_fake, fuzz_x11_real);
        if (r.verdict != x11_setup_verdict::accepted) {
            check(buf == bytes(data.begin(), data.end()));
            check(r.verdict == x11_setup_verdict::rejected || data.size() < x11_setup_max);
            return;
        }
        check(r.length <= buf.size() && r.length % 4 == 0 && r.length <= x11_setup_max);
        const std::size_t at = r.length - 16;
        check(bytes(buf.begin() + at, buf.begin() + r.length) == fuzz_x11_real);
        check(std::equal(buf.begin(), buf.begin() + at, data.begin()));
        check(std::equal(buf.begin() + r.length, buf.end(), data.begin() + r.length));
    } else {
        const std::string text(data.begin(), data.end());
        std::string error;
        if (auto t = parse_x11_display(text, error)) {
            check(t->local_socket || (t->port() >= x11_base_port && t->port() <= 65535));
        } else {
            check(!error.empty());
        }
        check(x11_screen_of(text) <= 400);
        char bad = 0;
        (void)x11_display_valid(text, bad);
        (void)x11_xauth_display_name(text);
    }
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](std::uint8_t mode, const bytes& data) {
        write_seed(dir, "seed-" + std::to_string(n++), with_prefix({mode}, data));
    };
    put(0, direct_tcpip_open{"db.internal", 5432, "192.0.2.10", 50123}.encode());
    put(1, forwarded_tcpip_open{"localhost", 8080, "::1", 40000}.encode());
    put(2, direct_streamlocal_open{"/run/app.sock", "", 0}.encode());
    put(3, forwarded_streamlocal_open{"/tmp/fwd.sock", ""}.encode());
    put(4, tcpip_forward_request{"localhost", 0}.encode());
    put(5, tcpip_forward_request{"", 2222}.encode());
    put(6, streamlocal_forward_request{"/tmp/l.sock"}.encode());
    put(7, streamlocal_forward_request{"/tmp/l.sock"}.encode());
    put(8, tcpip_forward_reply{40123}.encode());
    put(0, direct_tcpip_open{std::string(1025, 'h'), 1, "o", 2}.encode());
    auto text = [](std::string_view s) { return bytes(s.begin(), s.end()); };
    put(9, with_prefix({0}, text("db 5432\ndb:5432\n[::1]:22\n*:*")));
    put(9, with_prefix({1}, text("localhost 8080\n8080\nlocalhost:*\n*.example.org:443")));
    put(9, with_prefix({3}, text("0.0.0.0 0\nnone")));
    put(9, with_prefix({12}, text("* 80\nany")));
    put(10, x11_request{false, "MIT-MAGIC-COOKIE-1", "00112233445566778899aabbccddeeff", 0}.encode());
    put(11, x11_open{"127.0.0.1", 40000}.encode());
    bytes setup{0x6c, 0, 11, 0, 0, 0, 18, 0, 16, 0, 0, 0};
    setup.insert(setup.end(), fuzz_x11_proto.begin(), fuzz_x11_proto.end());
    setup.resize(setup.size() + 2, 0);
    setup.insert(setup.end(), fuzz_x11_fake.begin(), fuzz_x11_fake.end());
    put(12, setup);
    put(13, text("localhost:10.0"));
    put(13, text("unix:0"));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    longhaul::fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

// tun@openssh.com: a decoded open re-encodes to the same bytes; a header
// stripped leaves exactly the packet after it, and one put in front names
// the family the packet's first nibble says.
void tun_messages(byte_span data)
{
    if (auto o = tun_open::decode(data)) {
        check(o->encode() == bytes(data.begin(), data.end()));
        auto again = tun_open::decode(o->encode());
        check(again && again->mode == o->mode && again->unit == o->unit);
    } else {
        check(o.error() == errc::malformed || o.error() == errc::trailing_data);
    }
    if (auto p = strip_af_header(data)) {
        check(data.size() >= tun_af_header_size && p->size() == data.size() - tun_af_header_size &&
              (p->empty() || p->data() == data.data() + tun_af_header_size));
    } else {
        check(data.size() < tun_af_header_size);
    }
    std::uint8_t header[tun_af_header_size];
    put_af_header(header, data);
    const std::uint32_t family = (std::uint32_t{header[0]} << 24) | (std::uint32_t{header[1]} << 16) |
                                 (std::uint32_t{header[2]} << 8) | header[3];
    check(family == tun_packet_family(data));
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1 || size > 64 * 1024)
        return 0;
    const std::uint8_t mode = data[0] % 15;
    if (mode == 14) {
        tun_messages(byte_span(data + 1, size - 1));
    } else if (mode < 9) {
        messages(mode, byte_span(data + 1, size - 1));
    } else if (mode >= 10) { // 10-13
        x11_messages(mode, byte_span(data + 1, size - 1));
    } else if (size >= 2) {
        permissions(data[1], std::string_view(reinterpret_cast<const char*>(data + 2), size - 2));
    }
    return 0;
}
