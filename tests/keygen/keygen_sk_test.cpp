// ssh-keygen's listings of security-key ("sk") certificates, against what
// Debian 12's ssh-keygen (OpenSSH 9.2p1) printed for the same files, and
// the file names of -K.
#include "ssh/keygen/keygen_cert.hpp"
#include "ssh/keygen/keygen_sk.hpp"

#include <algorithm>

#include "tests/keys/sk_vectors.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::keygen;

namespace {

// `ssh-keygen -L -f ided-vr-cert.pub`, without its first line (the file name).
constexpr std::string_view sk_ed25519_vr_cert_listing = R"(        Type: sk-ssh-ed25519-cert-v01@openssh.com user certificate
        Public key: ED25519-SK-CERT SHA256:GS7YBn5Luasq2jRcp+SxWHYw+XIjB9lGNxHHblobnS8
        Signing CA: ED25519 SHA256:RHg2FEuwMJDkB86GxB0n2AgZNixf3NyjLqHISfINMGQ (using ssh-ed25519)
        Key ID: "vrcert"
        Serial: 0
        Valid: forever
        Principals: 
                root
        Critical Options: 
                verify-required
        Extensions: 
                permit-X11-forwarding
                permit-agent-forwarding
                permit-port-forwarding
                permit-pty
                permit-user-rc
)";

// `ssh-keygen -L -f idec-cert.pub`, without its first line (the file name).
constexpr std::string_view sk_ecdsa_cert_listing = R"(        Type: sk-ecdsa-sha2-nistp256-cert-v01@openssh.com user certificate
        Public key: ECDSA-SK-CERT SHA256:OS1ntT1LA6sGUZYkDUxpxWGiMZ59jZLqUFkknOOtx7o
        Signing CA: ED25519 SHA256:RHg2FEuwMJDkB86GxB0n2AgZNixf3NyjLqHISfINMGQ (using ssh-ed25519)
        Key ID: "eccert"
        Serial: 0
        Valid: forever
        Principals: 
                alice
        Critical Options: (none)
        Extensions: 
                permit-X11-forwarding
                permit-agent-forwarding
                permit-port-forwarding
                permit-pty
                permit-user-rc
)";

// `ssh-keygen -L -f ca-skca-cert.pub`, without its first line (the file name).
constexpr std::string_view sk_ca_signed_cert_listing = R"(        Type: ssh-ed25519-cert-v01@openssh.com user certificate
        Public key: ED25519-CERT SHA256:RHg2FEuwMJDkB86GxB0n2AgZNixf3NyjLqHISfINMGQ
        Signing CA: ED25519-SK SHA256:GS7YBn5Luasq2jRcp+SxWHYw+XIjB9lGNxHHblobnS8 (using sk-ssh-ed25519@openssh.com)
        Key ID: "skca"
        Serial: 0
        Valid: forever
        Principals: 
                bob
        Critical Options: (none)
        Extensions: 
                permit-X11-forwarding
                permit-agent-forwarding
                permit-port-forwarding
                permit-pty
                permit-user-rc
)";

} // namespace

TEST_CASE("-L lists sk certificates as OpenSSH does")
{
    struct {
        std::string_view line, listing;
    } cases[] = {
        {longhaul::test::sk_ed25519_vr_cert, sk_ed25519_vr_cert_listing},
        {longhaul::test::sk_ecdsa_cert, sk_ecdsa_cert_listing},
        {longhaul::test::sk_ca_signed_cert, sk_ca_signed_cert_listing},
    };
    for (const auto& c : cases) {
        CAPTURE(c.listing);
        const std::string type = c.listing.find("sk-ecdsa") != std::string_view::npos
                                     ? "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com"
                                     : c.listing.find("sk-ssh-ed25519-cert") != std::string_view::npos
                                           ? "sk-ssh-ed25519-cert-v01@openssh.com"
                                           : "ssh-ed25519-cert-v01@openssh.com";
        auto cert = read_certificate(type + " " + std::string(c.line) + " comment\n");
        REQUIRE(cert);
        CHECK(describe_certificate(*cert, fingerprint_hash::sha256) == c.listing);
    }
}

TEST_CASE("-K file names: the application and the user id as OpenSSH names them")
{
    const auto uid = [](std::string_view s, std::size_t pad = 32) {
        bytes b(s.begin(), s.end());
        b.resize(std::max(pad, b.size()), 0);
        return b;
    };
    // The default user id (all zeros) adds nothing; "ssh:" and "ssh://" go.
    CHECK(resident_suffix("ssh:", uid("")) == "");
    CHECK(resident_suffix("ssh:work", uid("")) == "work");
    CHECK(resident_suffix("ssh://host", uid("")) == "host");
    CHECK(resident_suffix("ssh:work", uid("alice")) == "work_alice");
    CHECK(resident_suffix("ssh:", uid("alice")) == "alice");
    // A user id that could name another directory, or would be escaped, in
    // hex (all its bytes up to the trailing zeros).
    CHECK(resident_suffix("ssh:", uid("../x")) == "2e2e2f78");
    CHECK(resident_suffix("ssh:a", uid("a/b")) == "a_612f62");
    CHECK(resident_suffix("ssh:", uid("a\\b")) == "615c62");
    CHECK(resident_suffix("ssh:", uid("a\tb")) == "610962");
    // Text stops at a NUL, as "%.*s" prints it.
    CHECK(resident_suffix("ssh:", bytes{'a', 'b', 0, 'c', 0, 0}) == "ab");
    CHECK(resident_suffix("ssh:", bytes{}) == "");
}
