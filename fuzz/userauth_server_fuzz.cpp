// Fuzzes user authentication as the server sees it: a server_auth machine,
// configured by the input, fed a sequence of client messages, with its
// questions (passwords, keyboard-interactive) answered as sshd's backends
// would, at once or only after the next message arrives.
//
// Input: byte 0 = settings, byte 1 = answers, then a message sequence
// (split_messages() in fuzz_common.hpp).
//   settings: bit 0 publickey off, bit 1 password off, bit 2 keyboard-
//     interactive off, bits 3-4 PermitRootLogin (yes, prohibit-password,
//     forced-commands-only, no), bits 5-6 AuthenticationMethods (any;
//     "publickey,password"; "publickey,keyboard-interactive:pam" and
//     "password,publickey"; "publickey,publickey"), bit 7 MaxAuthTries 2,
//     PermitEmptyPasswords yes and a Banner
//   answers: bit 0 answer password and keyboard-interactive questions only
//     after the next message (input arrives while a check is pending),
//     bits 1-7 the keyboard-interactive script (prompts, success, failure)
// A message starting with 0xff is a signing directive: the rest is decoded
// as a USERAUTH_REQUEST for publickey and sent with a real signature (by the
// fuzz key whose blob it names, else by key A) over this session, so the
// fuzzer can complete publickey and multi-method chains.
// Users: alice (key A; password "pw"), carol (Match: "publickey,password"),
// dave (refused by the account check), root (key B, forced command), bob
// (refused by AllowUsers); anyone else does not exist.
// Invariants: authentication completes only for a valid user whose account
// check passed, with a method chain that satisfies AuthenticationMethods,
// by publickey only with a key the policy allowed, as root only as
// PermitRootLogin allows; nothing is sent after the machine finished.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "fuzz/fuzz_common.hpp"

#include "common/auth/messages.hpp"
#include "common/auth/server_auth.hpp"

#include <deque>

using namespace longhaul;
using namespace longhaul::fuzz;

namespace {

const private_key& key_a()
{
    static const private_key k = ed25519_from_seed(1);
    return k;
}

const private_key& key_b() { return *host_keys().ecdsa; }

const bytes& session_id()
{
    static const bytes id(32, 0x5a);
    return id;
}

const std::vector<std::vector<std::string>>& method_choices()
{
    static const std::vector<std::vector<std::string>> m = {
        {}, {"publickey,password"}, {"publickey,keyboard-interactive:pam", "password,publickey"}, {"publickey,publickey"}};
    return m;
}

server_auth_settings settings_from(std::uint8_t s)
{
    server_auth_settings st;
    st.pubkey_authentication = (s & 1) == 0;
    st.password_authentication = (s & 2) == 0;
    st.kbd_interactive_authentication = (s & 4) == 0;
    static const permit_root_login roots[] = {permit_root_login::yes, permit_root_login::prohibit_password,
                                              permit_root_login::forced_commands_only, permit_root_login::no};
    st.root_login = roots[(s >> 3) & 3];
    // Hostbased is on: its requests are parsed and refused or (key A from
    // client.example.'s alice, which the fuzzer cannot sign) allowed.
    st.hostbased_authentication = true;
    st.authentication_methods = method_choices()[(s >> 5) & 3];
    if (s & 0x80) {
        st.max_auth_tries = 2;
        st.permit_empty_passwords = true;
    }
    st.banner = (s & 0x80) ? "Authorized uses only\n" : "";
    return st;
}

// Whether the completed chain satisfies one configured list, in order.
bool chain_satisfies(const std::vector<authenticated_method>& done, const std::vector<std::string>& configured)
{
    if (configured.empty() || (configured.size() == 1 && configured[0] == "any"))
        return !done.empty();
    for (const auto& list : configured) {
        std::vector<std::string> want;
        std::size_t start = 0;
        for (;;) {
            auto comma = list.find(',', start);
            std::string m = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            want.push_back(m.substr(0, m.find(':')));
            if (comma == std::string::npos)
                break;
            start = comma + 1;
        }
        if (want.size() != done.size())
            continue;
        bool ok = true;
        for (std::size_t i = 0; i < want.size(); ++i) {
            std::string got = done[i].method;
            if (got == "publickey-hostbound-v00@openssh.com")
                got = "publickey";
            ok &= got == want[i];
        }
        if (ok)
            return true;
    }
    return false;
}

// The signing directive: a publickey request signed for this session.
std::optional<bytes> signed_request(byte_span body)
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
    pk->signature.clear();
    const private_key& k = pk->key_blob == key_b().public_part().blob() ? key_b() : key_a();
    on_side s(harness_side);
    auto sig = k.sign(pk->algorithm, publickey_signed_data(session_id(), *req));
    if (sig)
        pk->signature = *sig;
    return req->encode();
}

struct pending_answer {
    bool password = false;
    bool ok = false;
    kbdint_reply kbd;
};

