// Security-key files on the client machine: the key is offered from the
// file's public half, the record (key handle, flags) is read after PK_OK,
// with the passphrase prompt for an encrypted file, and the signature is
// asked for with a `sign` event carrying the record (the program's
// middleware signs), as OpenSSH 9.2's ssh does. Key files from
// tests/keys/sk_vectors.hpp (made by OpenSSH 9.2p1's ssh-keygen).
#include "common/auth/client_auth.hpp"

#include "tests/auth/auth_harness.hpp"
#include "tests/keys/sk_vectors.hpp"

#include "common/keys/base64.hpp"
#include "common/wire.hpp"

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

// A key file in a directory of its own, removed with the object.
struct temp_key_file {
    std::filesystem::path dir;
    std::filesystem::path path;
    explicit temp_key_file(std::string_view contents)
    {
        dir = std::filesystem::temp_directory_path() / ("lh-client-sk-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        path = dir / "id_ed25519_sk";
        std::ofstream(path, std::ios::binary) << contents;
    }
    ~temp_key_file() { std::filesystem::remove_all(dir); }
};

public_key sk_pub()
{
    auto blob = base64_decode(sk_ed25519_pub);
    REQUIRE(blob);
    auto k = public_key::from_blob(*blob);
    REQUIRE(k);
    return std::move(*k);
}

} // namespace

TEST_CASE("security-key file: offered, passphrase after PK_OK, signed through a sign event with its record")
{
    temp_key_file file(sk_ed25519_private_encrypted);
    const public_key pub = sk_pub();
    auth_pair p;
    p.client_config.password_authentication = false;
    p.client_config.kbd_interactive_authentication = false;
    p.server_config.settings.pubkey_accepted_algorithms += ",sk-ssh-ed25519@openssh.com";
    p.users["alice"].authorized.push_back(pub);
    client_identity id = identity_from_key_file(file.path, true);
    REQUIRE(id.key);
    CHECK(*id.key == pub); // from the file's clear header: no passphrase yet
    p.client_config.identities.push_back(std::move(id));
    p.on_prompt = [](const client_auth_event&) { return std::vector<std::string>{"longhaul-test"}; };
    std::shared_ptr<const openssh_security_key> seen;
    std::string alg;
    p.on_sign = [&](const client_auth_event& ev) -> std::optional<bytes> {
        seen = ev.security_key;
        alg = ev.algorithm;
        CHECK(ev.agent_flags == 0);
        return std::nullopt; // the authenticator said no
    };
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.client_logged("Offering public key: " + file.path.string() + " " + describe_key(pub) + " explicit"));
    CHECK(p.client_logged("Server accepts key: " + file.path.string() + " " + describe_key(pub) + " explicit"));
    REQUIRE(p.prompts.size() == 1);
    CHECK(p.prompts[0].prompts[0].text == "Enter passphrase for key '" + file.path.string() + "': ");
    REQUIRE(seen);
    CHECK(seen->key == pub);
    CHECK(seen->flags == sk_flag_user_presence);
    CHECK_FALSE(seen->key_handle.empty());
    CHECK(alg == "sk-ssh-ed25519@openssh.com");
    CHECK(p.client_logged("sign_and_send_pubkey: signing failed for ED25519-SK \"" + file.path.string() +
                          "\": agent refused operation"));
    CHECK_FALSE(p.client_authenticated);
}

TEST_CASE("security-key file: the answered signature goes into the USERAUTH_REQUEST as is")
{
    temp_key_file file(sk_ed25519_private);
    const public_key pub = sk_pub();
    auth_pair p;
    p.client_config.password_authentication = false;
    p.client_config.kbd_interactive_authentication = false;
    p.server_config.settings.pubkey_accepted_algorithms += ",sk-ssh-ed25519@openssh.com";
    p.users["alice"].authorized.push_back(pub);
    p.client_config.identities.push_back(identity_from_key_file(file.path, false));
    // A blob of the right form; the server's verification fails, which is
    // not what this checks.
    bytes blob;
    wire_writer(blob).string("sk-ssh-ed25519@openssh.com").string(bytes(64, 1)).u8(1).u32(9);
    p.on_sign = [&](const client_auth_event& ev) -> std::optional<bytes> {
        CHECK(ev.security_key);
        return blob;
    };
    p.start();
    p.run();
    INFO(p.dump_logs());
    CHECK(p.prompts.empty()); // unencrypted: no passphrase
    bool sent = false;
    for (const auto& m : p.to_server) {
        auto r = userauth_request::decode(m);
        if (!r)
            continue;
        if (auto* pk = std::get_if<userauth_publickey_data>(&r->data); pk && pk->has_signature) {
            CHECK(pk->algorithm == "sk-ssh-ed25519@openssh.com");
            CHECK(pk->signature == blob);
            sent = true;
        }
    }
    CHECK(sent);
}

TEST_CASE("security keys are in the client's default PubkeyAcceptedAlgorithms")
{
    const std::string def = default_client_pubkey_accepted_algorithms();
    CHECK(def.find("sk-ssh-ed25519@openssh.com") != std::string::npos);
    CHECK(def.find("sk-ecdsa-sha2-nistp256@openssh.com") != std::string::npos);
    CHECK(def.find("sk-ssh-ed25519-cert-v01@openssh.com") != std::string::npos);
    CHECK(def.find("sk-ecdsa-sha2-nistp256-cert-v01@openssh.com") != std::string::npos);
}
