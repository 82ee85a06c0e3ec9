// libFuzzer target for everything that decodes peer bytes in the transport
// and connection layers: the version exchange and packet framing of a
// server and a client core, packet opening under every negotiated cipher
// and MAC with fixed keys, the key exchange reply parsers, KEXINIT, and
// sequences of connection-protocol messages into a connection core.
//
// The first input byte picks the path; the rest is the peer's bytes.
#include "common/crypto/packet_cipher.hpp"
#include "common/transport/key_exchange.hpp"
#include "common/transport/packet_codec.hpp"
#include "common/transport/transport.hpp"
#include "channel/connection.hpp"
#include "common/wire.hpp"

#include <cstddef>
#include <cstdint>
#include <random>

using namespace longhaul;

namespace {

class fixed_random final : public random_source {
public:
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = static_cast<std::uint8_t>(gen_());
    }

private:
    std::mt19937 gen_{1};
};

const std::shared_ptr<const private_key>& host_key()
{
    static const auto key = std::make_shared<const private_key>(*private_key::generate(key_type::ed25519));
    return key;
}

void drive(transport& t, byte_span data)
{
    // Feed in two pieces so split handling is exercised too.
    const std::size_t cut = data.size() / 2;
    for (byte_span piece : {data.first(cut), data.subspan(cut)}) {
        t.feed(piece);
        for (int i = 0; i < 10000; ++i) {
            auto ev = t.poll();
            if (ev.type == transport_event_type::none || ev.type == transport_event_type::disconnected)
                break;
            if (ev.type == transport_event_type::host_key)
                t.accept_host_key();
        }
    }
    t.input_eof();
    for (int i = 0; i < 10000 && t.poll().type != transport_event_type::none; ++i) {
    }
}

void fuzz_core(transport_role role, byte_span data)
{
    fixed_random rng;
    transport_config cfg;
    cfg.role = role;
    if (role == transport_role::server)
        cfg.host_keys = {host_key()};
    transport t(cfg, rng, steady_time{});
    if (role == transport_role::client)
        t.feed(as_bytes("SSH-2.0-OpenSSH_9.2p1\r\n"));
    drive(t, data);
}

void fuzz_open(std::uint8_t selector, byte_span data)
{
    std::vector<std::pair<std::string_view, std::string_view>> combos;
    for (auto c : supported_ciphers()) {
        if (find_cipher(c)->aead)
            combos.emplace_back(c, "");
        else
            for (auto m : supported_macs())
                combos.emplace_back(c, m);
    }
    auto [cipher, mac] = combos[selector % combos.size()];
    const cipher_info* ci = find_cipher(cipher);
    direction_keys keys;
    keys.iv = secret_bytes(ci->iv_size);
    keys.enc_key = secret_bytes(ci->key_size);
    if (!mac.empty())
        keys.mac_key = secret_bytes(find_mac(mac)->key_size);
    auto pc = make_packet_cipher(cipher, mac, keys, cipher_direction::open);
    if (!pc)
        return;
    packet_receiver rx;
    rx.set_cipher(std::move(*pc));
    byte_buffer in;
    in.append(data);
    for (int i = 0; i < 64; ++i) {
        auto r = rx.next(in);
        if (!r || !*r)
            break;
    }
}

void fuzz_kex_reply(std::uint8_t selector, byte_span data)
{
    const auto& methods = supported_kex_methods();
    const kex_method* m = find_kex_method(methods[selector % methods.size()]);
    kex_context ctx;
    ctx.v_c = "SSH-2.0-a";
    ctx.v_s = "SSH-2.0-b";
    ctx.host_key_algorithm = "ssh-ed25519";
    ctx.we_need = ctx.dh_need = 16;
    auto k = key_exchange::client(*m, ctx);
    if (!k)
        return;
    std::vector<bytes> out;
    if (!(*k)->start(out))
        return;
    // The reply message: the method's expected number, then the fuzzer's bytes.
    bytes reply{static_cast<std::uint8_t>(m->family == kex_family::dh_gex ? msg::kex_dh_gex_group : msg::kexdh_reply)};
    reply.insert(reply.end(), data.begin(), data.end());
    (void)(*k)->handle(reply, out);
}

// A sequence of connection-protocol messages (uint16 length, then the
// message) into a connection core: opens, data, window adjusts, requests in
// any order, against whatever channels the earlier messages created.
void fuzz_connection(byte_span data)
{
    fixed_random rng;
    transport_config cfg;
    transport t(cfg, rng, steady_time{});
    connection c(t);
    steady_time now{};
    for (int i = 0; i < 256 && data.size() >= 2; ++i) {
        const std::size_t len = std::min<std::size_t>((std::size_t(data[0]) << 8 | data[1]), data.size() - 2);
        byte_span m = data.subspan(2, len);
        data = data.subspan(2 + len);
        if (m.empty())
            continue;
        bytes msg(m.begin(), m.end());
        msg[0] = static_cast<std::uint8_t>(80 + msg[0] % 21); // 80..100
        auto ev = c.handle(msg, now);
        // Exercise the replies a program would give.
        if (ev.type == connection_event_type::open_request)
            (i & 1) ? c.accept(ev.channel) : c.reject(ev.channel, open_failure_reason::connect_failed, "no");
        else if (ev.type == connection_event_type::data)
            c.consumed(ev.channel, ev.data.size(), now);
        else if (ev.type == connection_event_type::request && ev.want_reply)
            c.reply(ev.channel, true);
        else if (ev.type == connection_event_type::close)
            c.close(ev.channel);
        if (t.closed())
            break;
        now += std::chrono::milliseconds(3);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    const std::uint8_t mode = data[0];
    const std::uint8_t selector = data[1];
    byte_span rest(data + 2, size - 2);
    switch (mode % 6) {
    case 0: fuzz_core(transport_role::server, rest); break;
    case 1: fuzz_core(transport_role::client, rest); break;
    case 2: fuzz_open(selector, rest); break;
    case 3: fuzz_kex_reply(selector, rest); break;
    case 4: (void)kexinit_message::decode(rest); break;
    case 5: fuzz_connection(rest); break;
    }
    return 0;
}
