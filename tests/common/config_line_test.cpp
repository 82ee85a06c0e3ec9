#include "common/config_line.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

TEST_CASE("config_line: keyword forms and quoting")
{
    std::string err;
    auto l = lex_config_line("  Port 2222", err);
    REQUIRE(l);
    CHECK(l->keyword == "port");
    CHECK(l->args == std::vector<std::string>{"2222"});
    l = lex_config_line("HostName=example.org", err);
    CHECK(l->keyword == "hostname");
    CHECK(l->args[0] == "example.org");
    l = lex_config_line("User = \"bob smith\"  # comment", err);
    CHECK(l->args == std::vector<std::string>{"bob smith"});
    l = lex_config_line("ProxyCommand ssh -W '%h:%p' \"a\\\"b\" jump", err);
    CHECK(l->args == std::vector<std::string>{"ssh", "-W", "%h:%p", "a\"b", "jump"});
    l = lex_config_line("   # only a comment", err);
    REQUIRE(l);
    CHECK(l->empty);
    l = lex_config_line("", err);
    CHECK(l->empty);
    l = lex_config_line("Port 22\r", err);
    CHECK(l->args[0] == "22");
}

TEST_CASE("config_line: keywords as OpenSSH's strdelim finds them")
{
    std::string err;
    auto l = lex_config_line("=Port 22", err);
    REQUIRE(l);
    CHECK(l->keyword == "port");
    CHECK(l->args == std::vector<std::string>{"22"});
    l = lex_config_line("  = Port 22", err);
    CHECK(l->keyword == "port");
    l = lex_config_line("\"Port\" 22", err);
    CHECK(l->keyword == "port");
    l = lex_config_line("Po\"rt\"=22", err);
    CHECK(l->keyword == "port");
    // Lines OpenSSH ignores: an empty second token, an unterminated quote.
    CHECK(lex_config_line("==Port 22", err)->empty);
    CHECK(lex_config_line("\"Port 22", err)->empty);
    l = lex_config_line("ProxyCommand =  nc \"%h\" %p # x", err);
    CHECK(l->value == "nc \"%h\" %p # x");
    CHECK(config_line_keyword("Foo \"x") == "foo");
    CHECK_FALSE(config_line_keyword("  # c"));
}

TEST_CASE("config_line: backslashes as OpenSSH's argv_split reads them")
{
    auto args = [](std::string_view s) { return split_arguments(s).value(); };
    CHECK(args("a\\\\b") == std::vector<std::string>{"a\\b"});
    CHECK(args("a\\b") == std::vector<std::string>{"a\\b"});
    CHECK(args("a\\ b c") == std::vector<std::string>{"a b", "c"});
    CHECK(args("\"a\\ b\"") == std::vector<std::string>{"a\\ b"});
    CHECK(args("\"a\\'b\" 'a\\\"b'") == std::vector<std::string>{"a'b", "a\"b"});
    CHECK(args("a\\\"b a\\'b") == std::vector<std::string>{"a\"b", "a'b"});
    CHECK(args("ab\\") == std::vector<std::string>{"ab\\"});
    CHECK_FALSE(split_arguments("\"ab\\\""));
}

TEST_CASE("config_line: errors use OpenSSH's words")
{
    std::string err;
    CHECK_FALSE(lex_config_line("Port", err));
    CHECK(err == "no argument after keyword \"port\"");
    CHECK_FALSE(lex_config_line("User \"unterminated", err));
    CHECK(err == "invalid quotes");
    CHECK_FALSE(lex_config_line("Port #22", err));
}

TEST_CASE("config_line: values")
{
    CHECK(parse_yes_no("yes").value());
    CHECK_FALSE(parse_yes_no("no").value());
    CHECK_FALSE(parse_yes_no("maybe"));
    CHECK(parse_time_interval("90").value() == 90);
    CHECK(parse_time_interval("1h30m").value() == 5400);
    CHECK(parse_time_interval("2w").value() == 1209600);
    CHECK_FALSE(parse_time_interval("5x"));
    CHECK_FALSE(parse_time_interval(""));
    CHECK_FALSE(parse_time_interval("99999999999"));
}
