#include "ssh/escape.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {
std::string run(escape_filter& f, std::string_view in, std::vector<escape_action>& acts)
{
    bytes out;
    f.feed(as_bytes(in), out, acts);
    return std::string(out.begin(), out.end());
}
} // namespace

TEST_CASE("escape: sequences only at the start of a line")
{
    escape_filter f('~');
    std::vector<escape_action> acts;
    CHECK(run(f, "ls ~.\r", acts) == "ls ~.\r");
    CHECK(acts.empty());
    CHECK(run(f, "~.", acts).empty());
    REQUIRE(acts.size() == 1);
    CHECK(acts[0] == escape_action::disconnect);
}

TEST_CASE("escape: ~~ sends one tilde, unknown commands send both, split input works")
{
    escape_filter f('~');
    std::vector<escape_action> acts;
    CHECK(run(f, "~~x\n", acts) == "~x\n");
    CHECK(run(f, "~", acts).empty());
    CHECK(run(f, "q", acts) == "~q");
    CHECK(run(f, "\n~", acts) == "\n");
    CHECK(run(f, "?", acts).empty());
    CHECK(acts.back() == escape_action::help);
    CHECK(run(f, "\r~\x1a", acts) == "\r");
    CHECK(acts.back() == escape_action::suspend);
    CHECK(run(f, "\r~#~R", acts) == "\r");
    // As in OpenSSH, a handled escape leaves the line start in place: ~R is recognised too.
    CHECK(acts.back() == escape_action::rekey);
    CHECK(acts[acts.size() - 2] == escape_action::list_forwardings);
}

TEST_CASE("escape: EscapeChar none and control characters")
{
    escape_filter none(-1);
    std::vector<escape_action> acts;
    CHECK(run(none, "~.", acts) == "~.");
    CHECK(acts.empty());
    CHECK(parse_escape_char("none") == -1);
    CHECK(parse_escape_char("^]") == 0x1d);
    CHECK(parse_escape_char("%") == '%');
    CHECK(parse_escape_char("ab") == -2);
    CHECK(escape_char_name(0x1d) == "^]");
    escape_filter f(0x1d);
    CHECK(run(f, "\x1d.", acts).empty());
    CHECK(acts.back() == escape_action::disconnect);
}

TEST_CASE("escape: ~V lowers the log level and ~v raises it, as in OpenSSH")
{
    escape_filter f('~');
    std::vector<escape_action> acts;
    CHECK(run(f, "~V~v", acts).empty());
    REQUIRE(acts.size() == 2);
    CHECK(acts[0] == escape_action::less_verbose);
    CHECK(acts[1] == escape_action::more_verbose);
}

TEST_CASE("escape: OpenSSH's help text and echoes")
{
    escape_filter f('~');
    const std::string with = f.help_text(true);
    const std::string without = f.help_text(false);
    CHECK(with.find(" ~C   - open a command line\r\n") != std::string::npos);
    CHECK(without.find("~C") == std::string::npos);
    CHECK(with.find(" ~.   - terminate connection (and any multiplexed sessions)\r\n") != std::string::npos);
    CHECK(with.find(" ~V/v - decrease/increase verbosity (LogLevel)\r\n") != std::string::npos);
    CHECK(with.find(" ~^Z  - suspend ssh\r\n") != std::string::npos);
    CHECK(with.find(" ~~   - send the escape character by typing it twice\r\n") != std::string::npos);
    CHECK(escape_echo(escape_action::list_forwardings, '~') == "~#\r\n");
    CHECK(escape_echo(escape_action::help, '%') == "%?\r\n");
    CHECK(escape_echo(escape_action::send_break, '~') == "~B\r\n");
    CHECK(escape_echo(escape_action::command_line, '~').empty());
}