void run(std::uint8_t settings_byte, std::uint8_t answers, byte_span messages)
{
    server_auth_config cfg;
    cfg.remote_ip = "192.0.2.1";
    cfg.remote_port = 50000;
    cfg.session_id = session_id();
    cfg.host_key_blob = host_keys().ed25519->public_part().blob();
    cfg.timing_secret = 42;
    cfg.settings = settings_from(settings_byte);
    const server_auth_settings global = cfg.settings;
    server_auth_settings carol = global;
    carol.authentication_methods = {"publickey,password"};
    carol.banner = "carol's banner\n";

    server_auth_policy policy;
    policy.lookup_user = [&](std::string_view u) {
        user_lookup l;
        if (u == "alice" || u == "dave" || u == "root") {
            l.status = user_status::valid;
            l.is_root = u == "root";
        } else if (u == "carol") {
            l.status = user_status::valid;
            l.settings = carol;
        } else if (u == "bob") {
            l.status = user_status::refused;
        }
        return l;
    };
    policy.key_allowed = [](std::string_view u, const public_key& k, bool) {
        key_decision d;
        if (u == "root") {
            d.allowed = k == key_b().public_part();
            d.forced_command = true;
        } else {
            d.allowed = k == key_a().public_part() || (u == "carol" && k == key_b().public_part());
        }
        return d;
    };
    policy.host_allowed = [](std::string_view u, const public_key& k, const certificate* cert, std::string_view host,
                             std::string_view cuser) {
        if (cert != nullptr)
            return false;
        return u == "alice" && k == key_a().public_part() && host == "client.example." && cuser == "alice";
    };
    policy.account_check = [](std::string_view u) {
        account_decision d;
        d.allowed = u != "dave";
        if (!d.allowed)
            d.message = "Your account has expired; please contact your system administrator.\n";
        return d;
    };

    server_auth s(cfg, policy);
    std::deque<pending_answer> later;
    int kbd_round = 0;
    bool finished_seen = false;
    auto drain = [&] {
        for (auto ev = s.poll(); ev.type != server_auth_event_type::none; ev = s.poll()) {
            if (tracing())
                std::fprintf(stderr, "auth event %d %s %s\n", static_cast<int>(ev.type), ev.user.c_str(),
                             ev.text.c_str());
            switch (ev.type) {
            case server_auth_event_type::send:
                check(!finished_seen);
                check(!ev.payload.empty());
                break;
            case server_auth_event_type::check_password: {
                pending_answer a;
                a.password = true;
                a.ok = as_string_view(ev.password.span()) == "pw" ||
                       (global.permit_empty_passwords && ev.password.size() == 0);
                if (answers & 1)
                    later.push_back(a);
                else
                    s.answer_password(a.ok);
                break;
            }
            case server_auth_event_type::kbdint_start:
            case server_auth_event_type::kbdint_respond: {
                pending_answer a;
                const int step = (answers >> (1 + (kbd_round++ % 3) * 2)) & 3;
                a.kbd.result = step == 0   ? kbdint_reply::kind::prompts
                               : step == 1 ? kbdint_reply::kind::success
                                           : kbdint_reply::kind::failure;
                a.kbd.name = "pam";
                a.kbd.prompts = {{"Password: ", false}, {"Code: ", true}};
                if (answers & 1)
                    later.push_back(std::move(a));
                else
                    s.answer_kbdint(std::move(a.kbd));
                break;
            }
            case server_auth_event_type::authenticated: {
                check(!ev.methods.empty());
                check(ev.user == "alice" || ev.user == "carol" || ev.user == "root");
                const auto& configured = ev.user == "carol" ? carol.authentication_methods : global.authentication_methods;
                check(chain_satisfies(ev.methods, configured));
                for (const auto& m : ev.methods) {
                    if (m.method == "publickey" || m.method == "publickey-hostbound-v00@openssh.com") {
                        check(m.key.has_value());
                        if (ev.user == "root")
                            check(*m.key == key_b().public_part());
                        else
                            check(*m.key == key_a().public_part() ||
                                  (ev.user == "carol" && *m.key == key_b().public_part()));
                    } else if (m.method == "hostbased") {
                        check(ev.user == "alice" && m.key && *m.key == key_a().public_part());
                    } else if (m.method == "password" || m.method == "keyboard-interactive") {
                        if (ev.user == "root")
                            check(global.root_login == permit_root_login::yes);
                    }
                }
                if (ev.user == "root")
                    check(global.root_login != permit_root_login::no);
                finished_seen = true;
                break;
            }
            case server_auth_event_type::disconnect: finished_seen = true; break;
            default: break;
            }
        }
    };
    drain();
    for (const auto& m : split_messages(messages)) {
        if (!m.empty() && m[0] == 0xff) {
            if (auto req = signed_request(byte_span(m).subspan(1)))
                s.handle(*req, 3);
        } else {
            s.handle(m, 3);
        }
        drain();
        // Answers held back arrive after the next message.
        while (!later.empty()) {
            auto a = std::move(later.front());
            later.pop_front();
            if (a.password)
                s.answer_password(a.ok);
            else
                s.answer_kbdint(std::move(a.kbd));
            drain();
        }
    }
    (void)s.connection_closed_line();
    (void)s.disconnected_line();
}

// ---------------------------------------------------------------- seeds

