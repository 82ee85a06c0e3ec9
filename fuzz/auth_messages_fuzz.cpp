// Fuzzes user authentication: the message decoders, the agent protocol
// decoders, and both state machines fed hostile message sequences.
//
// The first byte picks a mode, the rest is the input:
//   0  one payload, read as every message: whatever decodes must re-encode
//      to bytes that decode to the same message
//   1  agent replies: identities answer, sign response and extension (session-bind) reply decoders
//   2  a message sequence (each: 1-byte length, then bytes; 255 means a
//      2-byte length follows) fed to a server_auth whose questions are
//      answered at once; the server must never accept a publickey it could
//      not verify, and stays silent once finished
//   3  the same, fed to a client_auth with a key, an agent identity and
//      answers to every prompt
// Modes 2 and 3 start with the service exchange done for them, so the
// fuzzer reaches the method handlers at once.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh) writes every
// message encoded, agent replies, and request/reply sequences for both
// machines; the committed corpus is fuzz/corpus/auth_messages_fuzz.
#include "common/auth/agent_protocol.hpp"
#include "common/auth/client_auth.hpp"
#include "common/auth/messages.hpp"
#include "common/auth/server_auth.hpp"
#include "common/wire.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

using namespace longhaul;

namespace {

void check(bool ok)
{
    if (!ok)
        std::abort();
}

// A fixed Ed25519 key, so runs are reproducible.
const private_key& fixed_key()
{
    static const private_key key = [] {
        std::uint8_t seed[32];
        for (int i = 0; i < 32; ++i)
            seed[i] = static_cast<std::uint8_t>(i * 7 + 1);
        EVP_PKEY* p = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed, sizeof(seed));
        auto k = private_key::from_evp(p, "fuzz");
        EVP_PKEY_free(p);
        if (!k)
            std::abort();
        return std::move(*k);
    }();
    return key;
}

template <class M>
void round_trip(byte_span payload)
{
    auto m = M::decode(payload);
    if (!m)
        return;
    auto e = m->encode();
    const bytes again(e.data(), e.data() + e.size());
    // Booleans other than 0/1 are re-encoded as 1, so compare decodes.
    auto m2 = M::decode(again);
    check(m2.has_value());
    auto e2 = m2->encode();
    check(bytes(e2.data(), e2.data() + e2.size()) == again);
}

void fuzz_messages(byte_span payload)
{
    if (auto m = userauth_request::decode(payload)) {
        auto e = m->encode_secret();
        auto m2 = userauth_request::decode(e);
        check(m2.has_value());
        check(m2->user == m->user && m2->service == m->service && m2->method == m->method);
        check(m2->data.index() == m->data.index());
        check(to_bytes(m2->encode_secret().span()) == to_bytes(e.span()));
        if (std::holds_alternative<userauth_publickey_data>(m->data))
            check(publickey_signed_data(as_bytes("session"), *m).size() >= 11);
    }
    round_trip<service_request>(payload);
    round_trip<service_accept>(payload);
    round_trip<userauth_failure>(payload);
    round_trip<userauth_success>(payload);
    round_trip<userauth_banner>(payload);
    round_trip<userauth_pk_ok>(payload);
    round_trip<userauth_passwd_changereq>(payload);
    round_trip<userauth_info_request>(payload);
    round_trip<userauth_info_response>(payload);
}

void fuzz_agent(byte_span body)
{
    if (auto ids = agent::decode_identities_answer(body))
        check(ids->size() <= agent::max_identities);
    (void)agent::decode_sign_response(body);
    (void)agent::decode_success(body);
}

// Splits the input into messages.
std::vector<bytes> split(byte_span in)
{
    std::vector<bytes> out;
    std::size_t pos = 0;
    while (pos < in.size() && out.size() < 64) {
        std::size_t n = in[pos++];
        if (n == 255 && pos + 2 <= in.size()) {
            n = std::size_t(in[pos]) << 8 | in[pos + 1];
            pos += 2;
        }
        n = std::min(n, in.size() - pos);
        out.emplace_back(in.begin() + static_cast<std::ptrdiff_t>(pos), in.begin() + static_cast<std::ptrdiff_t>(pos + n));
        pos += n;
    }
    return out;
}

