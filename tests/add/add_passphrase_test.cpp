#include "ssh/add/add_passphrase.hpp"

#include <doctest/doctest.h>

using namespace longhaul::add;

TEST_CASE("ssh-add passphrase route: OpenSSH's read_passphrase(RP_ALLOW_STDIN)")
{
    // A terminal and no display: the terminal.
    CHECK(!choose_passphrase_route(nullptr, nullptr, nullptr, "/bin/ap", true).askpass);
    // No terminal and no display: standard input (readpassphrase).
    CHECK(!choose_passphrase_route(nullptr, nullptr, nullptr, "/bin/ap", false).askpass);
    CHECK(!choose_passphrase_route("", "", nullptr, "/bin/ap", false).askpass);
    // Input that is not a terminal with a display: askpass.
    auto r = choose_passphrase_route(":0", nullptr, nullptr, "/bin/ap", false);
    CHECK(r.askpass);
    CHECK(r.program == "/bin/ap");
    CHECK(choose_passphrase_route(nullptr, "wayland-0", nullptr, nullptr, false).program == "/usr/bin/ssh-askpass");
    // A terminal wins over a display unless askpass is preferred or forced.
    CHECK(!choose_passphrase_route(":0", nullptr, nullptr, "/bin/ap", true).askpass);
    CHECK(choose_passphrase_route(":0", nullptr, "prefer", "/bin/ap", true).askpass);
    CHECK(!choose_passphrase_route(nullptr, nullptr, "prefer", "/bin/ap", true).askpass);
    CHECK(choose_passphrase_route(nullptr, nullptr, "force", "/bin/ap", true).askpass);
    CHECK(choose_passphrase_route(nullptr, nullptr, "FORCE", "/bin/ap", true).askpass);
    CHECK(!choose_passphrase_route(":0", nullptr, "never", "/bin/ap", false).askpass);
}