bytes request(std::string_view user, std::string_view method, const std::function<void(wire_writer&)>& rest = {})
{
    bytes m;
    wire_writer w(m);
    w.u8(msg::userauth_request).string(user).string("ssh-connection").string(method);
    if (rest)
        rest(w);
    return m;
}

bytes pk_query(std::string_view user, const private_key& k, std::string_view alg)
{
    return request(user, "publickey", [&](wire_writer& w) { w.boolean(false).string(alg).string(k.public_part().blob()); });
}

// The signing directive for a publickey request with the key (body without
// the message number: the harness adds it, and the signature).
bytes pk_sign(std::string_view user, const private_key& k, std::string_view alg, bool hostbound = false)
{
    bytes m{0xff};
    wire_writer w(m);
    w.string(user).string("ssh-connection").string(hostbound ? "publickey-hostbound-v00@openssh.com" : "publickey");
    w.boolean(true).string(alg).string(k.public_part().blob());
    if (hostbound)
        w.string(host_keys().ed25519->public_part().blob());
    w.string(bytes{});
    return m;
}

bytes password(std::string_view user, std::string_view pw)
{
    return request(user, "password", [&](wire_writer& w) { w.boolean(false).string(pw); });
}

bytes kbdint(std::string_view user)
{
    return request(user, "keyboard-interactive", [&](wire_writer& w) { w.string("").string(""); });
}

bytes info_response(std::initializer_list<std::string_view> answers)
{
    bytes m;
    wire_writer w(m);
    w.u8(61).u32(static_cast<std::uint32_t>(answers.size()));
    for (auto a : answers)
        w.string(a);
    return m;
}

bytes service(std::string_view name)
{
    bytes m;
    wire_writer(m).u8(msg::service_request).string(name);
    return m;
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](std::uint8_t settings, std::uint8_t answers, const std::vector<bytes>& ms) {
        write_seed(dir, "seed-" + std::to_string(n++), with_prefix({settings, answers}, join_messages(ms)));
    };
    const bytes svc = service("ssh-userauth");
    // Publickey query and signature; hostbound; with AuthenticationMethods chains.
    put(0, 0, {svc, request("alice", "none"), pk_query("alice", key_a(), "ssh-ed25519"),
               pk_sign("alice", key_a(), "ssh-ed25519")});
    put(0, 0, {svc, pk_sign("alice", key_a(), "ssh-ed25519", true)});
    put(1 << 5, 0, {svc, pk_sign("alice", key_a(), "ssh-ed25519"), password("alice", "pw")});
    put(2 << 5, 0x02, {svc, pk_sign("alice", key_a(), "ssh-ed25519"), kbdint("alice"), info_response({"pw", "1"})});
    put(2 << 5, 0, {svc, password("alice", "pw"), pk_sign("alice", key_a(), "ssh-ed25519")});
    put(3 << 5, 0, {svc, pk_sign("alice", key_a(), "ssh-ed25519"), pk_sign("alice", key_b(), "ecdsa-sha2-nistp256")});
    put(0, 0, {svc, pk_sign("carol", key_b(), "ecdsa-sha2-nistp256"), password("carol", "pw")});
    // Passwords: right, wrong, empty, root under each PermitRootLogin, a change request.
    put(0, 0, {svc, password("alice", "wrong"), password("alice", "pw")});
    put(0, 1, {svc, password("alice", "pw"), request("alice", "none")});
    put(0x80, 0, {svc, password("alice", "")});
    for (std::uint8_t root = 0; root < 4; ++root) {
        put(static_cast<std::uint8_t>(root << 3), 0, {svc, password("root", "pw")});
        put(static_cast<std::uint8_t>(root << 3), 0, {svc, pk_sign("root", key_b(), "ecdsa-sha2-nistp256")});
    }
    put(0, 0, {svc, request("alice", "password", [](wire_writer& w) { w.boolean(true).string("pw").string("new"); })});
    // Keyboard-interactive: prompts then success; failure; answers held back.
    put(0, 0x02 | 0x00, {svc, kbdint("alice"), info_response({"pw", "123456"})});
    put(0, 0x0c, {svc, kbdint("alice"), info_response({"x", "y"}), kbdint("alice"), info_response({"pw", "1"})});
    put(0, 0x03, {svc, kbdint("root"), info_response({"pw", "1"}), request("root", "none")});
    // Users that cannot log in; too many failures; a wrong service.
    put(0, 0, {svc, password("dave", "pw"), pk_sign("dave", key_a(), "ssh-ed25519")});
    put(0, 0, {svc, password("bob", "pw"), password("nosuchuser", "pw")});
    put(0x80, 0, {svc, password("alice", "a"), password("alice", "b"), password("alice", "c")});
    put(0, 0, {service("ssh-connection")});
    put(0, 0, {svc, request("alice", "hostbased"), request("alice", "gssapi-with-mic"),
               request("alice", "none"), request("alice2", "none")});
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    install_deterministic_openssl();
    (void)host_keys();
    (void)key_a();
    maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    reset_randomness();
    run(data[0], data[1], byte_span(data + 2, size - 2));
    return 0;
}