void fuzz_server(byte_span in)
{
    server_auth_config cfg;
    cfg.remote_ip = "192.0.2.1";
    cfg.remote_port = 2222;
    cfg.session_id = {1, 2, 3, 4, 5, 6, 7, 8};
    cfg.host_key_blob = fixed_key().public_part().blob();
    cfg.settings.authentication_methods = in.size() % 3 == 0 ? std::vector<std::string>{"publickey,password"}
                                                             : std::vector<std::string>{};
    cfg.settings.banner = "banner";
    server_auth_policy policy;
    policy.lookup_user = [](std::string_view u) {
        return user_lookup{u == "alice" ? user_status::valid : user_status::unknown, u == "root", std::nullopt};
    };
    policy.key_allowed = [](std::string_view, const public_key& k, bool) {
        key_decision d;
        d.allowed = k == fixed_key().public_part();
        return d;
    };
    server_auth s(cfg, policy);
    s.handle(service_request{"ssh-userauth"}.encode(), 0);
    const bool needs_key = !cfg.settings.authentication_methods.empty();
    std::uint32_t seq = 1;
    int kbd_rounds = 0;
    auto drain = [&] {
        for (auto ev = s.poll(); ev.type != server_auth_event_type::none; ev = s.poll()) {
            switch (ev.type) {
            case server_auth_event_type::check_password:
                s.answer_password(as_string_view(ev.password.span()) == "pw");
                break;
            case server_auth_event_type::kbdint_start:
            case server_auth_event_type::kbdint_respond: {
                kbdint_reply r;
                r.result = ++kbd_rounds % 3 == 0   ? kbdint_reply::kind::success
                           : kbd_rounds % 3 == 1 ? kbdint_reply::kind::prompts
                                                 : kbdint_reply::kind::failure;
                r.prompts = {{"Password: ", false}};
                s.answer_kbdint(r);
                break;
            }
            case server_auth_event_type::authenticated:
                // Nobody can sign with the fixed key for this session: a
                // publickey success would be a forged signature accepted.
                check(!ev.methods.empty());
                for (const auto& m : ev.methods)
                    check(m.method != "publickey");
                check(ev.user == "alice");
                // "publickey,password" cannot complete without a key.
                check(!needs_key);
                break;
            default: break;
            }
        }
    };
    drain();
    for (const auto& m : split(in)) {
        const bool was_closed = s.finished() && !s.authenticated();
        s.handle(m, seq++);
        if (was_closed)
            check(s.poll().type == server_auth_event_type::none);
        drain();
    }
    (void)s.connection_closed_line();
}

