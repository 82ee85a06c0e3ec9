// Security keys in the agent core (OpenSSH 9.2's ssh-agent): the provider
// named by ssh-add's sk-provider constraint is checked as OpenSSH checks
// it (an sk key only; "internal" as given; otherwise its canonical path
// against -P, never over a session-bound connection), signatures go
// through the hook that reaches the provider, and a key of a web origin
// signs only SSH login requests and SSHSIG data. Debian's ssh-add and
// ssh-agent side by side: regress/ssh_agent_security_keys.sh.
#include "tests/agent/agent_test_util.hpp"
#include "tests/keys/sk_vectors.hpp"

#include <map>
#include <vector>

using namespace agent_test;

namespace {

openssh_security_key sk_key(std::string_view pub_b64)
{
    openssh_security_key k;
    k.key = longhaul::test::key_from_base64(pub_b64);
    k.flags = 0x01;
    k.key_handle = from_hex("a1a2a3");
    return k;
}

bytes add_sk(const openssh_security_key& k, std::optional<std::string> provider, bool twice = false)
{
    bytes b;
    wire_writer w(b);
    w.u8(provider ? add_id_constrained : add_identity);
    REQUIRE(encode_security_key(w, k, nullptr));
    w.string(std::string_view("skc"));
    for (int i = 0; i < (twice ? 2 : 1) && provider; ++i)
        w.u8(constrain_extension).string(sk_provider_extension).string(*provider);
    return b;
}

// A core whose log lines are kept and whose hooks are scripted: the file
// system knows `paths` (name -> canonical path), the "provider" answers
// with `answer` and records what it was asked.
struct sk_harness {
    explicit sk_harness(agent_settings s = {}) : settings(std::move(s))
    {
        log.to_function([this](log_level, std::string_view line) { lines.emplace_back(line); });
        security_key_hooks h;
        h.canonical_path = [this](const std::string& p, std::string& error) -> std::optional<std::string> {
            if (auto it = paths.find(p); it != paths.end())
                return it->second;
            error = "No such file or directory";
            return std::nullopt;
        };
        h.sign = [this](const security_key_identity& k, byte_span data,
                        const std::string& suffix) -> std::variant<bytes, std::string> {
            signed_with.push_back(k.provider);
            signed_data = to_bytes(data);
            notice_suffix = suffix;
            return answer;
        };
        core.set_security_key_hooks(std::move(h));
    }
    bool logged(std::string_view want) const
    {
        for (const auto& l : lines)
            if (l == want)
                return true;
        return false;
    }
    std::uint8_t type_of(byte_span body)
    {
        auto r = core.handle(body, conn, now);
        REQUIRE(!r.body.empty());
        return r.body[0];
    }

    fixed_random random;
    logger log{"agent-test", log_level::debug3};
    std::vector<std::string> lines;
    std::map<std::string, std::string> paths{{"/usr/lib/x86_64-linux-gnu/libsk.so", "/usr/lib/x86_64-linux-gnu/libsk.so"},
                                             {"/home/u/sk.so", "/home/u/sk.so"},
                                             {"rel/sk.so", "/usr/local/lib/sk.so"}};
    std::variant<bytes, std::string> answer = bytes{1, 2, 3};
    std::vector<std::string> signed_with;
    bytes signed_data;
    std::string notice_suffix;
    agent_settings settings;
    agent_core core{settings, random, [](const std::string&) { return false; }, log};
    connection_state conn;
    agent_clock::time_point now{std::chrono::seconds(1000)};
};

} // namespace

TEST_CASE("agent security keys: the provider checks of OpenSSH's process_add_identity")
{
    sk_harness h;
    const auto ed = sk_key(longhaul::test::sk_ed25519_pub);
    // "internal", in any case, is kept as given.
    CHECK(h.type_of(add_sk(ed, "INTERNAL")) == success);
    CHECK(h.logged("process_add_identity: internal provider"));
    CHECK(h.core.keys().identities().at(0).security_key()->provider == "INTERNAL");
    // A path is replaced by its canonical one, which -P must allow.
    CHECK(h.type_of(add_sk(ed, "rel/sk.so")) == success);
    CHECK(h.core.keys().size() == 1); // the same key, updated
    CHECK(h.core.keys().identities().at(0).security_key()->provider == "/usr/local/lib/sk.so");
    CHECK(h.type_of(add_sk(ed, "/home/u/sk.so")) == failure);
    CHECK(h.logged("Refusing add key: provider /home/u/sk.so not allowed"));
    CHECK(h.type_of(add_sk(ed, "/nonexistent.so")) == failure);
    CHECK(h.logged("failed provider \"/nonexistent.so\": realpath: No such file or directory"));
    // Twice in one message.
    CHECK(h.type_of(add_sk(ed, "internal", true)) == failure);
    // On a key that is not a security key.
    bytes plain = add_request(test_key(key_type::ed25519), nullptr, "plain");
    plain[0] = add_id_constrained;
    wire_writer(plain).u8(constrain_extension).string(sk_provider_extension).string(std::string_view("internal"));
    CHECK(h.type_of(plain) == failure);
    CHECK(h.logged("Cannot add provider: ED25519 is not an authenticator-hosted key"));
    // Without a provider the key is held, and cannot sign (the hook says why).
    const auto ec = sk_key(longhaul::test::sk_ecdsa_pub);
    CHECK(h.type_of(add_sk(ec, std::nullopt)) == success);
    CHECK(h.logged("process_add_identity: add sk-ecdsa-sha2-nistp256@openssh.com " +
                   std::string(longhaul::test::sk_ecdsa_fp) +
                   " \"skc\" (life: 0) (confirm: 0) (provider: none) (destination constraints: 0)"));
}

