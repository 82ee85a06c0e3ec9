// ssh-keysign's pieces: what it reads from ssh_config (the system file
// only), the request check it signs under, and ssh's side of running it
// (against stand-in helpers that answer well, badly or not at all).
#include "common/auth/keysign_protocol.hpp"
#include "common/auth/messages.hpp"
#include "common/keys/private_key.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "common/wire.hpp"
#include "ssh/keysign/keysign_config.hpp"
#include "ssh/keysign_runner.hpp"
#include "tests/ssh/ssh_test_util.hpp"

#include <algorithm>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

keysign_settings settings_from(const std::string& system_config, std::vector<std::string>* errors = nullptr)
{
    auto env = keysign_environment(system_config);
    return read_keysign_settings(env, [errors](log_level level, std::string_view line) {
        if (errors != nullptr && level <= log_level::error)
            errors->emplace_back(line);
    });
}

// What ssh asks ssh-keysign to sign: a hostbased request from `chost`
// for `luser` with `key`.
bytes hostbased_data(const public_key& key, std::string chost, std::string luser, std::string alg = "ssh-ed25519",
                     std::size_t session_id_size = 32)
{
    userauth_request req{"bob", "ssh-connection", "hostbased",
                         userauth_hostbased_data{std::move(alg), key.blob(), std::move(chost), std::move(luser), {}}};
    return publickey_signed_data(bytes(session_id_size, 7), req);
}

// An executable stand-in for ssh-keysign: /bin/sh running `script`.
std::string helper(const scratch_dir& dir, const std::string& name, const std::string& script)
{
    const std::string path = dir.write(name, "#!/bin/sh\n" + script);
    ::chmod(path.c_str(), 0755);
    return path;
}

} // namespace

TEST_CASE("ssh-keysign reads EnableSSHKeysign from the system file only")
{
    scratch_dir d;
    CHECK_FALSE(settings_from(d / "missing").enabled);
    CHECK_FALSE(settings_from(d.write("off", "Host *\n  HostbasedAuthentication yes\n")).enabled);
    const auto on = settings_from(d.write("on", "Host *\n  EnableSSHKeysign yes\n  FingerprintHash md5\n"));
    CHECK(on.enabled);
    CHECK(on.fingerprint == fingerprint_hash::md5);
    // "Host *" matches the empty name the helper reads for.
    CHECK(settings_from(d.write("star", "Host *\nEnableSSHKeysign yes\n")).enabled);
    CHECK_FALSE(settings_from(d.write("named", "Host example.org\nEnableSSHKeysign yes\n")).enabled);
    // A relative Include is the system directory's, never the user's.
    d.write("extra.conf", "EnableSSHKeysign yes\n");
    CHECK(settings_from(d.write("inc", "Include extra.conf\n")).enabled);
    std::vector<std::string> errors;
    CHECK_THROWS(settings_from(d.write("tilde", "Include ~/.ssh/evil\n"), &errors));
    const auto env = keysign_environment(d / "on");
    CHECK(env.user_config.empty());
    CHECK(env.system_dir == d.path());
}

TEST_CASE("ssh-keysign signs only a hostbased request for its connection's name and user")
{
    auto k = private_key::generate(key_type::ed25519);
    REQUIRE(k);
    const public_key& key = k->public_part();
    std::string why;
    auto ok = check_keysign_data(hostbased_data(key, "client.example.", "al"), "client.example", "al", why);
    REQUIRE(ok);
    CHECK(ok->algorithm == "ssh-ed25519");
    CHECK(ok->key_blob == key.blob());
    CHECK(ok->key == key);
    CHECK_FALSE(ok->certificate);
    // Each wrong field is refused without a parse error.
    const auto refused = [&](const bytes& data, const char* host = "client.example", const char* user = "al") {
        std::string reason = "unset";
        const bool r = !check_keysign_data(data, host, user, reason);
        return r && reason.empty();
    };
    CHECK(refused(hostbased_data(key, "client.example", "al")));   // no trailing dot
    CHECK(refused(hostbased_data(key, "client.example..", "al"))); // two
    CHECK(refused(hostbased_data(key, "other.example.", "al")));
    CHECK(refused(hostbased_data(key, "client.example.", "root")));
    CHECK(refused(hostbased_data(key, "client.example.", "al", "ecdsa-sha2-nistp256")));
    CHECK(refused(hostbased_data(key, "client.example.", "al", "ssh-ed25519-cert-v01@openssh.com")));
    CHECK(refused(hostbased_data(key, "client.example.", "al", "no-such-alg")));
    CHECK(refused(hostbased_data(key, "client.example.", "al", "ssh-ed25519", 31)));
    CHECK_FALSE(refused(hostbased_data(key, ".", "al"), "")); // an empty name and its dot
    CHECK(refused(hostbased_data(key, ".", "al"), "x"));
    {
        bytes d = hostbased_data(key, "client.example.", "al");
        d.push_back(0); // trailing data
        CHECK(refused(d));
    }
    {
        userauth_request pk{"bob", "ssh-connection", "publickey", userauth_publickey_data{}};
        CHECK_FALSE(check_keysign_data(publickey_signed_data(bytes(32, 1), pk), "client.example", "al", why));
    }
    // A field that cannot be read says which, in OpenSSH's words.
    const bytes full = hostbased_data(key, "client.example.", "al");
    CHECK_FALSE(check_keysign_data(byte_span(full.data(), 2), "client.example", "al", why));
    CHECK(why == "parse session ID: incomplete message");
    CHECK_FALSE(check_keysign_data(byte_span(full.data(), 36), "client.example", "al", why));
    CHECK(why == "parse type: incomplete message");
    CHECK_FALSE(check_keysign_data(byte_span(full.data(), full.size() - 1), "client.example", "al", why));
    CHECK(why == "parse luser: incomplete message");
    bytes with_nul = hostbased_data(key, std::string("client.example.\0x", 17), "al");
    CHECK_FALSE(check_keysign_data(with_nul, "client.example", "al", why));
    CHECK(why == "parse hostname: invalid format");
}