void fuzz_client(byte_span in)
{
    client_auth_config cfg;
    cfg.user = "alice";
    cfg.host = "example.org";
    cfg.remote_ip = "192.0.2.1";
    client_identity file;
    file.name = "/k";
    file.key = fixed_key().public_part();
    file.loaded = std::make_shared<const private_key>(fixed_key());
    cfg.identities.push_back(file);
    client_identity agent_id;
    agent_id.name = "agent";
    agent_id.agent = true;
    agent_id.key = fixed_key().public_part();
    cfg.identities.push_back(agent_id);
    client_identity encrypted;
    encrypted.name = "/enc";
    encrypted.load = [](std::optional<std::string_view> p) -> result<private_key> {
        if (p && *p == "x")
            return fixed_key();
        return errc::passphrase_required;
    };
    cfg.identities.push_back(encrypted);
    client_auth_session session;
    session.session_id = {1, 2, 3};
    session.server_sig_algs = "ssh-ed25519,rsa-sha2-512";
    session.hostbound_offered = in.size() % 2 == 0;
    session.host_key_blob = fixed_key().public_part().blob();
    client_auth c(cfg, session);
    c.start();
    c.handle(service_accept{"ssh-userauth"}.encode(), 0);
    int n = 0;
    auto drain = [&] {
        for (auto ev = c.poll(); ev.type != client_auth_event_type::none; ev = c.poll()) {
            switch (ev.type) {
            case client_auth_event_type::prompt:
                if (++n % 4 == 0) {
                    c.cancel_prompt();
                } else {
                    std::vector<secret_bytes> r;
                    for (std::size_t i = 0; i < ev.prompts.size(); ++i)
                        r.emplace_back(as_bytes("x"));
                    c.answer_prompt(std::move(r));
                }
                break;
            case client_auth_event_type::sign:
                check(ev.identity != nullptr && ev.identity->agent);
                if (++n % 2 == 0) {
                    c.signature_failed("no");
                } else {
                    auto sig = fixed_key().sign(ev.algorithm, ev.data);
                    check(sig.has_value());
                    c.answer_signature(*sig);
                }
                break;
            case client_auth_event_type::banner:
                for (char ch : ev.text)
                    check(ch != '\x1b');
                break;
            default: break;
            }
        }
    };
    drain();
    for (const auto& m : split(in)) {
        c.handle(m, 0);
        drain();
    }
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

void write_seeds(const std::string& dir)
{
    using fuzz::join_messages;
    using fuzz::with_prefix;
    int n = 0;
    auto put = [&](const bytes& b) { fuzz::write_seed(dir, "seed-" + std::to_string(n++), b); };
    const bytes blob = fixed_key().public_part().blob();
    const bytes pk_query = request("alice", "publickey", [&](wire_writer& w) {
        w.boolean(false).string("ssh-ed25519").string(blob);
    });
    const bytes pk_signed = request("alice", "publickey", [&](wire_writer& w) {
        w.boolean(true).string("ssh-ed25519").string(blob).string(*fixed_key().sign("ssh-ed25519", as_bytes("x")));
    });
    const bytes pw = request("alice", "password", [](wire_writer& w) { w.boolean(false).string("pw"); });
    const bytes pw_change = request("alice", "password", [](wire_writer& w) { w.boolean(true).string("pw").string("new"); });
    const bytes kbd = request("alice", "keyboard-interactive", [](wire_writer& w) { w.string("").string("pam"); });
    bytes info_response;
    wire_writer(info_response).u8(61).u32(1).string("pw");
    bytes info_request;
    wire_writer(info_request).u8(60).string("name").string("instruction").string("").u32(1).string("Password: ").boolean(false);
    const bytes none = request("alice", "none");
    bytes failure;
    wire_writer(failure).u8(51).string("publickey,password,keyboard-interactive").boolean(false);
    bytes partial;
    wire_writer(partial).u8(51).string("password").boolean(true);
    bytes pk_ok;
    wire_writer(pk_ok).u8(60).string("ssh-ed25519").string(blob);
    bytes banner;
    wire_writer(banner).u8(53).string("Welcome\n").string("");
    bytes changereq;
    wire_writer(changereq).u8(60).string("Password expired").string("");

    // Mode 0: every message on its own.
    for (const bytes& m : {none, pk_query, pk_signed, pw, pw_change, kbd, info_response, info_request, failure, pk_ok,
                           banner, service_request{"ssh-userauth"}.encode(), service_accept{"ssh-userauth"}.encode(),
                           bytes{52}})
        put(with_prefix({0}, m));
    // Mode 1: agent replies (type 12 identities answer, 14 sign response, 5 failure).
    bytes ids{12};
    wire_writer(ids).u32(1).string(blob).string("alice@example");
    put(with_prefix({1}, ids));
    bytes sig{14};
    wire_writer(sig).string(*fixed_key().sign("ssh-ed25519", as_bytes("x")));
    put(with_prefix({1}, sig));
    put(with_prefix({1}, bytes{5}));
    // Mode 2: what clients send the server (lengths chosen so that the
    // "publickey,password" case, size % 3 == 0, occurs too).
    put(with_prefix({2}, join_messages({none, pk_query, pk_signed, pw})));
    put(with_prefix({2}, join_messages({none, kbd, info_response, info_response, info_response})));
    put(with_prefix({2}, join_messages({pw, pw_change, request("root", "password", [](wire_writer& w) {
                                            w.boolean(false).string("pw");
                                        }), none})));
    put(with_prefix({2}, join_messages({pk_signed, pw, pw})));
    // Mode 3: what servers send the client.
    put(with_prefix({3}, join_messages({banner, failure, pk_ok, partial, info_request, info_request, bytes{52}})));
    put(with_prefix({3}, join_messages({failure, failure, changereq, failure, failure})));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    fuzz::maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const byte_span rest(data + 1, size - 1);
    switch (data[0] & 3) {
    case 0: fuzz_messages(rest); break;
    case 1: fuzz_agent(rest); break;
    case 2: fuzz_server(rest); break;
    case 3: fuzz_client(rest); break;
    }
    return 0;
}
