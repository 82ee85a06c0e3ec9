#include "ssh/tokens.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

std::string error_of(const std::function<void()>& fn)
{
    try {
        fn();
    } catch (const expansion_error& e) {
        return e.what();
    }
    return "<no error>";
}

const env_lookup test_env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "HOME")
        return std::string("/home/alice");
    if (name == "EMPTY")
        return std::string();
    return std::nullopt;
};

} // namespace

TEST_CASE("tokens: percent_expand")
{
    const token_map t = {{'h', "host"}, {'p', "22"}, {'r', "bob"}};
    CHECK(percent_expand("%r@%h:%p", t) == "bob@host:22");
    CHECK(percent_expand("100%% %h", t) == "100% host");
    CHECK(percent_expand("", t) == "");
    CHECK(percent_expand("${HOME}", t) == "${HOME}"); // no ${} here
    CHECK(error_of([&] { percent_expand("%x", t); }) == "vdollar_percent_expand: unknown key %x\npercent_expand: failed");
    CHECK(error_of([&] { percent_expand("abc%", t); }) == "vdollar_percent_expand: invalid format\npercent_expand: failed");
}

TEST_CASE("tokens: percent_dollar_expand and dollar_expand")
{
    const token_map t = {{'u', "alice"}};
    CHECK(percent_dollar_expand("${HOME}/.ssh/%u", t, test_env) == "/home/alice/.ssh/alice");
    CHECK(percent_dollar_expand("a${EMPTY}b $HOME", t, test_env) == "ab $HOME");
    CHECK(error_of([&] { percent_dollar_expand("${NOPE}", t, test_env); }) ==
          "vdollar_percent_expand: env var ${NOPE} has no value\ninvalid environment variable expansion");
    CHECK(error_of([&] { percent_dollar_expand("${}", t, test_env); }) ==
          "vdollar_percent_expand: zero-length environment variable\npercent_dollar_expand: failed");
    CHECK(error_of([&] { percent_dollar_expand("${HOME", t, test_env); }) ==
          "vdollar_percent_expand: environment variable 'HOME' missing closing '}'\npercent_dollar_expand: failed");
    std::string err;
    CHECK(*dollar_expand("x${HOME}", test_env, err) == "x/home/alice");
    CHECK(*dollar_expand("%h", test_env, err) == "%h");
    CHECK_FALSE(dollar_expand("${NOPE}", test_env, err));
    CHECK(err == "vdollar_percent_expand: env var ${NOPE} has no value");
}

TEST_CASE("tokens: tilde_expand")
{
    const home_lookup homes = [](const std::string& user) -> std::optional<std::string> {
        if (user == "bob")
            return std::string("/home/bob/");
        return std::nullopt;
    };
    CHECK(tilde_expand("~/.ssh/id", "/home/alice", homes) == "/home/alice/.ssh/id");
    CHECK(tilde_expand("~", "/home/alice", homes) == "/home/alice/");
    CHECK(tilde_expand("~bob/x", "/home/alice", homes) == "/home/bob/x");
    // "~name" without a slash is the user's own home plus "name", as in OpenSSH.
    CHECK(tilde_expand("~bob", "/home/alice", homes) == "/home/alice/bob");
    CHECK(tilde_expand("/abs/~", "/home/alice", homes) == "/abs/~");
    CHECK(tilde_expand("rel", "/home/alice", homes) == "rel");
    CHECK(tilde_expand("~/x", "/", homes) == "/x");
    CHECK(error_of([&] { tilde_expand("~nobody/x", "/home/alice", homes); }) ==
          "tilde_expand: No such user nobody");
}

TEST_CASE("tokens: connection tokens and %C")
{
    // sha1("vm" "myhost.example" "2022" "bob"), as OpenSSH 9.2 computes it.
    CHECK(connection_hash("vm", "myhost.example", "2022", "bob") == "997f177dbaa4915d397ecc07d56f0d395851fa77");
    connection_tokens c;
    c.conn_hash = "C";
    c.short_host = "L";
    c.uid = "i";
    c.key_alias = "k";
    c.local_host = "l";
    c.host_arg = "n";
    c.port = "p";
    c.home_dir = "d";
    c.remote_host = "h";
    c.remote_user = "r";
    c.local_user = "u";
    CHECK(percent_expand("%C%L%i%k%l%n%p%d%h%r%u", c.map()) == "CLiklnpdhru");
}
