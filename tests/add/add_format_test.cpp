#include "ssh/add/add_format.hpp"

#include "ssh/add/add_commands.hpp"

#include "common/keys/base64.hpp"
#include "common/keys/key_lines.hpp"
#include "common/wire.hpp"
#include <doctest/doctest.h>

#include <fstream>

using namespace longhaul;
using namespace longhaul::add;

namespace {

// A key line from tests/data (made by OpenSSH's ssh-keygen).
public_key data_key(const std::string& name)
{
    std::ifstream in(std::string(LONGHAUL_TEST_DATA) + "/keys/" + name);
    std::string line;
    std::getline(in, line);
    auto k = parse_public_key_line(line);
    REQUIRE(k.has_value());
    return k->key;
}

std::string data_text(const std::string& name)
{
    std::ifstream in(std::string(LONGHAUL_TEST_DATA) + "/keys/" + name);
    std::string line;
    std::getline(in, line);
    return line;
}

} // namespace

TEST_CASE("ssh-add format: -l and -L lines of plain keys")
{
    const public_key k = data_key("ed25519_plain_key.pub");
    agent::identity id;
    id.key_blob = k.blob();
    id.comment = "me@host";
    id.key = k;
    auto shown = identity_key(id);
    REQUIRE(shown.has_value());
    CHECK(key_type_label(*shown) == "ED25519");
    // ssh-keygen -l printed the .fp file: "256 SHA256:... comment (ED25519)".
    const std::string fp = data_text("ed25519_plain_key.fp");
    const std::string hash = fp.substr(4, fp.find(' ', 4) - 4);
    CHECK(fingerprint_line(*shown, "me@host", fingerprint_hash::sha256) == "256 " + hash + " me@host (ED25519)");
    CHECK(fingerprint_line(*shown, "c", fingerprint_hash::md5).rfind("256 MD5:", 0) == 0);
    CHECK(public_line(*shown, "me@host") == format_public_key(k) + " me@host");

    const public_key r = data_key("rsa2048_plain_key.pub");
    shown_key rs{r, std::nullopt};
    CHECK(key_type_label(rs) == "RSA");
    CHECK(fingerprint_line(rs, "x", fingerprint_hash::sha256).rfind("2048 SHA256:", 0) == 0);
}

TEST_CASE("ssh-add format: DSA and security keys, from the blob alone")
{
    agent::identity dsa;
    // string "ssh-dss", mpint p (a 1024-bit value: 0x00 0x80 then 127
    // bytes), then q, g, y (not looked at).
    wire_writer w(dsa.key_blob);
    w.string("ssh-dss");
    bytes p(129, 0x11);
    p[0] = 0x00;
    p[1] = 0x80;
    w.string(p).string(bytes{1}).string(bytes{2}).string(bytes{3});
    dsa.comment = "old";
    CHECK(!identity_key(dsa).has_value());
    const auto line = foreign_fingerprint_line(dsa, fingerprint_hash::sha256);
    REQUIRE(line.has_value());
    CHECK(*line == "1024 " + blob_fingerprint(dsa.key_blob, fingerprint_hash::sha256) + " old (DSA)");
    CHECK(foreign_public_line(dsa) == "ssh-dss " + base64_encode(dsa.key_blob) + " old");

    agent::identity sk;
    wire_writer(sk.key_blob).string("sk-ssh-ed25519@openssh.com").string(bytes(32, 7)).string("ssh:");
    sk.comment = "fido";
    CHECK(foreign_fingerprint_line(sk, fingerprint_hash::md5)->ends_with(" fido (ED25519-SK)"));
    CHECK(foreign_fingerprint_line(sk, fingerprint_hash::md5)->starts_with("256 MD5:"));

    agent::identity unknown;
    wire_writer(unknown.key_blob).string("ssh-unknown");
    CHECK(!foreign_fingerprint_line(unknown, fingerprint_hash::sha256).has_value());
    CHECK(!foreign_public_line(unknown).has_value());
    agent::identity truncated;
    wire_writer(truncated.key_blob).string("ssh-dss");
    CHECK(!foreign_fingerprint_line(truncated, fingerprint_hash::sha256).has_value());
}

TEST_CASE("ssh-add format: agent errors in ssh_err's words")
{
    CHECK(agent_error_text(errc::unsupported) == "agent refused operation");
    CHECK(agent_error_text(errc::connection_closed) == "communication with agent failed");
}

TEST_CASE("ssh-add default identities, in OpenSSH 9.2's order")
{
    CHECK(default_identity_files("/h") ==
          std::vector<std::string>{"/h/.ssh/id_rsa", "/h/.ssh/id_ecdsa", "/h/.ssh/id_ecdsa_sk", "/h/.ssh/id_ed25519",
                                   "/h/.ssh/id_ed25519_sk", "/h/.ssh/id_xmss", "/h/.ssh/id_dsa"});
}

TEST_CASE("ssh-add loads public keys as sshkey_load_public does")
{
    int e = 0;
    const std::string dir = std::string(LONGHAUL_TEST_DATA) + "/keys/";
    // The .pub file by the private key's name.
    auto viapub = load_public(dir + "ed25519_plain_key", e);
    REQUIRE(viapub.has_value());
    CHECK(viapub->key.key == data_key("ed25519_plain_key.pub"));
    auto direct = load_public(dir + "ed25519_plain_key.pub", e);
    REQUIRE(direct.has_value());
    CHECK(direct->key.key == viapub->key.key);
    CHECK(!direct->key.cert.has_value());
    CHECK(!load_public(dir + "no-such-key", e).has_value());
    CHECK(e == ENOENT);
}
