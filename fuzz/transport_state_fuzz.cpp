// Fuzzes the transport hand-off as sshd's privileged monitor sees it: the
// input is an encoded transport_state from a (possibly compromised)
// sandboxed child.
//
// decode_transport_state() must fail cleanly or return a state that the
// import constructor turns into an open, established core. That core must
// export the same state again at once (nothing was lost or invented on the
// way), and then run: its unread input is processed (mostly failing to
// open, which must close it cleanly), it sends a message and starts a key
// exchange under the imported keys and counters. Re-encoding a decoded
// state and decoding it again must give the same bytes.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh): real states
// exported from in-memory connections right after user authentication,
// with client packets read and not yet processed, under several ciphers,
// MACs, compression and strict kex choices, from either side.
#include "fuzz/fuzz_common.hpp"

#include "common/transport/transport_state.hpp"

using namespace longhaul;
using namespace longhaul::fuzz;

namespace {

transport_config config_for(transport_role role)
{
    transport_config c;
    c.role = role;
    c.kex_algorithms = "curve25519-sha256";
    c.host_key_algorithms = "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512";
    c.compression = "none,zlib@openssh.com";
    if (role == transport_role::server)
        c.host_keys = host_keys().all();
    return c;
}

void run_core(transport& t)
{
    for (int i = 0; i < 16; ++i) {
        auto ev = t.poll();
        trace_event("imported", ev);
        if (ev.type == transport_event_type::none || ev.type == transport_event_type::disconnected)
            break;
    }
}

void fuzz_state(byte_span input)
{
    auto decoded = decode_transport_state(input);
    if (!decoded)
        return;
    check(validate_transport_state(*decoded).has_value());
    const bytes encoded = encode_transport_state(*decoded);
    auto again = decode_transport_state(encoded);
    check(again.has_value() && encode_transport_state(*again) == encoded);

    fixed_random rng(5);
    const transport_role role = decoded->role;
    transport t(config_for(role), rng, steady_time{}, std::move(*decoded));
    check(!t.closed() && t.established() && t.output_size() == 0);
    auto exported = t.export_state();
    check(exported.has_value() && encode_transport_state(*exported) == encoded);

    run_core(t);
    if (t.closed())
        return;
    const std::uint8_t m[] = {94, 1, 2, 3};
    check(t.send(m).has_value());
    (void)t.output();
    t.request_rekey();
    run_core(t);
    t.consume_output(t.output().size());
}

// ---------------------------------------------------------------- seeds

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto write = [&](const transport_state& s) {
        write_seed(dir, "state-" + std::to_string(n++), encode_transport_state(s));
    };
    // options: see pair_from() (bit 0: zlib@openssh.com, bit 4: strict kex off).
    const std::pair<std::string, std::string> families[] = {{"chacha20-poly1305@openssh.com", ""},
                                                            {"aes128-gcm@openssh.com", ""},
                                                            {"aes256-ctr", "hmac-sha2-256-etm@openssh.com"},
                                                            {"aes128-ctr", "hmac-sha2-512"},
                                                            {"aes128-ctr", "umac-64-etm@openssh.com"}};
    const auto& combos = cipher_mac_combos();
    for (const auto& family : families) {
        std::size_t selector = 0;
        while (selector < combos.size() && combos[selector] != family)
            ++selector;
        check(selector < combos.size());
        for (std::uint8_t options : {0, 1, 16, 17}) {
            reset_randomness();
            auto p = established_pair(static_cast<std::uint8_t>(selector), options);
            for (std::uint8_t i = 0; i < 3; ++i) {
                on_side s(client_side);
                const std::uint8_t msg[] = {94, i, 0, 0, 0, 7, 'c', 'h', 'a', 'n', 'n', 'e', 'l'};
                check(p->client->send(msg).has_value());
            }
            // The last packet only in part: the rest would come later.
            bytes out = core_pair::take_output(*p->client);
            p->server->feed(byte_span(out).first(out.size() - 5));
            auto s = p->server->export_state();
            check(s.has_value());
            write(*s);
            if (options == 0) {
                // The client side, with nothing unread.
                auto c = p->client->export_state();
                check(c.has_value());
                write(*c);
            }
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    install_deterministic_openssl();
    (void)host_keys();
    maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    reset_randomness();
    fuzz_state(byte_span(data, size));
    return 0;
}
