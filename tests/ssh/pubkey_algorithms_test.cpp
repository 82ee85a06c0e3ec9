// PubkeyAcceptedAlgorithms with user certificates: the default is OpenSSH
// 9.2's (Debian's `ssh -G`), security keys included, and + - ^ and wildcards
// reach the certificate algorithms.
#include "common/auth/client_auth.hpp"
#include "ssh/algorithm_names.hpp"
#include "ssh/options.hpp"
#include "ssh/ssh_config.hpp"
#include "ssh_test_util.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using longhaul::test::scratch_dir;

namespace {

std::string pubkey_algorithms(const scratch_dir& home, const std::string& config)
{
    home.write(".ssh/config", config);
    auto env = test::test_environment(home.path(), home / "etc/ssh_config");
    auto opts = parse_command_line({"h"}, env);
    client_config cfg = opts.config;
    load_client_config(cfg, opts.request(), env, {});
    REQUIRE(cfg.pubkey_accepted_algorithms);
    return *cfg.pubkey_accepted_algorithms;
}

// Debian 12's `ssh -G somehost | grep pubkeyacceptedalgorithms` (OpenSSH
// 9.2p1).
constexpr const char* debian_default =
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
    "sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,"
    "ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
    "rsa-sha2-512,rsa-sha2-256";

} // namespace

TEST_CASE("PubkeyAcceptedAlgorithms: the default holds the certificate algorithms first")
{
    scratch_dir home;
    CHECK(pubkey_algorithms(home, "") == debian_default);
    CHECK(default_client_pubkey_algorithms() == debian_default);
    // The client_auth machine's own default is the same list.
    CHECK(default_client_pubkey_accepted_algorithms() == debian_default);
}

TEST_CASE("PubkeyAcceptedAlgorithms: + - ^ and patterns over certificate names")
{
    scratch_dir home;
    CHECK(pubkey_algorithms(home, "PubkeyAcceptedAlgorithms -*-cert-v01@openssh.com\n") ==
          "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,"
          "sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256");
    CHECK(pubkey_algorithms(home, "PubkeyAcceptedAlgorithms +ssh-rsa-cert-v01@openssh.com\n") ==
          std::string(debian_default) + ",ssh-rsa-cert-v01@openssh.com");
    CHECK(pubkey_algorithms(home, "PubkeyAcceptedAlgorithms ^rsa-sha2-256-cert-v01@openssh.com\n") ==
          "rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
          "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
          "sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,"
          "rsa-sha2-512-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,"
          "sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256");
    CHECK(pubkey_algorithms(home, "PubkeyAcceptedAlgorithms ssh-ed25519*\n") ==
          "ssh-ed25519,ssh-ed25519-cert-v01@openssh.com");
    CHECK(pubkey_algorithms(home, "PubkeyAcceptedAlgorithms ssh-ed25519-cert-v01@openssh.com,rsa-sha2-512\n") ==
          "ssh-ed25519-cert-v01@openssh.com,rsa-sha2-512");
    // Security keys and their certificates are kept.
    CHECK(pubkey_algorithms(home, "PubkeyAcceptedAlgorithms sk-ssh-ed25519-cert-v01@openssh.com,ssh-ed25519\n") ==
          "sk-ssh-ed25519-cert-v01@openssh.com,ssh-ed25519");
    CHECK(pubkey_algorithms(home, "PubkeyAcceptedAlgorithms sk-*\n") ==
          "sk-ssh-ed25519@openssh.com,sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,"
          "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com");
}
