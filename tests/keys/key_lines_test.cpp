#include "common/keys/key_lines.hpp"

#include "common/keys/base64.hpp"
#include "key_fixtures.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

std::string ed25519_key_text()
{
    // "ssh-ed25519 AAAA..." from the fixture, without its comment.
    const auto line = first_line(fixture("ed25519_plain_key.pub"));
    const auto second_space = line.find(' ', line.find(' ') + 1);
    return line.substr(0, second_space);
}

} // namespace

TEST_CASE("key_lines: .pub lines")
{
    const auto text = ed25519_key_text();
    auto k = parse_public_key_line(text + " user@host\n");
    REQUIRE(k.has_value());
    CHECK(k->comment == "user@host");
    CHECK(k->options.empty());
    CHECK(format_public_key(k->key) == text);
    CHECK(format_public_key_line(k->key, "user@host") == text + " user@host");

    // Whitespace: leading blanks, tabs between fields, CRLF, no comment,
    // comments with inner spaces.
    CHECK(parse_public_key_line("  \t" + text + "\r\n")->comment.empty());
    auto tabbed = text;
    tabbed[tabbed.find(' ')] = '\t';
    CHECK(parse_public_key_line(tabbed + "\tsome  comment  \n")->comment == "some  comment");

    CHECK(parse_public_key_line("").error() == errc::invalid_format);
    CHECK(parse_public_key_line("# comment").error() == errc::invalid_format);
    CHECK(parse_public_key_line("ssh-ed25519").error() == errc::invalid_format);
    CHECK(parse_public_key_line("ssh-ed25519 AAAA*bad").error() == errc::invalid_format);
    CHECK(parse_public_key_line("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5").error() == errc::invalid_format);
    CHECK(parse_public_key_line("ssh-dss AAAAB3NzaC1kc3M=").error() == errc::unsupported);
    // The type named must be the blob's.
    const auto blob = text.substr(text.find(' ') + 1);
    CHECK(parse_public_key_line("ssh-rsa " + blob).error() == errc::key_type_mismatch);
    // Base64 must be strict: unpadded or with a bit flipped into the
    // padding bits is not accepted.
    CHECK(parse_public_key_line("ssh-ed25519 " + blob.substr(0, blob.size() - 1)).error() == errc::invalid_format);
}

TEST_CASE("key_lines: blank and comment lines")
{
    CHECK(is_blank_or_comment(""));
    CHECK(is_blank_or_comment("   \t\r\n"));
    CHECK(is_blank_or_comment("  # a comment"));
    CHECK_FALSE(is_blank_or_comment("ssh-ed25519 AAAA"));
}

