// A stateful target for the server as a whole: a client core and a server
// core run a real key exchange in memory, then the client core seals each
// message of the input's sequence and the server opens it and routes it
// through the session layer sshd uses (channel/session/session_layer.hpp):
// the ssh-userauth service to a server_auth machine until authentication
// succeeds (failure replies held for their minimum delay on the fuzz
// clock), then 80..127 to a connection core whose events (table entries
// for opens and global requests) are answered as sshd's sessions would
// (accepting sessions, decoding pty-req, env, exec, window-change...,
// consuming data, sending output). Everything the server sends goes back to
// the client core, so rekeys (started by the server's RekeyLimit or by the
// fuzzer's KEXINIT) run for real in the middle of the sequence.
//
// Input: byte 0 = cipher x MAC selector, byte 1 = options (pair_from() in
// fuzz_common.hpp), byte 2 = answers (bit 0: passwords are refused; bit 1:
// keyboard-interactive succeeds at once; bit 2: connection answers vary),
// then the message sequence (split_messages()). A message starting with
// 0xff is the signing directive of userauth_server_fuzz: the rest is a
// publickey USERAUTH_REQUEST that the harness signs (with the fuzz user
// key) over this session's identifier, so the fuzzer gets past
// authentication. Users: "alice" (key and password "pw"), anyone else is
// unknown.
// Invariants: the connection layer is reached only after an authentication
// the harness can account for; two Longhaul cores always complete their
// exchange; no crash, leak or undefined behaviour anywhere below.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "fuzz/fuzz_channel.hpp"
#include "fuzz/fuzz_common.hpp"

#include "channel/session/session_layer.hpp"
#include "common/auth/messages.hpp"

using namespace longhaul;
using namespace longhaul::fuzz;

namespace {

const private_key& user_key()
{
    static const private_key k = ed25519_from_seed(1);
    return k;
}

class server_program {
public:
    server_program(transport& t, std::uint8_t answers) : answers_(answers), layer_(t, session_role::server)
    {
        // Every channel type and global request goes to the harness's
        // answers (sshd's own entries refuse all but "session").
        layer_.channel_types().set_unknown([this](connection& c, channel_id id, std::string_view type, byte_span data) {
            answer(c, peer_asks(connection_event_type::open_request, id, type, false, data));
        });
        layer_.global_requests().set_unknown([this](connection& c, std::string_view name, bool want_reply, byte_span data) {
            answer(c, peer_asks(connection_event_type::global_request, 0, name, want_reply, data));
        });
        // Authentication starts after the first key exchange, as in sshd.
        layer_.start_server_auth(make_config(t), make_policy());
    }

    void on_event(const transport_event& ev, steady_time now)
    {
        now_ = now;
        act(layer_.handle(ev, now));
        pump();
    }

    void tick(steady_time now)
    {
        now_ = now;
        pump(); // held authentication replies whose delay has passed
        if (layer_.conn())
            layer_.conn()->tick(now);
    }

    bool authenticated() const noexcept { return authenticated_; }

private:
    static server_auth_config make_config(transport& t)
    {
        server_auth_config cfg;
        cfg.remote_ip = "192.0.2.1";
        cfg.remote_port = 50000;
        cfg.session_id = to_bytes(t.session_id());
        cfg.host_key_blob = server_host_key_blob(t);
        cfg.timing_secret = 7;
        return cfg;
    }

    static server_auth_policy make_policy()
    {
        server_auth_policy p;
        p.lookup_user = [](std::string_view u) {
            user_lookup l;
            l.status = u == "alice" ? user_status::valid : user_status::unknown;
            return l;
        };
        p.key_allowed = [](std::string_view, const public_key& k, bool) {
            key_decision d;
            d.allowed = k == user_key().public_part();
            return d;
        };
        return p;
    }

    // The event the connection core reported, rebuilt from a table entry's arguments.
    static connection_event peer_asks(connection_event_type type, channel_id id, std::string_view name, bool want_reply,
                                      byte_span data)
    {
        connection_event e;
        e.type = type;
        e.channel = id;
        e.name = name;
        e.want_reply = want_reply;
        e.data = data;
        return e;
    }

    void pump()
    {
        for (auto e = layer_.poll(now_); e.type != session_event_type::none; e = layer_.poll(now_))
            act(e);
    }

