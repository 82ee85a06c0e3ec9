#include "sshd/auth_info.hpp"

#include "common/keys/key_lines.hpp"
#include "tests/counting_random.hpp"
#include "tests/sshd/sshd_test_util.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

const std::string auth_info_certs = LONGHAUL_TEST_DATA "/certs/";

// "type base64" of a .pub or -cert.pub file written by ssh-keygen: what
// OpenSSH's sshkey_format_text() writes for the key (no comment).
std::string first_two_fields(const std::string& file)
{
    const std::string text = read_whole_file(auth_info_certs + file);
    const auto first = text.find(' ');
    const auto second = text.find_first_of(" \n", first + 1);
    REQUIRE(second != std::string::npos);
    return text.substr(0, second);
}

} // namespace

TEST_CASE("auth_info: one line per method, as OpenSSH's auth2_update_session_info writes it")
{
    auto key = parse_public_key_line(read_whole_file(auth_info_certs + "user_ed25519.pub"));
    REQUIRE(key);
    CHECK(auth_info_line("publickey", "", &key->key, nullptr) == "publickey " + first_two_fields("user_ed25519.pub") + "\n");
    // A certificate is written, not the key it certifies.
    auto cert = parse_certificate_line(read_whole_file(auth_info_certs + "user_ed25519-cert.pub"));
    REQUIRE(cert);
    CHECK(auth_info_line("publickey", "", &cert->key(), &*cert) ==
          "publickey " + first_two_fields("user_ed25519-cert.pub") + "\n");
    CHECK(auth_info_line("password", "", nullptr, nullptr) == "password\n");
    // keyboard-interactive names its device, PAM's in OpenSSH's monitor.
    CHECK(auth_info_line("keyboard-interactive", "pam", nullptr, nullptr) == "keyboard-interactive/pam\n");
    CHECK(auth_info_line("none", "", nullptr, nullptr) == "none\n");
    // Another key type: RSA's blob, re-encoded as OpenSSH writes it.
    auto rsa = parse_public_key_line(read_whole_file(auth_info_certs + "user_rsa.pub"));
    REQUIRE(rsa);
    CHECK(auth_info_line("publickey", "", &rsa->key, nullptr) == "publickey " + first_two_fields("user_rsa.pub") + "\n");
}

TEST_CASE("auth_info: the file is new, 0600, the caller's, and named as OpenSSH's mkstemp names it")
{
    temp_dir dir;
    const std::string prefix = dir.file("sshauth.");
    const std::string text = "publickey ssh-ed25519 AAAA\npassword\n";
    system_random rng;
    std::string error;
    auto path = write_auth_info_file(text, rng, error, prefix);
    REQUIRE_MESSAGE(path, error);
    CHECK(path->size() == prefix.size() + auth_info_random_chars);
    CHECK(path->compare(0, prefix.size(), prefix) == 0);
    for (char c : path->substr(prefix.size()))
        CHECK(std::isalnum(static_cast<unsigned char>(c)));
    struct stat st {};
    REQUIRE(::lstat(path->c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(st.st_uid == ::geteuid());
    CHECK(read_file(*path) == text);
    // The default prefix is OpenSSH's.
    CHECK(auth_info_prefix == "/tmp/sshauth.");
}

TEST_CASE("auth_info: a name someone already holds (a file, a symlink) is never used or followed")
{
    temp_dir dir;
    const std::string prefix = dir.file("sshauth.");
    std::string error;
    // The names one "random" stream gives, in order (each call goes on
    // from where the last one stopped).
    counting_random names(7);
    std::string suffix[3];
    for (auto& s : suffix) {
        auto p = write_auth_info_file("", names, error, dir.file("probe."));
        REQUIRE(p);
        s = p->substr(dir.file("probe.").size());
    }
    // The same stream again: the first name is taken by the first call,
    // so the second call goes on to the next.
    counting_random first(7);
    auto taken = write_auth_info_file("first\n", first, error, prefix);
    REQUIRE(taken);
    CHECK(*taken == prefix + suffix[0]);
    counting_random again(7);
    auto second = write_auth_info_file("second\n", again, error, prefix);
    REQUIRE(second);
    CHECK(*second == prefix + suffix[1]);
    CHECK(read_file(*taken) == "first\n");
    // A symlink planted on the third name is skipped, never followed: its
    // target is not created.
    REQUIRE(::symlink(dir.file("target").c_str(), (prefix + suffix[2]).c_str()) == 0);
    counting_random third(7);
    auto path = write_auth_info_file("third\n", third, error, prefix);
    REQUIRE(path);
    CHECK(*path != prefix + suffix[2]);
    CHECK(read_file(*path) == "third\n");
    CHECK(::access(dir.file("target").c_str(), F_OK) != 0);
}

TEST_CASE("auth_info: an unusable directory gives an error and leaves nothing behind")
{
    system_random rng;
    std::string error;
    auto path = write_auth_info_file("password\n", rng, error, "/nonexistent-longhaul-dir/sshauth.");
    CHECK_FALSE(path);
    CHECK(error.rfind("mkstemp: ", 0) == 0);
}
