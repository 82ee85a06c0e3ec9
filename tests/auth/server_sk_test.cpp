// The server machine's own check of a security key's signature (no
// monitor): a software authenticator signs publickey requests with the
// flags each case needs, and sk_policy's requirements decide.
#include "common/auth/server_auth.hpp"

#include "common/crypto/hash.hpp"
#include "common/wire.hpp"
#include "tests/auth/auth_harness.hpp"
#include "tests/auth/server_driver.hpp"

#include <openssl/evp.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

// An Ed25519 FIDO authenticator in software: what it signs is
// H(application) || flags || counter || H(message) (PROTOCOL.u2f).
struct soft_authenticator {
    soft_authenticator()
    {
        EVP_PKEY* raw = nullptr;
        EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
        REQUIRE(ctx != nullptr);
        REQUIRE(EVP_PKEY_keygen_init(ctx) == 1);
        REQUIRE(EVP_PKEY_keygen(ctx, &raw) == 1);
        EVP_PKEY_CTX_free(ctx);
        pkey.reset(raw, EVP_PKEY_free);
        bytes pub(32);
        std::size_t len = pub.size();
        REQUIRE(EVP_PKEY_get_raw_public_key(raw, pub.data(), &len) == 1);
        bytes blob;
        wire_writer(blob).string("sk-ssh-ed25519@openssh.com").string(pub).string(application);
        auto k = public_key::from_blob(blob);
        REQUIRE(k);
        key = *k;
    }

    bytes sign(byte_span message, std::uint8_t flags) const
    {
        bytes signed_data;
        wire_writer(signed_data)
            .raw(digest(hash_alg::sha256, as_bytes(std::string_view(application))))
            .u8(flags)
            .u32(counter)
            .raw(digest(hash_alg::sha256, message));
        bytes sig(64);
        std::size_t len = sig.size();
        EVP_MD_CTX* ctx = EVP_MD_CTX_new();
        REQUIRE(EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, pkey.get()) == 1);
        REQUIRE(EVP_DigestSign(ctx, sig.data(), &len, signed_data.data(), signed_data.size()) == 1);
        EVP_MD_CTX_free(ctx);
        bytes blob;
        wire_writer(blob).string("sk-ssh-ed25519@openssh.com").string(sig).u8(flags).u32(counter);
        return blob;
    }

    std::string application = "ssh:";
    std::uint32_t counter = 7;
    std::shared_ptr<EVP_PKEY> pkey;
    public_key key;
};

// A signed publickey request for alice over server_driver's session id.
bytes signed_request(const soft_authenticator& a, std::uint8_t flags)
{
    userauth_publickey_data pk;
    pk.has_signature = true;
    pk.algorithm = std::string(a.key.type_name());
    pk.key_blob = a.key.blob();
    userauth_request req{"alice", "ssh-connection", "publickey", pk};
    const bytes session_id{1, 2, 3, 4};
    std::get<userauth_publickey_data>(req.data).signature = a.sign(publickey_signed_data(session_id, req), flags);
    return req.encode();
}

std::map<std::string, test_user> alice_with(const public_key& key, sk_requirements r)
{
    std::map<std::string, test_user> u;
    u["alice"].authorized.push_back(key);
    u["alice"].security_key = r;
    return u;
}

// A driver past the service request, alice allowed `key` under `r`.
std::unique_ptr<server_driver> driver_for(const public_key& key, sk_requirements r)
{
    server_auth_settings s;
    s.pubkey_accepted_algorithms = "sk-ssh-ed25519@openssh.com";
    auto d = std::make_unique<server_driver>(s, alice_with(key, r));
    d->feed(service_request{"ssh-userauth"}.encode());
    return d;
}

} // namespace

TEST_CASE("security keys: the machine checks the signed flags against the key's requirements")
{
    const soft_authenticator a;
    const std::string key_text = "ED25519-SK " + a.key.fingerprint_sha256();
    struct {
        sk_requirements required;
        std::uint8_t flags;
        const char* unmet; // nullptr: accepted
    } cases[] = {
        {{true, false}, 0x01, nullptr},
        {{true, false}, 0x05, nullptr},
        {{true, false}, 0x00, "user presence (authenticator touch)"},
        {{true, false}, 0x04, "user presence (authenticator touch)"},
        {{false, false}, 0x00, nullptr},
        {{true, true}, 0x01, "user verification"},
        {{true, true}, 0x05, nullptr},
        {{false, true}, 0x04, nullptr},
        {{false, true}, 0x00, "user verification"},
    };
    for (const auto& c : cases) {
        CAPTURE(int(c.flags));
        CAPTURE(c.required.presence);
        CAPTURE(c.required.verification);
        auto d = driver_for(a.key, c.required);
        d->feed(signed_request(a, c.flags));
        CHECK(d->authenticated == (c.unmet == nullptr));
        if (c.unmet)
            CHECK(d->logged("public key " + key_text + " signature for alice from 192.0.2.7 port 40022 rejected: " +
                           c.unmet + " requirement not met "));
    }
}

TEST_CASE("security keys: a signature for another application or with other flags does not verify")
{
    soft_authenticator a;
    // The flags are signed: a request whose blob claims the touch over a
    // signature made without it is refused as a bad signature.
    {
        auto d = driver_for(a.key, {});
        bytes req = signed_request(a, 0x00);
        // The flags byte sits 5 bytes before the end (flags, counter).
        req[req.size() - 5] = 0x01;
        d->feed(req);
        CHECK_FALSE(d->authenticated);
    }
    // The key's application is part of what is signed.
    {
        auto d = driver_for(a.key, {});
        a.application = "ssh:other";
        d->feed(signed_request(a, 0x01));
        CHECK_FALSE(d->authenticated);
    }
}