    void answer(connection& c, const connection_event& e)
    {
        // The connection layer is reached only after an authentication the
        // harness accounted for.
        check(authenticated_);
        answer_connection_event(c, e, (answers_ & 4) ? ++count_ : 0, now_);
        check_channels(c);
    }

    void act(const session_event& e)
    {
        switch (e.type) {
        case session_event_type::server_auth: answer_auth(*e.server_auth); break;
        case session_event_type::authenticated:
            check(e.server_auth->user == "alice");
            authenticated_ = true;
            layer_.open_connection({});
            break;
        case session_event_type::channel: answer(*layer_.conn(), e.channel); break;
        default: break;
        }
    }

    void answer_auth(const server_auth_event& ev)
    {
        server_auth& auth = *layer_.server_auth_machine();
        switch (ev.type) {
        case server_auth_event_type::check_password:
            auth.answer_password((answers_ & 1) == 0 && as_string_view(ev.password.span()) == "pw");
            break;
        case server_auth_event_type::kbdint_start:
        case server_auth_event_type::kbdint_respond: {
            kbdint_reply r;
            r.result = (answers_ & 2) || ev.type == server_auth_event_type::kbdint_respond
                           ? kbdint_reply::kind::success
                           : kbdint_reply::kind::prompts;
            r.prompts = {{"Password: ", false}};
            auth.answer_kbdint(r);
            break;
        }
        default: break;
        }
    }