TEST_CASE("agent security keys: no provider added over a session-bound connection unless allowed")
{
    for (bool allowed : {false, true}) {
        agent_settings s;
        s.allow_remote_providers = allowed;
        sk_harness h(s);
        h.conn.bindings.emplace_back();
        const auto ed = sk_key(longhaul::test::sk_ed25519_pub);
        CHECK(h.type_of(add_sk(ed, "/usr/lib/x86_64-linux-gnu/libsk.so")) == (allowed ? success : failure));
        CHECK(h.logged("failed add of SK provider \"/usr/lib/x86_64-linux-gnu/libsk.so\": remote addition of "
                       "providers is disabled") == !allowed);
        // "internal" loads nothing the peer chose.
        CHECK(h.type_of(add_sk(ed, "internal")) == success);
    }
}

TEST_CASE("agent security keys: signatures come from the provider hook; its failure is the agent's")
{
    sk_harness h;
    const auto ed = sk_key(longhaul::test::sk_ed25519_pub);
    REQUIRE(h.type_of(add_sk(ed, "/usr/lib/x86_64-linux-gnu/libsk.so")) == success);
    auto r = h.core.handle(sign_req(ed.key.blob(), "data", 0), h.conn, h.now);
    REQUIRE(r.body.size() > 1);
    CHECK(r.body[0] == sign_response);
    wire_reader rr(byte_span(r.body).subspan(1));
    CHECK(to_bytes(rr.string()) == bytes{1, 2, 3});
    CHECK(h.signed_with == std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libsk.so"});
    CHECK(as_string_view(h.signed_data) == "data");
    CHECK(h.notice_suffix.empty());
    h.answer = std::string("device not found");
    CHECK(h.type_of(sign_req(ed.key.blob(), "data", 0)) == failure);
    CHECK(h.logged("process_sign_request2: sshkey_sign: device not found"));
}

TEST_CASE("agent security keys: a web origin's key signs SSH login requests and SSHSIG data only")
{
    // Application "https://example.com": not "ssh:...".
    openssh_security_key web;
    {
        bytes blob;
        wire_writer w(blob);
        const auto ed = longhaul::test::key_from_base64(longhaul::test::sk_ed25519_pub);
        wire_reader pub(ed.blob());
        pub.text();
        w.string(key_type_name(key_type::sk_ed25519)).string(pub.string()).string(std::string_view("https://example.com"));
        auto k = public_key::from_blob(blob);
        REQUIRE(k);
        web.key = *k;
        web.flags = 0x01;
        web.key_handle = from_hex("01");
    }
    bytes login;
    wire_writer(login)
        .string(bytes(32, 7))
        .u8(50)
        .string(std::string_view("alice"))
        .string(std::string_view("ssh-connection"))
        .string(std::string_view("publickey"))
        .boolean(true)
        .string(key_type_name(key_type::sk_ed25519))
        .string(web.key.blob());
    bytes sshsig = to_bytes(as_bytes(std::string_view("SSHSIG")));
    wire_writer(sshsig)
        .string(std::string_view("file"))
        .string(std::string_view{})
        .string(std::string_view("sha512"))
        .string(bytes(64, 1));
    for (bool restrict_websafe : {true, false}) {
        agent_settings s;
        s.restrict_websafe = restrict_websafe;
        sk_harness h(s);
        REQUIRE(h.type_of(add_sk(web, "/usr/lib/x86_64-linux-gnu/libsk.so")) == success);
        CHECK(h.type_of(sign_req(web.key.blob(), "random data", 0)) == (restrict_websafe ? failure : sign_response));
        CHECK(h.logged("web-origin key attempting to sign non-SSH message") == restrict_websafe);
        CHECK(h.type_of(sign_req(web.key.blob(), as_string_view(login), 0)) == sign_response);
        CHECK(h.type_of(sign_req(web.key.blob(), as_string_view(sshsig), 0)) == sign_response);
        // SSHSIG with something after it is not SSHSIG.
        bytes longer = sshsig;
        longer.push_back(0);
        CHECK(h.type_of(sign_req(web.key.blob(), as_string_view(longer), 0)) ==
              (restrict_websafe ? failure : sign_response));
        // Refused before the provider is asked.
        CHECK(h.signed_with.size() == (restrict_websafe ? 2u : 4u));
    }
}