TEST_CASE("key_lines: authorized_keys options")
{
    const auto key = ed25519_key_text();
    CHECK(parse_authorized_keys_line(key + " c")->options.empty());

    const std::string opts = R"(command="echo a, b \"quoted\"",no-pty,from="10.0.0.1,host.example" )";
    auto line = parse_authorized_keys_line(opts + key + " the comment");
    REQUIRE(line.has_value());
    CHECK(line->options == R"(command="echo a, b \"quoted\"",no-pty,from="10.0.0.1,host.example")");
    CHECK(line->comment == "the comment");
    CHECK(line->key.type() == key_type::ed25519);

    auto parsed = parse_key_options(line->options);
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->size() == 3);
    CHECK((*parsed)[0].name == "command");
    CHECK((*parsed)[0].value.value() == R"(echo a, b "quoted")");
    CHECK((*parsed)[1].name == "no-pty");
    CHECK_FALSE((*parsed)[1].value.has_value());
    CHECK((*parsed)[2].value.value() == "10.0.0.1,host.example");

    // Spaces inside quotes do not end the options field.
    auto spaced = parse_authorized_keys_line(R"(environment="A=b c",restrict )" + key);
    REQUIRE(spaced.has_value());
    CHECK(spaced->options == R"(environment="A=b c",restrict)");

    // Unterminated quote, options without a key, key with bad base64.
    CHECK_FALSE(parse_authorized_keys_line(R"(command="echo )" + key).has_value());
    CHECK_FALSE(parse_authorized_keys_line("no-pty").has_value());
    CHECK_FALSE(parse_authorized_keys_line("no-pty ssh-ed25519 AAAA!").has_value());
    CHECK(parse_authorized_keys_line("ssh-ed25519 AAAA!").error() == errc::invalid_format);

    CHECK_FALSE(parse_key_options("").has_value());
    CHECK_FALSE(parse_key_options("a,,b").has_value());
    CHECK_FALSE(parse_key_options("a,").has_value());
    CHECK_FALSE(parse_key_options(R"(a="x)").has_value());
    CHECK_FALSE(parse_key_options("a=x").has_value());
    CHECK_FALSE(parse_key_options(R"(a="x"b)").has_value());
    CHECK_FALSE(parse_key_options("a b").has_value());
}

TEST_CASE("key_lines: known_hosts lines")
{
    const auto key = ed25519_key_text();
    auto plain = parse_known_hosts_line("host.example,10.0.0.1 " + key + " a comment");
    REQUIRE(plain.has_value());
    CHECK(plain->marker == known_hosts_marker::none);
    CHECK(plain->hosts == "host.example,10.0.0.1");
    CHECK(plain->comment == "a comment");
    CHECK(format_known_hosts_line(*plain) == "host.example,10.0.0.1 " + key + " a comment");

    auto ca = parse_known_hosts_line("@cert-authority *.example " + key);
    REQUIRE(ca.has_value());
    CHECK(ca->marker == known_hosts_marker::cert_authority);
    CHECK(ca->hosts == "*.example");
    CHECK(format_known_hosts_line(*ca) == "@cert-authority *.example " + key);

    auto revoked = parse_known_hosts_line("@revoked * " + key);
    REQUIRE(revoked.has_value());
    CHECK(revoked->marker == known_hosts_marker::revoked);

    auto hashed = parse_known_hosts_line("|1|ZIlIt0o05x92Vek7Nlxiv5m7i9w=|L4B2W3slY9CgU6xY7DI5tMhyCqY= " + key);
    REQUIRE(hashed.has_value());
    CHECK(hashed_host_matches(hashed->hosts, "example.com"));

    CHECK_FALSE(parse_known_hosts_line("@unknown host " + key).has_value());
    CHECK_FALSE(parse_known_hosts_line("@revoked " + key).has_value());
    CHECK_FALSE(parse_known_hosts_line("host.example").has_value());
    CHECK_FALSE(parse_known_hosts_line("host.example ssh-ed25519").has_value());
    CHECK_FALSE(parse_known_hosts_line("# host.example " + key).has_value());
}

TEST_CASE("key_lines: hashed host names match ssh-keygen -H")
{
    // Made with ssh-keygen -H from known_hosts lines for "example.com" and
    // "[host.example]:2222".
    CHECK(hashed_host_matches("|1|ZIlIt0o05x92Vek7Nlxiv5m7i9w=|L4B2W3slY9CgU6xY7DI5tMhyCqY=", "example.com"));
    CHECK(hashed_host_matches("|1|djNeJvqS7gpJxYPex6p9D13gq3U=|VGrvDAGyjsaoJMzZXtxqxW5g4qw=", "[host.example]:2222"));
    CHECK_FALSE(hashed_host_matches("|1|ZIlIt0o05x92Vek7Nlxiv5m7i9w=|L4B2W3slY9CgU6xY7DI5tMhyCqY=", "example.org"));
    CHECK_FALSE(hashed_host_matches("|1|ZIlIt0o05x92Vek7Nlxiv5m7i9w=|L4B2W3slY9CgU6xY7DI5tMhyCqY=", "EXAMPLE.COM"));

    const auto salt = base64_decode("ZIlIt0o05x92Vek7Nlxiv5m7i9w=").value();
    CHECK(hash_known_host("example.com", salt).value() ==
          "|1|ZIlIt0o05x92Vek7Nlxiv5m7i9w=|L4B2W3slY9CgU6xY7DI5tMhyCqY=");
    CHECK(hash_known_host("example.com", bytes(19)).error() == errc::invalid_argument);

    system_random rng;
    const auto fresh = hash_known_host("host", rng);
    CHECK(hashed_host_matches(fresh, "host"));
    CHECK(parse_hashed_host(fresh)->salt.size() == 20);

    for (const char* bad : {"", "|1|", "|2|ZIlIt0o05x92Vek7Nlxiv5m7i9w=|L4B2W3slY9CgU6xY7DI5tMhyCqY=",
                            "|1|ZIlIt0o05x92Vek7Nlxiv5m7i9w=", "|1|ZIlIt0o05x92Vek7Nlxiv5m7i9w=|AAAA",
                            "|1|AAAA|L4B2W3slY9CgU6xY7DI5tMhyCqY=", "|1|ZIlIt0o05x92Vek7Nlxiv5m7i9w|L4B2W3slY9CgU6xY7DI5tMhyCqY="}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_hashed_host(bad).has_value());
        CHECK_FALSE(hashed_host_matches(bad, "example.com"));
    }
}
