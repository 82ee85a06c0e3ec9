#include "ssh/escape_command.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

const env_lookup empty_env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };

escape_command parse_line(std::string_view line, bool permit_local = false)
{
    return parse_escape_command(line, permit_local, empty_env);
}

using kind = escape_command::kind;
using dir = escape_command::direction;

} // namespace

TEST_CASE("~C: empty lines and help")
{
    CHECK(parse_line("").what == kind::none);
    CHECK(parse_line("   \n").what == kind::none);
    CHECK(parse_line("-").what == kind::none);
    CHECK(parse_line("h").what == kind::help);
    CHECK(parse_line(" -H").what == kind::help);
    CHECK(parse_line("?").what == kind::help);
    CHECK(escape_command_help(false).size() == 7);
    CHECK(escape_command_help(false)[0] == "Commands:");
    CHECK(escape_command_help(true).back() == "      !args                                  Execute local command");
}

TEST_CASE("~C: adding forwards, with or without the dash")
{
    auto c = parse_line("-L 8080:db:5432");
    REQUIRE(c.what == kind::add_forward);
    CHECK(c.dir == dir::local);
    CHECK(c.spec.listen_port == 8080);
    CHECK(c.spec.connect_host == "db");
    CHECK(c.spec.connect_port == 5432);
    c = parse_line("L127.0.0.1:8080:db:5432\n");
    REQUIRE(c.what == kind::add_forward);
    CHECK(c.spec.listen_host == "127.0.0.1");
    c = parse_line("-D 1080");
    REQUIRE(c.what == kind::add_forward);
    CHECK(c.dir == dir::dynamic);
    CHECK(c.spec.is_dynamic());
    // -R: to a target, port 0, or a port alone (reverse SOCKS).
    c = parse_line("-R 0:localhost:22");
    REQUIRE(c.what == kind::add_forward);
    CHECK(c.dir == dir::remote);
    CHECK(c.spec.listen_port == 0);
    c = parse_line("-R 9000");
    REQUIRE(c.what == kind::add_forward);
    CHECK(c.spec.is_dynamic());
    c = parse_line("-L /tmp/a.sock:/tmp/b.sock");
    REQUIRE(c.what == kind::add_forward);
    CHECK(c.spec.listen_path == "/tmp/a.sock");
}

TEST_CASE("~C: cancelling forwards")
{
    auto c = parse_line("-KL 8080");
    REQUIRE(c.what == kind::cancel_forward);
    CHECK(c.dir == dir::local);
    CHECK(c.spec.listen_port == 8080);
    CHECK(!c.spec.listen_host);
    c = parse_line("KR localhost:9000");
    REQUIRE(c.what == kind::cancel_forward);
    CHECK(c.dir == dir::remote);
    CHECK(c.spec.listen_host == "localhost");
    c = parse_line("-KD [::1]:1080");
    REQUIRE(c.what == kind::cancel_forward);
    CHECK(c.dir == dir::dynamic);
    CHECK(c.spec.listen_host == "::1");
    c = parse_line("-KL /tmp/a.sock");
    REQUIRE(c.what == kind::cancel_forward);
    CHECK(c.spec.listen_path == "/tmp/a.sock");
}

TEST_CASE("~C: OpenSSH's messages for bad lines")
{
    auto error = [](std::string_view line, bool permit_local = false) {
        auto c = parse_line(line, permit_local);
        return c.what == kind::error ? c.text : std::string("(no error)");
    };
    CHECK(error("-X") == "Invalid command.");
    CHECK(error("-K") == "Invalid command.");
    CHECK(error("-KX 1") == "Invalid command.");
    CHECK(error("!ls") == "Invalid command."); // PermitLocalCommand no
    CHECK(error("-L 0:x") == "Bad local forwarding specification.");
    CHECK(error("-L 0:host:22") == "Bad local forwarding specification."); // port 0 only for -R
    CHECK(error("-L 80:host:22 extra") == "Bad local forwarding specification.");
    CHECK(error("-D 1:2:3") == "Bad local forwarding specification.");
    CHECK(error("-R nonsense") == "Bad remote forwarding specification.");
    CHECK(error("-R 70000:h:1") == "Bad remote forwarding specification.");
    CHECK(error("-KL x:y:z") == "Bad forwarding close specification.");
    CHECK(error("-KR 0") == "Bad forwarding close specification.");
    CHECK(error("-L [::1:80:h:1") == "Bad local forwarding specification.");
}

TEST_CASE("~C: !command only with PermitLocalCommand")
{
    auto c = parse_line("!echo hi", true);
    REQUIRE(c.what == kind::local_command);
    CHECK(c.text == "echo hi");
    CHECK(parse_line("!echo hi", false).what == kind::error);
}
