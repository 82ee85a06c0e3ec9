// PKCS#11 modules in the agent core (ssh-add -s / -e, as OpenSSH 9.2's
// agent answers them): the module's canonical path allowed by -P and never
// loaded over a forwarded agent unless -O allow-remote-pkcs11, its keys
// added with their labels (the path when a key has none) and the
// request's constraints, signatures through the module with the algorithm
// the flags ask for, and removal of every key of the module as it is
// unloaded. The modules are scripted hooks here; Debian's ssh-add and
// ssh-agent side by side with SoftHSM: regress/pkcs11.sh.
#include "tests/agent/agent_test_util.hpp"

#include "common/auth/agent_protocol.hpp"
#include "ssh/agent/agent_constraints.hpp"

#include <map>
#include <vector>

using namespace agent_test;

namespace {

const std::string module = "/usr/lib/x86_64-linux-gnu/pkcs11/token.so";

struct card_harness : harness {
    explicit card_harness(agent_settings s = {}) : harness(s)
    {
        security_key_hooks fs;
        // As realpath(3), which reads a C string.
        fs.canonical_path = [](const std::string& path, std::string& error) -> std::optional<std::string> {
            const std::string p = path.c_str();
            if (p == "token.so" || p == module)
                return module;
            if (p == "/home/u/token.so")
                return p;
            error = "No such file or directory";
            return std::nullopt;
        };
        core.set_security_key_hooks(std::move(fs));
        pkcs11_hooks h;
        h.load = [this](const std::string& path, const secret_bytes& pin) -> std::optional<std::vector<token_key>> {
            loads.push_back(path);
            pins.emplace_back(pin.span().begin(), pin.span().end());
            if (loaded || pins.back() != "123456")
                return std::nullopt;
            loaded = true;
            return token_keys;
        };
        h.unload = [this](const std::string& path) {
            unloads.push_back(path);
            return std::exchange(loaded, false);
        };
        h.sign = [this](const std::string& path, const public_key& key, std::string_view alg,
                        byte_span) -> std::optional<bytes> {
            signs.push_back(path + " " + std::string(alg) + " " + std::string(key.type_name()));
            bytes blob;
            wire_writer(blob).string(alg).string(std::string_view("sig"));
            return blob;
        };
        core.set_pkcs11_hooks(std::move(h));
    }

    std::vector<token_key> token_keys{{test_key(key_type::rsa).public_part(), "rsa key"},
                                      {test_key(key_type::ecdsa_p256).public_part(), ""}};
    bool loaded = false;
    std::vector<std::string> loads, unloads, signs, pins;
};

bytes card(bool add, const std::string& provider, std::string_view pin, const key_constraints& c = {})
{
    const secret_bytes framed = encode_update_card(add, provider, as_bytes(pin), c);
    // Without the length prefix, as the core gets a message.
    return bytes(framed.span().begin() + 4, framed.span().end());
}

} // namespace

TEST_CASE("agent PKCS#11: ssh-add -s adds the module's keys, -e removes them and unloads it")
{
    card_harness h;
    CHECK(h.type_of(card(true, "token.so", "123456")) == success);
    REQUIRE(h.loads == std::vector<std::string>{module});
    CHECK(h.pins == std::vector<std::string>{"123456"});
    auto ids = h.list();
    REQUIRE(ids.size() == 2);
    CHECK(ids[0].comment == "rsa key");
    CHECK(ids[1].comment == module); // no label: the module's path
    // A signature goes through the module, RSA with the flags' algorithm.
    const bytes rsa_blob = test_key(key_type::rsa).public_part().blob();
    auto r = h.call(sign_req(rsa_blob, "data", rsa_sha2_256));
    REQUIRE(!r.body.empty());
    CHECK(r.body[0] == sign_response);
    CHECK(h.call(sign_req(ids[1].key_blob, "data", 0)).body[0] == sign_response);
    CHECK(h.signs == std::vector<std::string>{module + " rsa-sha2-256 ssh-rsa", module + " ecdsa-sha2-nistp256 ecdsa-sha2-nistp256"});
    // Loaded already: refused, the keys unchanged.
    CHECK(h.type_of(card(true, module, "123456")) == failure);
    CHECK(h.list().size() == 2);
    // A key added from a file stays when the module goes.
    CHECK(h.type_of(add_request(test_key(key_type::ed25519), nullptr, "file key")) == success);
    CHECK(h.type_of(card(false, "token.so", "")) == success);
    CHECK(h.unloads == std::vector<std::string>{module});
    ids = h.list();
    REQUIRE(ids.size() == 1);
    CHECK(ids[0].comment == "file key");
    // Not loaded: refused.
    CHECK(h.type_of(card(false, module, "")) == failure);
}

TEST_CASE("agent PKCS#11: the module's path, -P and a forwarded agent")
{
    card_harness h;
    CHECK(h.type_of(card(true, "/nonexistent.so", "123456")) == failure);
    CHECK(h.type_of(card(true, "/home/u/token.so", "123456")) == failure);
    CHECK(h.loads.empty()); // nothing loaded that -P does not allow
    CHECK(h.type_of(card(false, "/nonexistent.so", "")) == failure);
    // A path with a NUL inside (OpenSSH reads a C string) or past the bound
    // is a malformed request: nothing is looked up or loaded.
    const std::string with_nul = module + std::string(1, '\0') + "x";
    CHECK(h.type_of(card(true, with_nul, "123456")) == failure);
    CHECK(h.type_of(card(false, with_nul, "")) == failure);
    CHECK(h.type_of(card(true, "/" + std::string(longhaul::agent::max_provider_path, 'a'), "123456")) == failure);
    // A wrong PIN: the module loads no keys.
    CHECK(h.type_of(card(true, module, "000000")) == failure);
    CHECK(h.list().empty());

    for (bool allowed : {false, true}) {
        agent_settings s;
        s.allow_remote_providers = allowed;
        card_harness f(s);
        f.conn.bindings.emplace_back();
        CHECK(f.type_of(card(true, module, "123456")) == (allowed ? success : failure));
        CHECK(f.loads.size() == (allowed ? 1u : 0u));
    }
    agent_settings wide;
    wide.allowed_providers = "/home/u/*";
    card_harness w(wide);
    CHECK(w.type_of(card(true, "/home/u/token.so", "123456")) == success);
}

TEST_CASE("agent PKCS#11: constraints apply to the module's keys; an sk-provider constraint is refused")
{
    card_harness h;
    key_constraints c;
    c.lifetime_seconds = 60;
    c.confirm = true;
    CHECK(h.type_of(card(true, module, "123456", c)) == success);
    const auto& stored = h.core.keys().identities();
    REQUIRE(stored.size() == 2);
    CHECK(stored[0].confirm);
    REQUIRE(stored[0].deadline);
    CHECK(*stored[0].deadline == h.now + std::chrono::seconds(60));
    // The user refuses: no signature.
    h.allow = false;
    CHECK(h.type_of(sign_req(stored[0].blob(), "data", rsa_sha2_512)) == failure);
    CHECK(h.signs.empty());
    // Past the lifetime the keys are gone.
    h.now += std::chrono::seconds(61);
    CHECK(h.list().empty());

    card_harness k;
    key_constraints sk;
    sk.sk_provider = "internal";
    CHECK(k.type_of(card(true, module, "123456", sk)) == failure);
    CHECK(k.loads.empty());
}