TEST_CASE("keysign messages: frames, lengths, algorithms")
{
    const bytes m = encode_keysign_request(3, bytes{1, 2, 3});
    CHECK(m == bytes{0, 0, 0, 12, 2, 0, 0, 0, 3, 0, 0, 0, 3, 1, 2, 3});
    const std::uint8_t big[4] = {0, 4, 0, 1};
    CHECK_FALSE(keysign_frame_length(big));
    const std::uint8_t max[4] = {0, 4, 0, 0};
    CHECK(keysign_frame_length(max) == 256u * 1024);
    // What the helper signs with, for a request's algorithm.
    CHECK(host_key_signature_algorithm("rsa-sha2-512-cert-v01@openssh.com") == "rsa-sha2-512");
    CHECK(host_key_signature_algorithm("ssh-ed25519") == "ssh-ed25519");
    CHECK_FALSE(host_key_type_for_algorithm("none"));
}

TEST_CASE("ssh runs ssh-keysign: the reply, and each way it can fail")
{
    scratch_dir d;
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    const bytes data{9, 8, 7};
    std::vector<std::string> lines;
    logger log("ssh", log_level::debug3);
    log.to_function([&](log_level, std::string_view l) { lines.emplace_back(l); });
    const auto logged = [&](const std::string& text) {
        return std::find(lines.begin(), lines.end(), text) != lines.end();
    };

    SUBCASE("a good helper: the request on stdin, the connection on fd 3, the signature back")
    {
        // Checks fd 3 is a socket, saves the request, answers
        // (len 9) 2 (string 4) "sig!".
        const std::string h = helper(d, "good", "[ -S /proc/self/fd/3 ] || exit 3\ncat > '" + (d / "request") +
                                                    "'\nprintf '\\000\\000\\000\\011\\002\\000\\000\\000\\004sig!'\n");
        auto sig = run_ssh_keysign(h, sv[0], data, log);
        INFO(lines.size());
        REQUIRE(sig);
        CHECK(*sig == bytes{'s', 'i', 'g', '!'});
        const std::string req = read_text_file(d / "request");
        CHECK(bytes(req.begin(), req.end()) == encode_keysign_request(3, data));
    }
    SUBCASE("not installed")
    {
        CHECK_FALSE(run_ssh_keysign(d / "missing", sv[0], data, log));
        CHECK(logged("ssh_keysign: not installed: No such file or directory"));
    }
    SUBCASE("exits without a reply")
    {
        CHECK_FALSE(run_ssh_keysign(helper(d, "quiet", "exit 255\n"), sv[0], data, log));
        CHECK(logged("ssh_keysign: no reply"));
    }
    SUBCASE("replies, then exits non-zero")
    {
        const std::string h =
            helper(d, "status", "cat >/dev/null\nprintf '\\000\\000\\000\\011\\002\\000\\000\\000\\004sig!'\nexit 7\n");
        CHECK_FALSE(run_ssh_keysign(h, sv[0], data, log));
        CHECK(logged("ssh_keysign: exited with status 7"));
    }
    SUBCASE("a wrong version, a short body, a length over the bound")
    {
        CHECK_FALSE(run_ssh_keysign(helper(d, "v3", "printf '\\000\\000\\000\\001\\003'\n"), sv[0], data, log));
        CHECK(logged("ssh_keysign: bad version"));
        CHECK_FALSE(run_ssh_keysign(helper(d, "short", "printf '\\000\\000\\000\\003\\002\\000\\000'\n"), sv[0],
                                    data, log));
        CHECK(logged("ssh_keysign: buffer error: incomplete message"));
        CHECK_FALSE(run_ssh_keysign(helper(d, "huge", "printf '\\177\\000\\000\\000'\n"), sv[0], data, log));
        CHECK(logged("ssh_msg_recv: read: bad msg_len 2130706432"));
        CHECK(logged("ssh_keysign: no reply"));
    }
    SUBCASE("a helper that never answers is stopped")
    {
        CHECK_FALSE(run_ssh_keysign(helper(d, "hang", "exec sleep 30\n"), sv[0], data, log,
                                    std::chrono::milliseconds(1000)));
        CHECK(logged("ssh_keysign: no reply after 1 s; stopped"));
    }
    ::close(sv[0]);
    ::close(sv[1]);
}