    std::uint8_t answers_;
    session_layer layer_;
    steady_time now_{};
    bool authenticated_ = false;
    std::uint32_t count_ = 0;
};

std::optional<bytes> signed_request(byte_span body, byte_span session_id)
{
    bytes with_number{msg::userauth_request};
    with_number.insert(with_number.end(), body.begin(), body.end());
    auto req = userauth_request::decode(with_number);
    if (!req)
        return std::nullopt;
    auto* pk = std::get_if<userauth_publickey_data>(&req->data);
    if (pk == nullptr)
        return std::nullopt;
    pk->has_signature = true;
    on_side s(harness_side);
    auto sig = user_key().sign(pk->algorithm, publickey_signed_data(session_id, *req));
    pk->signature = sig ? *sig : bytes{};
    return req->encode();
}

void run(std::uint8_t selector, std::uint8_t options, std::uint8_t answers, byte_span messages)
{
    auto p = established_pair(selector, options, false);
    server_program srv(*p->server, answers);
    auto handler = [&](const transport_event& ev) { srv.on_event(ev, p->now); };
    // The client core learns of success as ssh does (USERAUTH_SUCCESS).
    auto client_handler = [&](const transport_event& ev) {
        if (ev.type == transport_event_type::payload && !ev.payload.empty() && ev.payload[0] == 52)
            p->client->user_authenticated();
    };
    const bytes session(p->client->session_id().begin(), p->client->session_id().end());
    for (const auto& m : split_messages(messages, 96)) {
        if (m.empty())
            continue;
        {
            on_side s(client_side);
            if (m[0] == 0xff) {
                if (auto req = signed_request(byte_span(m).subspan(1), session))
                    (void)p->client->send(*req);
            } else {
                (void)p->client->send(m);
            }
        }
        p->deliver(*p->client, *p->server, server_side, handler);
        p->deliver(*p->server, *p->client, client_side, client_handler);
        if (p->server->closed())
            break;
        p->now += std::chrono::milliseconds(5);
        on_side s(server_side);
        srv.tick(p->now);
    }
    on_side s(server_side);
    p->server->input_eof();
    core_pair::drain(*p->server, handler);
}

// ---------------------------------------------------------------- seeds

bytes service(std::string_view name)
{
    bytes m;
    wire_writer(m).u8(msg::service_request).string(name);
    return m;
}

bytes sign_directive(std::string_view user)
{
    bytes m{0xff};
    wire_writer(m).string(user).string("ssh-connection").string("publickey").boolean(true).string("ssh-ed25519")
        .string(user_key().public_part().blob()).string(bytes{});
    return m;
}

bytes password(std::string_view user, std::string_view pw)
{
    bytes m;
    wire_writer(m).u8(msg::userauth_request).string(user).string("ssh-connection").string("password").boolean(false)
        .string(pw);
    return m;
}

bytes kbdint(std::string_view user)
{
    bytes m;
    wire_writer(m).u8(msg::userauth_request).string(user).string("ssh-connection").string("keyboard-interactive")
        .string("").string("");
    return m;
}

bytes channel_open(std::string_view type, std::uint32_t sender)
{
    bytes m;
    wire_writer(m).u8(msg::channel_open).string(type).u32(sender).u32(2 * 1024 * 1024).u32(32768);
    return m;
}

bytes channel_request(std::uint32_t ch, std::string_view name, bool want, byte_span data)
{
    bytes m;
    wire_writer(m).u8(msg::channel_request).u32(ch).string(name).boolean(want).raw(data);
    return m;
}

bytes words(std::uint8_t type, std::initializer_list<std::uint32_t> ws)
{
    bytes m{type};
    wire_writer w(m);
    for (auto x : ws)
        w.u32(x);
    return m;
}

bytes data_msg(std::uint32_t ch, std::size_t n)
{
    bytes m;
    wire_writer(m).u8(msg::channel_data).u32(ch).string(bytes(n, 'd'));
    return m;
}

std::vector<bytes> session_messages()
{
    pty_request pty{"xterm-256color", 120, 40, 0, 0, encode_terminal_modes({{1, 3}, {3, 127}, {53, 1}})};
    bytes global;
    wire_writer(global).u8(msg::global_request).string("no-more-sessions@openssh.com").boolean(false);
    return {
        global,
        channel_open("session", 0),
        channel_request(0, "pty-req", true, pty.encode()),
        channel_request(0, "env", false, env_request{"LANG", "C.UTF-8"}.encode()),
        channel_request(0, "shell", true, {}),
        data_msg(0, 1000),
        words(msg::channel_window_adjust, {0, 1 << 20}),
        channel_request(0, "window-change", false, window_change_request{80, 24, 0, 0}.encode()),
        data_msg(0, 3000),
        data_msg(0, 2000),
        words(msg::channel_eof, {0}),
        words(msg::channel_close, {0}),
        channel_open("direct-tcpip", 1),
        channel_open("session", 2),
        channel_request(0, "subsystem", true, string_request{"sftp"}.encode()),
    };
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](std::uint8_t sel, std::uint8_t opt, std::uint8_t answers, const std::vector<bytes>& ms) {
        write_seed(dir, "seed-" + std::to_string(n++), with_prefix({sel, opt, answers}, join_messages(ms)));
    };
    const auto session = session_messages();
    auto with_login = [&](const bytes& login) {
        std::vector<bytes> v = {service("ssh-userauth"), login};
        v.insert(v.end(), session.begin(), session.end());
        return v;
    };
    const auto& combos = cipher_mac_combos();
    const std::uint8_t last = static_cast<std::uint8_t>(combos.size() - 1);
    put(0, 0, 0, with_login(sign_directive("alice")));
    put(last, 1, 4, with_login(sign_directive("alice")));
    put(3, 32 | 8, 0, with_login(sign_directive("alice")));
    put(1, 0, 0, with_login(password("alice", "pw")));
    put(2, 16, 2, with_login(kbdint("alice")));
    // Out of place: connection messages before authentication, a second
    // service request, a wrong password, a KEXINIT in the middle.
    std::vector<bytes> odd = {channel_open("session", 0), service("ssh-userauth"), password("alice", "no"),
                              password("mallory", "pw"), sign_directive("alice"), service("ssh-userauth")};
    put(0, 0, 0, odd);
    kexinit_message k;
    k.lists[kex_algorithms] = "curve25519-sha256";
    k.lists[server_host_key_algorithms] = "ssh-ed25519";
    k.lists[encryption_c2s] = k.lists[encryption_s2c] = default_ciphers();
    k.lists[mac_c2s] = k.lists[mac_s2c] = default_macs();
    k.lists[compression_c2s] = k.lists[compression_s2c] = "none";
    auto rekeyed = with_login(sign_directive("alice"));
    rekeyed.insert(rekeyed.begin() + 4, k.encode());
    put(0, 0, 0, rekeyed);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    install_deterministic_openssl();
    (void)host_keys();
    (void)user_key();
    maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 3)
        return 0;
    reset_randomness();
    run(data[0], data[1], data[2], byte_span(data + 3, size - 3));
    return 0;
}
